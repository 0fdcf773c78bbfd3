import APRS

/// Station settings (docs/protocol.md "Station settings"): read and changed by `POST /v1/settings`, read by the
/// listener (blocked senders, the ACK policy) and the push sender (mute, quiet hours). See ``StationSettings`` for
/// where each setting is stored.
extension Database {
  /// The settings of the station `address` (any case), or nil when it is not registered. One statement (its own
  /// snapshot): no transaction of its own, so the push sender's per-batch reads stay one each.
  public func stationSettings(_ address: String) throws(StoreError) -> StationSettings? {
    try readSettings(address.canonicalAddress)
  }

  /// The settings of each registered station among `addresses` (upper case), by address; unregistered ones are
  /// left out. One point query per distinct address: the listener asks for the few addressees of one batch
  /// inside its write transaction, so the answer holds at its commit.
  public func stationSettings(of addresses: some Sequence<String>) throws(StoreError) -> [String:
    StationSettings]
  {
    try readTransaction { () throws(StoreError) in
      var found: [String: StationSettings] = [:]
      var asked = Set<String>()
      for address in addresses where asked.insert(address).inserted {
        if let settings = try readSettings(address) { found[address] = settings }
      }
      return found
    }
  }

  /// Applies `update` to the settings of `address` (any case) in ONE `BEGIN IMMEDIATE` transaction and returns
  /// the whole set as it now is; nil when the station is not registered (nothing is written). An empty update
  /// writes nothing. A new `ackPolicy` also sets `stations.ack_messages` (true for `server` only). With `client`
  /// (the limits key of the request's address), a change is recorded in the audit trail, naming the settings
  /// whose values changed.
  @discardableResult
  public func updateStationSettings(
    _ address: String, _ update: StationSettingsUpdate, client: String? = nil, now: Int64
  ) throws(StoreError) -> StationSettings? {
    let station = address.canonicalAddress
    return try writeBatch { () throws(StoreError) in
      guard let current = try readSettings(station) else { return nil }
      guard !update.isEmpty else { return current }
      var merged = current.applying(update)
      // A list of SSIDs always holds the station's own one.
      merged.ssids = merged.ssids.includingOwn(Self.ownSSID(of: station))
      let fallbackChanged = (merged.ackPolicy == .fallback) != (current.ackPolicy == .fallback)
      if update.blocked != nil || update.mutedUntil != nil || update.quietHours != nil
        || update.quietBypass != nil || update.keylessDevices != nil || update.ssids != nil
        || update.ackSsids != nil || update.retention != nil || update.fallbackWait != nil
        || update.airAnswered != nil || update.trackSent != nil || fallbackChanged
      {
        // `own_since` keeps the time of the first request while the station goes on asking.
        let statement = try prepared(
          """
          INSERT INTO station_settings (station, blocked, muted_until, quiet_start, quiet_end, quiet_utc_offset,
            quiet_bypass, updated_at, keyless_devices, ssids, ack_ssids, retention_max, ack_fallback,
            fallback_wait, air_answered, track_sent, own_since)
          VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, CASE WHEN ?17 THEN ?8 END)
          ON CONFLICT (station) DO UPDATE SET
            blocked = excluded.blocked, muted_until = excluded.muted_until, quiet_start = excluded.quiet_start,
            quiet_end = excluded.quiet_end, quiet_utc_offset = excluded.quiet_utc_offset,
            quiet_bypass = excluded.quiet_bypass, updated_at = excluded.updated_at,
            keyless_devices = excluded.keyless_devices, ssids = excluded.ssids, ack_ssids = excluded.ack_ssids,
            retention_max = excluded.retention_max, ack_fallback = excluded.ack_fallback,
            fallback_wait = excluded.fallback_wait, air_answered = excluded.air_answered,
            track_sent = excluded.track_sent,
            own_since = CASE WHEN ?17 THEN coalesce(station_settings.own_since, excluded.own_since) END
          """)
        defer { statement.reset() }
        try statement.bind(1, station)
        try statement.bind(2, merged.blocked.storedText)
        try statement.bind(3, merged.mutedUntil)
        try statement.bind(4, merged.quietHours?.start)
        try statement.bind(5, merged.quietHours?.end)
        try statement.bind(6, merged.quietHours?.utcOffsetMinutes)
        try statement.bind(7, merged.quietBypass.storedText)
        try statement.bind(8, now)
        try statement.bind(9, merged.keylessDevices)
        try statement.bind(10, merged.ssids.storedText)
        try statement.bind(11, merged.ackSsids.storedText)
        if case .untilPulled(let max) = merged.retention { try statement.bind(12, max) }
        try statement.bind(13, merged.ackPolicy == .fallback)
        try statement.bind(14, merged.fallbackWait.seconds)
        try statement.bind(15, merged.airAnswered)
        try statement.bind(16, merged.trackSent)
        try statement.bind(17, merged.followsOwnTransmissions)
        try statement.run()
      }
      if merged.ackPolicy.storedPolicy != current.ackPolicy.storedPolicy {
        let statement = try prepared(
          "UPDATE stations SET ack_policy = ?2, ack_messages = (?2 = 'server') WHERE address = ?1")
        defer { statement.reset() }
        try statement.bind(1, station)
        try statement.bind(2, merged.ackPolicy.storedPolicy)
        try statement.run()
      }
      let changed = merged.changedFields(comparedTo: current)
      if let client, !changed.isEmpty {
        try recordAudit(
          AuditEntry(
            station: station, at: now, action: .settings, client: client,
            detail: changed.joined(separator: ", ")))
      }
      return merged
    }
  }

  /// The settings of `address` (canonical) inside the caller's transaction, or nil when it is not registered.
  /// A stored value that does not read as a valid setting reads as its default.
  private func readSettings(_ address: String) throws(StoreError) -> StationSettings? {
    let statement = try prepared(
      """
      SELECT stations.ack_policy, settings.blocked, settings.muted_until, settings.quiet_start,
             settings.quiet_end, settings.quiet_utc_offset, settings.quiet_bypass, settings.keyless_devices,
             settings.ssids, settings.ack_ssids, settings.retention_max, settings.ack_fallback,
             settings.fallback_wait, settings.air_answered, settings.track_sent
      FROM stations LEFT JOIN station_settings AS settings ON settings.station = stations.address
      WHERE stations.address = ?1
      """)
    defer { statement.reset() }
    try statement.bind(1, address)
    guard try statement.step() else { return nil }
    var settings = StationSettings(ackPolicy: statement.optionalValue(0) ?? .never)
    guard !statement.isNull(1) else { return settings }
    settings.blocked = CallList(stored: statement.text(1))
    settings.mutedUntil = max(0, statement.int64(2))
    if !statement.isNull(3), !statement.isNull(4), !statement.isNull(5) {
      settings.quietHours = try? QuietHours(
        start: statement.int(3), end: statement.int(4), utcOffsetMinutes: statement.int(5))
    }
    settings.quietBypass = CallList(stored: statement.text(6))
    settings.keylessDevices = statement.optionalValue(7) ?? .allow
    settings.ssids = SSIDSelection(stored: statement.text(8))
    settings.ackSsids = SSIDSet(stored: statement.text(9))
    if let max = statement.optionalInt64(10) { settings.retention = .untilPulled(max: Int(max)) }
    if settings.ackPolicy == .server && statement.int64(11) == 1 { settings.ackPolicy = .fallback }
    settings.fallbackWait = FallbackWait(clamping: statement.int(12))
    settings.airAnswered = statement.optionalValue(13) ?? .quiet
    settings.trackSent = statement.int64(14) == 1
    return settings
  }

  /// The SSID of a canonical station address (`CALL-7` → 7, `CALL` → 0).
  static func ownSSID(of address: String) -> Int {
    guard let dash = address.lastIndex(of: "-") else { return 0 }
    return Int(address[address.index(after: dash)...]) ?? 0
  }

  /// The live stations (heard at or after `heardSince`, epoch ms) that collect other SSIDs of their call
  /// (setting `ssids` not `exact`), each with its choice: what the listener's filter and routing add. One look
  /// at a partial index; these are few (claimed stations that opted in).
  ///
  /// The SSIDs ACKed for are only those of ``StationSettings/ackSsids`` that are stations of the same owner here:
  /// registered and claimed with the same key, by a claim that governs (docs/design.md "Who may do what"). Any
  /// other address may be a radio of someone else, heard through an igate: an ACK in its name would stop its
  /// sender's retries while the real station never got the message.
  public func stationsCollectingOtherSSIDs(heardSince: Int64) throws(StoreError) -> [OtherSSIDStation] {
    let statement = try prepared(
      """
      SELECT settings.station, settings.ssids, settings.ack_ssids, stations.base, stations.claim_key_hash
      FROM station_settings AS settings JOIN stations ON stations.address = settings.station
      WHERE settings.ssids <> 'exact' AND stations.heartbeat_at >= ?1
      ORDER BY settings.station
      """)
    var found: [(station: OtherSSIDStation, base: String, keyHash: String?)] = []
    do {
      defer { statement.reset() }
      try statement.bind(1, heardSince)
      while try statement.step() {
        let address = statement.text(0)
        let own = Self.ownSSID(of: address)
        let others = SSIDSelection(stored: statement.text(1)).others(own: own)
        guard !others.isEmpty else { continue }
        found.append(
          (
            OtherSSIDStation(address: address, ssids: others, ackSsids: SSIDSet(stored: statement.text(2))),
            statement.text(3), statement.optionalText(4)
          ))
      }
    }
    return try found.map { entry throws(StoreError) -> OtherSSIDStation in
      var station = entry.station
      guard !station.ackSsids.isEmpty else { return station }
      let owned = try ownedSSIDs(base: entry.base, keyHash: entry.keyHash)
      station.ackSsids = SSIDSet(station.ackSsids.ssids.filter { owned.contains($0) })
      return station
    }
  }

  /// Whether some SSID of `base` is claimed here with the key of `keyHash` by a claim that governs (proven or
  /// unproven): the test of a claim of another SSID with that same key (`POST /v1/claim` with `sameKey`).
  public func ownsSSID(base: String, keyHash: String) throws(StoreError) -> Bool {
    try !ownedSSIDs(base: base, keyHash: keyHash).isEmpty
  }

  /// The SSIDs of `base` registered here and claimed with the key of `keyHash` by a claim that governs (proven or
  /// unproven); none for a station without a claim.
  private func ownedSSIDs(base: String, keyHash: String?) throws(StoreError) -> Set<Int> {
    guard let keyHash else { return [] }
    let statement = try prepared(
      """
      SELECT ssid FROM stations
      WHERE base = ?1 AND claim_key_hash = ?2 AND claim_proof IN ('proven', 'unproven')
      """)
    defer { statement.reset() }
    try statement.bind(1, base)
    try statement.bind(2, keyHash)
    var ssids: Set<Int> = []
    while try statement.step() { ssids.insert(Int(statement.int64(0))) }
    return ssids
  }
}

/// A station that collects other SSIDs of its call (``Database/stationsCollectingOtherSSIDs(heardSince:)``).
public struct OtherSSIDStation: Sendable, Equatable {
  /// Its canonical address (`N0CALL-7`).
  public var address: String
  /// The other SSIDs it collects (never its own).
  public var ssids: SSIDSet
  /// The SSIDs it wants ACKed (``StationSettings/ackSsids``).
  public var ackSsids: SSIDSet

  /// A station; see the properties.
  public init(address: String, ssids: SSIDSet, ackSsids: SSIDSet) {
    self.address = address
    self.ssids = ssids
    self.ackSsids = ackSsids
  }
}

/// A station that asked the listener to follow its own transmissions (settings `ackPolicy:"fallback"`,
/// `trackSent`): ``Database/stationsFollowingOwnTransmissions(heardSince:)``.
public struct OwnTransmissionStation: Sendable, Equatable {
  /// Its canonical address (`N0CALL-7`).
  public var address: String
  /// When it first asked (epoch ms, `station_settings.own_since`): the oldest request has precedence for the
  /// filter's bytes.
  public var since: Int64
  /// `ackPolicy:"fallback"`: its ACKs wait for its radio.
  public var fallback: Bool
  /// `trackSent`: what its radio sends is stored.
  public var trackSent: Bool

  /// A station; see the properties.
  public init(address: String, since: Int64, fallback: Bool, trackSent: Bool) {
    self.address = address
    self.since = since
    self.fallback = fallback
    self.trackSent = trackSent
  }
}

extension Database {
  /// The live stations (heard at or after `heardSince`, epoch ms) that asked the listener to follow their own
  /// transmissions, in address order. One look at a partial index (`station_settings_own`): these are few.
  public func stationsFollowingOwnTransmissions(heardSince: Int64) throws(StoreError)
    -> [OwnTransmissionStation]
  {
    let statement = try prepared(
      """
      SELECT settings.station, settings.own_since, stations.ack_policy = 'server' AND settings.ack_fallback = 1,
             settings.track_sent
      FROM station_settings AS settings JOIN stations ON stations.address = settings.station
      WHERE settings.own_since IS NOT NULL AND stations.heartbeat_at >= ?1
      ORDER BY settings.station
      """)
    defer { statement.reset() }
    try statement.bind(1, heardSince)
    var found: [OwnTransmissionStation] = []
    while try statement.step() {
      let station = OwnTransmissionStation(
        address: statement.text(0), since: statement.int64(1), fallback: statement.int64(2) == 1,
        trackSent: statement.int64(3) == 1)
      if station.fallback || station.trackSent { found.append(station) }
    }
    return found
  }
}
