import APRS

/// Messages: storing what the listener hears (with its dedup key, its push and the ring trim), the sync that
/// hands them to phones, and the reads a push and `aprs-cloud messages` make.
extension Database {
  /// The meta key holding the newest message timestamp ever assigned (the cursor's high-water
  /// mark). Written only by `storeMessages`.
  static let lastMessageTimestampKey = "last_message_ts"
  /// The most messages one answer with `want:["inbox"]` carries (the rest follow with `more:true`).
  public static let inboxPageSize = 100
  /// The most messages one answer without `want:["inbox"]` carries: the old protocol's answers (the shipping
  /// app's register with history and sync) never held more than the ring of 50 they were built against, so they
  /// stay within it however many a station keeps (`retention` `untilPulled`, a larger `[server] ringSize`). The
  /// rest follow, oldest first, from the `serverTime` the answer gives, which is then its last message's
  /// `timestamp`: the cursor never skips (docs/protocol.md "The cursor", "Opt-in answers (`want`)").
  public static let legacyPageSize = 50

  /// The most messages one answer carries for `wants`: ``inboxPageSize`` with `inbox`, else ``legacyPageSize``.
  public static func pageSize(for wants: Wants) -> Int {
    wants.contains(.inbox) ? inboxPageSize : legacyPageSize
  }

  /// Stores a batch of messages in ONE write transaction and returns one outcome per message.
  ///
  /// For each message: an unknown station is skipped; a dedup key seen for that station within
  /// its window is a duplicate; otherwise the message is inserted with timestamp `max(stampedAt, last + 1)` (so
  /// timestamps strictly increase in commit order across the database), its dedup key is
  /// recorded, a push is queued in the outbox (received messages only) and the station's ring
  /// is trimmed to `options.ringSize`. Nothing is stored if any step fails. A message with ``IncomingMessage/to``
  /// (another SSID of the station's call) and a subscription entry (``IncomingMessage/entry``) each have a ring
  /// of their own (``EntryRing``), of the same size: such entries never push out what clients that did not ask
  /// for them see. A copy of a subscription entry seen within its window extends the window (it slides).
  ///
  /// Two clocks, so that a step of the wall clock neither stores a retransmission twice nor holds dedup back:
  /// - `now` measures durations: the dedup windows (`first_seen`, `expires_at`) and the outbox's queue time
  ///   (the push coalescing window) are on it. The listener passes its steady clock
  ///   (`steadyEpochMilliseconds()`: the wall clock at its start, raised to the newest such value stored, then
  ///   advanced by the monotonic clock), so a copy 31 s after the first is 31 s later on it whatever the wall
  ///   clock did between them: a step of +1 h or +2 h does not expire the window early (no second store, no
  ///   second push), a step of −1 h does not stretch it.
  /// - `stampedAt` (default `now`) stamps: the wall clock, the message's `timestamp` floor shown to phones and
  ///   ordering the sync cursor (the `max(…, last + 1)` rule keeps the cursor increasing across a backward step),
  ///   and the outbox row's times, which the push sender compares with its wall clock (it measures the
  ///   coalescing window on its own steady clock from the moment it first reads the row: `SteadyAges`).
  ///
  /// Dedup rows belong to their station: they are keyed `STATION␟KEY` (U+001F between), and
  /// deleting or expiring a station deletes them (`deleteDedupRows(station:)`). So a duplicate is
  /// always a copy of a message stored for the station as registered now, and a station that was
  /// unregistered and registered again gets the sender's next copy stored anew. Rows written by
  /// builds before this scheme (the bare key) still count until they expire (1 h at most).
  public func storeMessages(
    _ batch: [IncomingMessage], now: Int64, stampedAt: Int64? = nil
  ) throws(StoreError) -> [StoreOutcome] {
    let stamp = stampedAt ?? now
    for message in batch where message.dedupKey.isEmpty {
      throw .invalidArgument("empty dedup key")
    }
    guard !batch.isEmpty else { return [] }
    return try writeTransaction { () throws(StoreError) in
      let initialLast = try lastMessageTimestamp()
      var last = initialLast
      var outcomes: [StoreOutcome] = []
      outcomes.reserveCapacity(batch.count)
      for message in batch {
        let station = message.station.canonicalAddress
        guard try stationExists(station) else {
          outcomes.append(.unknownStation)
          continue
        }
        var duplicate = try isDuplicate(message.dedupKey, station: station, now: now)
        if !duplicate { duplicate = try isEchoOfOwnSend(message, station: station, stampedAt: stamp) }
        if duplicate {
          if message.entry != nil && message.entry?.room == nil {
            try recordDedup(message.dedupKey, station: station, now: now, windowMs: message.dedupWindowMs)
          }
          outcomes.append(.duplicate)
          continue
        }
        let timestamp = max(stamp, last + 1)
        last = timestamp
        let id = try insertMessage(message, station: station, timestamp: timestamp)
        try recordDedup(message.dedupKey, station: station, now: now, windowMs: message.dedupWindowMs)
        if message.direction == .received {
          let holdMs =
            if let entry = message.entry, let room = entry.room {
              try roomDigestHold(station, room: room, subscription: entry.subscription, now: stamp)
            } else {
              message.pushHoldMs
            }
          try queuePush(station: station, messageID: id, now: stamp, holdMs: holdMs)
        }
        try trimRing(station, ring: .of(to: message.to, entry: message.entry), storing: timestamp)
        outcomes.append(.stored(messageID: id, timestamp: timestamp))
      }
      if last != initialLast {
        try setMetaValue(Self.lastMessageTimestampKey, String(last))
      }
      return outcomes
    }
  }

  /// The newest message timestamp ever assigned (0 before the first message).
  func lastMessageTimestamp() throws(StoreError) -> Int64 {
    let statement = try prepared("SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?1")
    defer { statement.reset() }
    try statement.bind(1, Self.lastMessageTimestampKey)
    return try statement.step() ? statement.int64(0) : 0
  }

  private func stationExists(_ address: String) throws(StoreError) -> Bool {
    let statement = try prepared("SELECT 1 FROM stations WHERE address = ?1")
    defer { statement.reset() }
    try statement.bind(1, address)
    return try statement.step()
  }

  /// The separator between the station and the key in a dedup row's key (a byte no callsign has).
  static let dedupSeparator = "\u{1F}"

  /// The dedup row key of `key` for `station` (canonical): `STATION␟KEY`, so a station's rows are
  /// one range of the primary key.
  static func dedupRowKey(_ key: String, station: String) -> String {
    station + dedupSeparator + key
  }

  /// Whether `key` was seen for `station` (canonical) within its window; a bare-key row from an
  /// older build counts too.
  private func isDuplicate(_ key: String, station: String, now: Int64) throws(StoreError) -> Bool {
    let statement = try prepared("SELECT 1 FROM dedup WHERE key IN (?1, ?2) AND expires_at > ?3 LIMIT 1")
    defer { statement.reset() }
    try statement.bind(1, Self.dedupRowKey(key, station: station))
    try statement.bind(2, key)
    try statement.bind(3, now)
    return try statement.step()
  }

  /// How far back a heard message of a station is matched with the station's own `/v1/send` messages
  /// (``isEchoOfOwnSend(_:station:stampedAt:)``), ms: two hours, longer than a send is retried.
  static let ownSendEchoWindowMs: Int64 = 7_200_000

  /// Whether `message`, a numbered message the station was heard sending (the listener's `trackOutgoing`), is the
  /// copy of one of its own `/v1/send` messages that an igate gated back to APRS-IS: the same addressee (any
  /// case), number and text, sent in the last ``ownSendEchoWindowMs``. Such a copy is that send, already stored:
  /// one entry, not two.
  private func isEchoOfOwnSend(_ message: IncomingMessage, station: String, stampedAt: Int64)
    throws(StoreError) -> Bool
  {
    guard message.direction == .sent, message.entry == nil, let msgno = message.msgno else { return false }
    let statement = try prepared(
      """
      SELECT 1 FROM messages JOIN sends ON sends.message_id = messages.id
      WHERE messages.station = ?1 AND messages.direction = 'sent' AND messages.msgno = ?2
        AND upper(messages.peer) = upper(?3) AND messages.text = ?4 AND messages.timestamp >= ?5
      LIMIT 1
      """)
    defer { statement.reset() }
    try statement.bind(1, station)
    try statement.bind(2, msgno)
    try statement.bind(3, message.peer)
    try statement.bind(4, message.text)
    try statement.bind(5, stampedAt - Self.ownSendEchoWindowMs)
    return try statement.step()
  }

  private func recordDedup(_ key: String, station: String, now: Int64, windowMs: Int64) throws(StoreError) {
    let statement = try prepared(
      """
      INSERT INTO dedup (key, first_seen, expires_at) VALUES (?1, ?2, ?3)
      ON CONFLICT (key) DO UPDATE SET first_seen = excluded.first_seen, expires_at = excluded.expires_at
      """)
    defer { statement.reset() }
    try statement.bind(1, Self.dedupRowKey(key, station: station))
    try statement.bind(2, now)
    try statement.bind(3, now + max(0, windowMs))
    try statement.run()
  }

  /// Deletes every dedup row of `station` (canonical), inside the caller's write transaction:
  /// the key range `STATION␟` up to (not including) `STATION` + U+0020, which holds exactly the
  /// keys that start with `STATION␟` (U+0020 is the byte after U+001F). Returns how many.
  @discardableResult
  func deleteDedupRows(station: String) throws(StoreError) -> Int {
    let statement = try prepared("DELETE FROM dedup WHERE key >= ?1 AND key < ?2")
    defer { statement.reset() }
    try statement.bind(1, station + Self.dedupSeparator)
    try statement.bind(2, station + "\u{20}")
    try statement.run()
    return changes
  }

  /// Inserts one message row under `timestamp` (no dedup, push or trim: `storeMessages` and an import do those
  /// that apply); returns its rowid.
  func insertMessage(
    _ message: IncomingMessage, station: String, timestamp: Int64
  ) throws(StoreError) -> Int64 {
    let statement = try prepared(
      """
      INSERT INTO messages (station, direction, peer, text, msgno, timestamp, addressee, kind, subscription, event,
        latitude, longitude, heard_state, room)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
      """)
    defer { statement.reset() }
    try statement.bind(1, station)
    try statement.bind(2, message.direction)
    try statement.bind(3, message.peer)
    try statement.bind(4, message.text)
    try statement.bind(5, message.msgno)
    try statement.bind(6, timestamp)
    try statement.bind(7, message.to?.canonicalAddress)
    try statement.bind(8, message.entry?.storedKind.rawValue)
    try statement.bind(9, message.entry?.subscription)
    try statement.bind(10, message.entry?.event?.rawValue)
    try statement.bind(11, message.entry?.latitude)
    try statement.bind(12, message.entry?.longitude)
    try statement.bind(13, message.heardSent && message.direction == .sent ? HeardState.sent : nil)
    try statement.bind(14, message.entry?.room?.description)
    try statement.run()
    return lastInsertRowID
  }

  /// Queues the push of a message, due at `now` or, with `holdMs`, that much later (``IncomingMessage/pushHoldMs``,
  /// a room's digest). A held push counts as queued when its hold ends (`created_at`; or when it is released
  /// earlier, `decideHeldMessage`): `[messaging] maxAge` and the coalescing window run from then, so a digest
  /// longer than `maxAge` is not dropped as too old.
  func queuePush(station: String, messageID: Int64, now: Int64, holdMs: Int64 = 0) throws(StoreError) {
    let statement = try prepared(
      """
      INSERT INTO outbox (station, message_id, created_at, state, attempts, next_attempt_at)
      VALUES (?1, ?2, ?3 + ?4, 'pending', 0, ?3 + ?4)
      """)
    defer { statement.reset() }
    try statement.bind(1, station)
    try statement.bind(2, messageID)
    try statement.bind(3, now)
    try statement.bind(4, max(0, holdMs))
    try statement.run()
  }

  /// How many times the ring size a station's room entries keep (``EntryRing/rooms``): 200 at the default 50.
  public static let roomRingFactor = 4

  /// Deletes the station's messages older than its newest `ringSize` (their pushes cascade), except its sends
  /// still in flight: those stay until they end (and then, re-stamped, are among the newest), in one of its
  /// rings (``EntryRing``: each is trimmed on its own). For the messages to the station itself, its
  /// `retention` decides (``Retention``): with `untilPulled` a message newer than what every keyed device pulled
  /// stays, up to its `max` (at most `maxUnpulledPerStation`). Received messages evicted before the station's
  /// cursor passed them are recorded as dropped (`drops`) at `storing`, the timestamp of the message whose store
  /// pushed them out, unless `recordingDrops` is false (an import, whose entries were never this server's to push).
  /// Returns how many rows it deleted.
  @discardableResult
  func trimRing(
    _ station: String, ring: EntryRing = .direct, storing: Int64 = 0, recordingDrops: Bool = true
  ) throws(StoreError) -> Int {
    var keepAfter = Int64.max
    // A net's room entries: a ring of their own, larger (a two-hour net fans out a couple of hundred posts).
    let size = ring == .rooms ? options.ringSize * Self.roomRingFactor : options.ringSize
    var cap = size
    // Only the station's own ring has a retention and records what it dropped.
    var cursor = Int64.max
    if ring == .direct {
      if let max = try retentionMax(station) {
        keepAfter = try pulledFloor(station)
        cap = retainedMessages(.untilPulled(max: max))
      }
      cursor = try syncCursor(station) ?? Int64.max
    }
    // One statement: each deleted row says whether it was a received message the station had not pulled.
    let statement = try prepared(
      """
      DELETE FROM messages WHERE station = ?1 AND ring = ?3 AND (room IS NOT NULL) = ?7 AND (
          (timestamp < (SELECT timestamp FROM messages WHERE station = ?1 AND ring = ?3 AND (room IS NOT NULL) = ?7
                        ORDER BY timestamp DESC LIMIT 1 OFFSET ?2) AND timestamp <= ?4)
          OR timestamp < (SELECT timestamp FROM messages WHERE station = ?1 AND ring = ?3 AND (room IS NOT NULL) = ?7
                          ORDER BY timestamp DESC LIMIT 1 OFFSET ?5))
        AND NOT EXISTS (SELECT 1 FROM sends WHERE sends.message_id = messages.id AND sends.state = 'pending')
      RETURNING direction = 'received' AND timestamp > ?6
      """)
    var unpulled = 0
    var deleted = 0
    do {
      defer { statement.reset() }
      try statement.bind(1, station)
      try statement.bind(2, size - 1)
      try statement.bind(3, ring.storedRing.rawValue)
      try statement.bind(4, keepAfter)
      try statement.bind(5, cap - 1)
      try statement.bind(6, cursor)
      try statement.bind(7, ring == .rooms)
      while try statement.step() {
        deleted += 1
        if statement.bool(0) { unpulled += 1 }
      }
    }
    if unpulled > 0 && recordingDrops { try recordDrop(station, at: storing, count: unpulled) }
    return deleted
  }

  /// Answers a sync for `station`: its messages newer than `since`, oldest first, the cursor,
  /// and the avatar hashes of their peers — all from ONE read snapshot.
  ///
  /// At most ``pageSize(for:)`` messages (100 with `wants` ``Wants/inbox``, else 50); when more wait,
  /// ``SyncResult/more`` is set and `serverTime` is the last one's timestamp, so the next sync from it goes on.
  ///
  /// `serverTime` is `max(since, newest timestamp assigned in that snapshot)`. A message
  /// committed after the snapshot gets a larger timestamp, so the next sync returns it: the
  /// cursor never skips. Afterwards the station's last sync cursor is advanced to
  /// `serverTime` (with `lastSyncAt = now`) when it grows; unknown stations get an empty
  /// answer and no write. That bookkeeping write is best effort: when it cannot happen (a fault of the
  /// storage, ``StoreError/storageFault``: busy, full, an I/O error, read-only) it is skipped and the answer still
  /// returned; a `device` station's pull marks likewise (its messages are answered, not marked, not ACKed).
  ///
  /// A sync is a pull: for a station whose ACK policy is `device` it reads and marks what it read
  /// as pulled (`markPulled`, ``DeviceAckRule``) in ONE `BEGIN IMMEDIATE` transaction, cursor
  /// included, so every path that answers with messages (sync, long poll, register with history)
  /// earns their ACKs. With `countsAsPull` false (a keyless read of a claimed station: not the owner's device)
  /// it is a read only: nothing is marked pulled and the cursor stays where the owner's devices left it.
  ///
  /// Entries for other SSIDs of the call (``StoredMessage/to`` set) are part of the answer only with
  /// `wants` ``Wants/ssids`` (the request's `want:["ssids"]`), subscription entries (``StoredMessage/entry``)
  /// only with ``Wants/subscriptions``; without them the answer is exactly what it was before they existed, and
  /// they are not marked pulled.
  public func sync(
    station: String, since: Int64, now: Int64, countsAsPull: Bool = true, wants: Wants = []
  ) throws(StoreError) -> SyncResult {
    let address = station.canonicalAddress
    if countsAsPull, batchDepth == 0, try syncMarksPulls(address) {
      do throws(StoreError) {
        return try writeBatch { () throws(StoreError) in
          var result = try sync(station: address, since: since, now: now, wants: wants)
          result.pulledDeviceAcks = try markPulled(
            address, since: since, through: result.serverTime, now: now, wants: wants)
          return result
        }
      } catch {
        // Reads work without space: the messages are answered, only the pull marks (and so their `device`
        // ACKs: nothing is ACKed that was not marked) and the cursor are left as they were.
        guard error.storageFault != nil else { throw error }
        return try sync(station: address, since: since, now: now, countsAsPull: false, wants: wants)
      }
    }
    let (result, storedCursor) = try readTransaction { () throws(StoreError) in
      let select = try prepared(
        """
        SELECT messages.direction, messages.peer, messages.text, messages.msgno, messages.timestamp,
               sends.state, sends.client_id, messages.addressee, messages.kind, messages.subscription,
               messages.event, messages.latitude, messages.longitude, messages.answered_by,
               messages.heard_state, messages.room
        FROM messages LEFT JOIN sends ON sends.message_id = messages.id
        WHERE messages.station = ?1 AND messages.timestamp > ?2
          AND ((1 << (messages.ring + (messages.room IS NOT NULL))) & ?3) <> 0
          AND (messages.heard_state IS NULL OR ?5)
        ORDER BY messages.timestamp LIMIT ?4
        """)
      var messages: [StoredMessage] = []
      do {
        defer { select.reset() }
        try select.bind(1, address)
        try select.bind(2, since)
        try select.bind(3, wants.ringMask)
        // One more than a page: whether there is more.
        try select.bind(4, Self.pageSize(for: wants) + 1)
        try select.bind(5, wants.contains(.sent))
        while try select.step() { messages.append(try Self.storedMessage(select)) }
      }
      afterSyncMessagesRead?()
      let last = try lastMessageTimestamp()
      let cursor = try syncCursor(address)
      var more = false
      let page = Self.pageSize(for: wants)
      if messages.count > page {
        messages.removeLast(messages.count - page)
        more = true
      }
      let hashes = try avatarHashes(of: messages)
      var result = SyncResult(
        messages: messages, serverTime: more ? messages[messages.count - 1].timestamp : max(since, last),
        avatarHashes: hashes, newestTimestamp: last, more: more)
      if wants.contains(.inbox) {
        result.dropped = try droppedCount(station: address, since: since)
        result.oldestHeld = try oldestHeld(station: address)
        result.read = try readMarkers(station: address, changedAfter: since)
      }
      return (result, cursor)
    }
    if countsAsPull, let storedCursor, result.serverTime > storedCursor, !options.readOnly {
      do throws(StoreError) {
        try advanceSyncCursor(address, to: result.serverTime, now: now)
      } catch {
        // A cursor that cannot move (a held lock, a full disk, an I/O error) stays behind: pushes count a few
        // messages the phone has already, and nothing is ever skipped; the answer goes out all the same.
        guard error.storageFault != nil else { throw error }
      }
    }
    return result
  }

  /// The stations that got messages after `timestamp` (epoch ms, exclusive), each with its newest
  /// timestamp, and the newest timestamp of all, from ONE read snapshot. It walks only the new rows
  /// (through the unique index on `timestamp`), so asking after every commit costs next to nothing;
  /// asked with `Int64.max` it only reads the newest timestamp. A message committed after the
  /// snapshot has a larger timestamp than `newestTimestamp`: ask again from there.
  public func messageActivity(after timestamp: Int64) throws(StoreError) -> MessageActivity {
    try readTransaction { () throws(StoreError) in
      let newest = try lastMessageTimestamp()
      var stations: [String: Int64] = [:]
      guard timestamp < newest else { return MessageActivity(newestTimestamp: newest, stations: stations) }
      // Read markers (sql/018_read_markers.sql) are stamped from the same sequence: they wake long polls too.
      let statement = try prepared(
        """
        SELECT station, timestamp FROM messages WHERE timestamp > ?1
        UNION ALL SELECT station, changed_at FROM read_markers WHERE changed_at > ?1
        """)
      defer { statement.reset() }
      try statement.bind(1, timestamp)
      while try statement.step() {
        let station = statement.text(0)
        stations[station] = max(stations[station] ?? 0, statement.int64(1))
      }
      return MessageActivity(newestTimestamp: newest, stations: stations)
    }
  }

  private func syncCursor(_ address: String) throws(StoreError) -> Int64? {
    let statement = try prepared("SELECT last_sync_cursor FROM stations WHERE address = ?1")
    defer { statement.reset() }
    try statement.bind(1, address)
    return try statement.step() ? statement.int64(0) : nil
  }

  private func advanceSyncCursor(_ address: String, to cursor: Int64, now: Int64) throws(StoreError) {
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        """
        UPDATE stations SET last_sync_cursor = ?2, last_sync_at = ?3
        WHERE address = ?1 AND last_sync_cursor < ?2
        """)
      defer { statement.reset() }
      try statement.bind(1, address)
      try statement.bind(2, cursor)
      try statement.bind(3, now)
      try statement.run()
    }
  }

  /// The hash of each distinct peer's stored avatar, keyed by the peer as it appears.
  private func avatarHashes(of messages: [StoredMessage]) throws(StoreError) -> [String: String] {
    var peers = Set<String>()
    for message in messages { peers.insert(message.peer) }
    guard !peers.isEmpty else { return [:] }
    let statement = try prepared(
      "SELECT avatar_hash FROM stations WHERE address = ?1 AND avatar_hash IS NOT NULL")
    var hashes: [String: String] = [:]
    for peer in peers {
      defer { statement.reset() }
      try statement.bind(1, peer.canonicalAddress)
      if try statement.step() { hashes[peer] = statement.text(0) }
    }
    return hashes
  }

  /// How many of the station's received messages are newer than its last sync cursor and not covered by a read
  /// marker (their peer's or `*`'s, ``markRead(station:peer:upTo:now:)``): the `count` a push carries (sent
  /// messages, re-stamped as their state changes, are not news). Entries of the opt-in rings count only with
  /// their `wants` (a device registered with `want:["ssids"]` or `want:["subscriptions"]`).
  public func unpulledCount(station: String, wants: Wants = []) throws(StoreError) -> Int {
    let statement = try prepared(
      """
      SELECT count(*) FROM messages JOIN stations ON stations.address = messages.station
      WHERE messages.station = ?1 AND messages.timestamp > stations.last_sync_cursor
        AND messages.direction = 'received' AND ((1 << (messages.ring + (messages.room IS NOT NULL))) & ?2) <> 0
      """ + Self.notMarkedRead)
    defer { statement.reset() }
    try statement.bind(1, station.canonicalAddress)
    try statement.bind(2, wants.ringMask)
    return try statement.step() ? statement.int(0) : 0
  }

  /// The condition (SQL, `?1` the station) that a message is not covered by a read marker of its peer or `*`
  /// (sql/018_read_markers.sql): what a push's count and names leave out.
  private static let notMarkedRead = """
      AND messages.timestamp > coalesce(
        (SELECT up_to FROM read_markers WHERE station = ?1 AND peer = '*'), 0)
      AND messages.timestamp > coalesce(
        (SELECT up_to FROM read_markers WHERE station = ?1 AND peer = messages.peer), 0)

    """

  /// The distinct senders of the station's messages newer than its last sync cursor (the ones a
  /// push's `count` counts: not covered by a read marker), newest first, at most `limit`; opt-in entries only
  /// with their `wants`.
  public func unpulledSenders(station: String, limit: Int = 5, wants: Wants = []) throws(StoreError)
    -> [String]
  {
    let statement = try prepared(
      """
      SELECT messages.peer, max(messages.timestamp) AS newest
      FROM messages JOIN stations ON stations.address = messages.station
      WHERE messages.station = ?1 AND messages.timestamp > stations.last_sync_cursor
        AND messages.direction = 'received' AND ((1 << (messages.ring + (messages.room IS NOT NULL))) & ?3) <> 0
      """ + Self.notMarkedRead + """
        GROUP BY messages.peer ORDER BY newest DESC LIMIT ?2
        """)
    defer { statement.reset() }
    try statement.bind(1, station.canonicalAddress)
    try statement.bind(2, limit)
    try statement.bind(3, wants.ringMask)
    var senders: [String] = []
    while try statement.step() { senders.append(statement.text(0)) }
    return senders
  }

  /// A station's newest `limit` stored messages, oldest first, without touching its sync cursor
  /// (unlike `sync`): what `aprs-cloud messages` prints.
  public func recentMessages(station: String, limit: Int) throws(StoreError) -> [StoredMessage] {
    guard limit > 0 else { return [] }
    let statement = try prepared(
      """
      SELECT recent.direction, recent.peer, recent.text, recent.msgno, recent.timestamp, sends.state,
             sends.client_id, recent.addressee, recent.kind, recent.subscription, recent.event, recent.latitude,
             recent.longitude, recent.answered_by, recent.heard_state, recent.room
      FROM (
        SELECT id, direction, peer, text, msgno, timestamp, addressee, kind, subscription, event, latitude,
               longitude, answered_by, heard_state, room FROM messages
        WHERE station = ?1 ORDER BY timestamp DESC LIMIT ?2) AS recent
      LEFT JOIN sends ON sends.message_id = recent.id
      ORDER BY recent.timestamp
      """)
    defer { statement.reset() }
    try statement.bind(1, station.canonicalAddress)
    try statement.bind(2, limit)
    var messages: [StoredMessage] = []
    while try statement.step() { messages.append(try Self.storedMessage(statement)) }
    return messages
  }

  /// A message from a row of `direction, peer, text, msgno, timestamp, sends.state, sends.client_id` and,
  /// when the row has them, `messages.addressee`, `messages.kind, subscription, event, latitude, longitude`,
  /// `messages.answered_by` and `messages.heard_state`.
  static func storedMessage(_ row: Statement) throws(StoreError) -> StoredMessage {
    var state: SendState?
    if !row.isNull(5) { state = try row.value(5) }
    return StoredMessage(
      direction: try row.value(0), peer: row.text(1), text: row.text(2), msgno: row.optionalText(3),
      timestamp: row.int64(4), state: state, clientId: row.optionalText(6),
      to: row.columnCount > 7 ? row.optionalText(7) : nil,
      entry: row.columnCount > 12
        ? subscriptionEntry(row, from: 8, room: row.columnCount > 15 ? 15 : nil) : nil,
      answeredBy: row.columnCount > 13 ? row.optionalValue(13) : nil,
      heardState: row.columnCount > 14 ? row.optionalValue(14) : nil)
  }

  /// The subscription entry of a row whose columns from `first` on are `messages.kind, subscription, event,
  /// latitude, longitude`, and whose column `room` (when given) is `messages.room`; nil for a message. A row with
  /// a room is a net's entry (stored with kind `group`: sql/025_nets.sql).
  static func subscriptionEntry(_ row: Statement, from first: Int32, room: Int32? = nil) -> SubscriptionEntry?
  {
    guard let kind = row.optionalValue(first, as: SubscriptionKind.self) else { return nil }
    let netRoom = room.flatMap { row.optionalText($0) }.flatMap { NetRoom($0) }
    return SubscriptionEntry(
      kind: netRoom == nil ? kind : .net, subscription: row.optionalText(first + 1) ?? "",
      event: row.optionalValue(first + 2, as: WatchEventName.self), latitude: row.optionalDouble(first + 3),
      longitude: row.optionalDouble(first + 4), room: netRoom)
  }
}
