import APRS

/// Moving a station between servers (``StationArchive``): the export every owner may take
/// (`POST /v1/export`, `aprs-cloud stations CALL --export FILE`) and its import into another database
/// (`aprs-cloud import FILE`).
extension Database {
  /// How far ahead of the importing server's clock a time in an imported archive may be, ms (a server whose
  /// clock ran a little ahead): 1 h.
  public static let importClockSkewMs: Int64 = 3_600_000

  /// Everything of `address` (any case) that an archive carries, read in one snapshot; nil when the station is
  /// not registered.
  public func exportStation(_ address: String) throws(StoreError) -> StationArchive? {
    let station = address.canonicalAddress
    return try readTransaction { () throws(StoreError) -> StationArchive? in
      guard let settings = try stationSettings(station) else { return nil }
      return StationArchive(
        station: station,
        claim: try stationClaim(station).claim.map {
          ArchivedClaim(keyHash: $0.keyHash, claimedAt: $0.claimedAt)
        }, settings: settings, subscriptions: try subscriptions(of: station),
        readMarkers: try readMarkers(station: station, changedAfter: .min),
        entries: try recentMessages(station: station, limit: StationArchive.maximumEntries))
    }
  }

  /// Imports `archive` into this database in ONE `BEGIN IMMEDIATE` transaction: the station (registered at
  /// `now`, with no devices), settings, subscriptions (their ids kept), read markers and entries, each entry under
  /// its own `timestamp`, so a client's sync cursor from the old server goes on working. Imported messages are
  /// neither pushed nor ACKed; the station's cursor is set past them. A send that was still in flight is imported
  /// as `expired` (the old server's schedule does not move here). A read marker past the newest entry is taken as
  /// the newest entry.
  ///
  /// The station ends with no more entries than its retention keeps here: each ring is trimmed as a store trims it
  /// (`trimRing`: `ringSize` a ring, or for the station's own messages its `untilPulled` `max`, at most
  /// `maxUnpulledPerStation`); the older entries are left out (counted in ``StationImport/dropped``, not recorded
  /// as evicted unpulled: they were never this server's to push).
  ///
  /// The archive's claim is only a key hash whoever wrote the document chose: it comes along only `withClaim`
  /// (the operator vouches for the document), and then `unproven` with the import's time as its seniority, noted
  /// in the audit trail; otherwise the station is imported unclaimed.
  /// - Throws: ``StoreError/invalidArgument(_:)`` when the station is registered here already, an entry's
  ///   timestamp is taken by another station's message, or a time in the archive (an entry's timestamp, the
  ///   claim brought along) is later than `now` + ``importClockSkewMs``: the timestamps are the whole server's
  ///   cursor sequence, and one from the future would move every later message's there (nothing is written).
  @discardableResult
  public func importStation(_ archive: StationArchive, withClaim: Bool = false, now: Int64) throws(StoreError)
    -> StationImport
  {
    let latest = now + Self.importClockSkewMs
    let claim = withClaim ? archive.claim : nil
    let times =
      archive.entries.map { ("entry timestamp", $0.timestamp) }
      + (claim.map { [("claimedAt", $0.claimedAt)] } ?? [])
    if let (what, time) = times.first(where: { $0.1 > latest }) {
      throw .invalidArgument(
        "the \(what) \(time) is later than this server's clock (\(now)): the document is from a server whose clock"
          + " ran ahead, or was edited; nothing was imported")
    }
    let station = archive.station.canonicalAddress
    let address: StationAddress
    do throws(CallsignError) {
      address = try StationAddress(parsing: station)
    } catch {
      throw .invalidArgument("\(station) is not a station address")
    }
    return try writeBatch { () throws(StoreError) -> StationImport in
      guard try !hasStation(station) else {
        throw .invalidArgument(
          "\(station) is registered here already: an import makes the station anew (unregister it first)")
      }
      _ = try upsertStation(
        StationUpsert(
          address: station, base: address.base, ssid: address.ssid, platform: nil, pushToken: nil,
          ackMessages: nil, isRegistration: true, client: "operator"),
        now: now)
      if let claim {
        try importClaim(claim, station: station, now: now)
      }
      try updateStationSettings(station, archive.settings.asUpdate, now: now)
      _ = try replaceSubscriptions(
        of: station,
        with: archive.subscriptions.map { SubscriptionDraft(id: $0.id, rule: $0.rule, bypass: $0.bypass) },
        now: now, adoptingIds: true)
      var newest: Int64 = 0
      var lastNumber = 0
      for entry in archive.entries {
        try importEntry(entry, station: station, now: now)
        newest = max(newest, entry.timestamp)
        if entry.direction == .sent, entry.state != nil, let number = entry.msgno.flatMap({ Int($0) }) {
          lastNumber = max(lastNumber, number)
        }
      }
      // What this server's retention does not keep goes now, ring by ring, as a store would trim it (before the
      // cursor moves: an `untilPulled` station keeps its `max` of what no device pulled here yet).
      var dropped = 0
      for ring in EntryRing.allCases {
        dropped += try trimRing(station, ring: ring, recordingDrops: false)
      }
      if lastNumber > 0 {
        // The next send goes on from the old server's numbers (a receiver remembers a sender's recent ones).
        let numbers = try prepared(
          """
          INSERT INTO send_numbers (station, last) VALUES (?1, ?2)
          ON CONFLICT (station) DO UPDATE SET last = max(last, excluded.last)
          """)
        defer { numbers.reset() }
        try numbers.bind(1, station)
        try numbers.bind(2, lastNumber)
        try numbers.run()
      }
      var last = max(try lastMessageTimestamp(), newest)
      if !archive.readMarkers.isEmpty {
        // Stamped after every imported entry, so a device that syncs from 0 sees them.
        last += 1
        let marker = try prepared(
          "INSERT INTO read_markers (station, peer, up_to, changed_at) VALUES (?1, ?2, ?3, ?4)")
        for (peer, upTo) in archive.readMarkers.sorted(by: { $0.key < $1.key }) {
          defer { marker.reset() }
          try marker.bind(1, station)
          try marker.bind(2, peer == Self.everyPeer ? peer : peer.canonicalAddress)
          // No further than the newest entry (as `markRead` stops at the newest timestamp): a marker past it
          // would hide the messages still to come here.
          try marker.bind(3, min(upTo, newest))
          try marker.bind(4, last)
          try marker.run()
        }
      }
      try setMetaValue(Self.lastMessageTimestampKey, String(last))
      let cursor = try prepared(
        "UPDATE stations SET last_sync_cursor = ?2, last_sync_at = ?3 WHERE address = ?1")
      defer { cursor.reset() }
      try cursor.bind(1, station)
      try cursor.bind(2, newest)
      try cursor.bind(3, now)
      try cursor.run()
      return StationImport(
        entries: archive.entries.count - dropped, dropped: dropped, claim: claim == nil ? nil : .unproven)
    }
  }

  /// The claim an import brings along (the operator vouched for the document), within its transaction: unproven,
  /// its seniority the import's time (no device here is older), and a line in the audit trail.
  private func importClaim(_ claim: ArchivedClaim, station: String, now: Int64) throws(StoreError) {
    let statement = try prepared(
      """
      UPDATE stations SET claim_key_hash = ?2, claimed_at = ?3, claim_refreshed_at = ?4, claim_proof = ?5,
        claim_seniority = ?4
      WHERE address = ?1
      """)
    defer { statement.reset() }
    try statement.bind(1, station)
    try statement.bind(2, claim.keyHash)
    try statement.bind(3, claim.claimedAt)
    try statement.bind(4, now)
    try statement.bind(5, ClaimProof.unproven)
    try statement.run()
    try recordAudit(
      AuditEntry(
        station: station, at: now, action: .claimed, client: AuditEntry.operatorClient,
        detail: "imported with --with-claim from an export document: unproven, on the operator's word"))
  }

  /// One entry of an import: its message row under its own timestamp and, for a message sent through
  /// `/v1/send`, its send row (a pending one as expired).
  private func importEntry(_ entry: StoredMessage, station: String, now: Int64) throws(StoreError) {
    let taken = try prepared("SELECT station FROM messages WHERE timestamp = ?1")
    do {
      defer { taken.reset() }
      try taken.bind(1, entry.timestamp)
      if try taken.step() {
        throw .invalidArgument(
          "timestamp \(entry.timestamp) is taken by a message of \(taken.text(0)) here: import into a fresh server"
        )
      }
    }
    // The row as the listener would have stored it (no dedup key: a copy heard later here is new to this server).
    _ = try insertMessage(
      IncomingMessage(
        station: station, direction: entry.direction, peer: entry.peer, text: entry.text, msgno: entry.msgno,
        dedupKey: "", dedupWindowMs: 0, to: entry.to, entry: entry.entry),
      station: station, timestamp: entry.timestamp)
    guard entry.direction == .sent, let state = entry.state else { return }
    // A sent entry without a number is a bulletin or announcement (`/v1/send` to `BLN…`): it never resumes either.
    let kind: SendKind = entry.msgno == nil ? .bulletin : .message
    let final: SendState = state == .pending ? (kind == .bulletin ? .completed : .expired) : state
    let send = try prepared(
      """
      INSERT INTO sends (message_id, station, addressee, msgno, client_id, state, created_at, finished_at, kind)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
      """)
    defer { send.reset() }
    try send.bind(1, lastInsertRowID)
    try send.bind(2, station)
    try send.bind(3, entry.peer.canonicalAddress)
    try send.bind(4, entry.msgno)
    try send.bind(5, entry.clientId)
    try send.bind(6, final)
    try send.bind(7, entry.timestamp)
    try send.bind(8, state == .pending ? now : entry.timestamp)
    try send.bind(9, kind)
    try send.run()
  }
}

extension StationSettings {
  /// An update that sets every setting to this one's value.
  var asUpdate: StationSettingsUpdate {
    StationSettingsUpdate(
      blocked: blocked, mutedUntil: mutedUntil, quietHours: .some(quietHours), quietBypass: quietBypass,
      ackPolicy: ackPolicy, keylessDevices: keylessDevices, ssids: ssids, ackSsids: ackSsids,
      retention: retention, fallbackWait: fallbackWait, airAnswered: airAnswered, trackSent: trackSent)
  }
}
