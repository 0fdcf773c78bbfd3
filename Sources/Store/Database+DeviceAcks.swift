/// `ackPolicy:"device"` (``DeviceAckRule``): the ACKs the listener keeps for messages stored under it
/// (`device_acks`), the pull that marks them (inside `sync`), and the listener's taking of the marked ones.
extension Database {
  /// Keeps the ACKs that stored messages will earn once pulled, inside the caller's write transaction (the
  /// listener's batch). A message that already has one keeps it.
  public func recordDeviceAcks(_ acks: [PendingDeviceAck]) throws(StoreError) {
    guard !acks.isEmpty else { return }
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        """
        INSERT INTO device_acks (message_id, station, ack_key, line) VALUES (?1, ?2, ?3, ?4)
        ON CONFLICT (message_id) DO NOTHING
        """)
      for ack in acks {
        defer { statement.reset() }
        try statement.bind(1, ack.messageID)
        try statement.bind(2, ack.station.canonicalAddress)
        try statement.bind(3, ack.key)
        try statement.bind(4, ack.line)
        try statement.run()
      }
    }
  }

  /// Which of `keys` (retransmission keys of messages to `station`, canonical) belong to a stored message a
  /// device of the station pulled: a copy of it earns an ACK again. Inside the listener's write transaction.
  public func pulledDeviceAckKeys(station: String, keys: some Sequence<String>) throws(StoreError) -> Set<
    String
  > {
    try readTransaction { () throws(StoreError) in
      let statement = try prepared(
        "SELECT 1 FROM device_acks WHERE station = ?1 AND ack_key = ?2 AND pulled_at IS NOT NULL LIMIT 1")
      var pulled = Set<String>()
      for key in keys where !pulled.contains(key) {
        defer { statement.reset() }
        try statement.bind(1, station.canonicalAddress)
        try statement.bind(2, key)
        if try statement.step() { pulled.insert(key) }
      }
      return pulled
    }
  }

  /// Whether any pulled message waits for its ACK to be handed on (the `device_acks_due` index).
  private func hasPulledDeviceAcks() throws(StoreError) -> Bool {
    let statement = try prepared(
      "SELECT 1 FROM device_acks WHERE pulled_at IS NOT NULL AND acked_at IS NULL LIMIT 1")
    defer { statement.reset() }
    return try statement.step()
  }

  /// Whether a sync of `address` (canonical) marks what it reads as pulled: its ACK policy is `device`. A
  /// read-only connection never marks.
  func syncMarksPulls(_ address: String) throws(StoreError) -> Bool {
    guard !options.readOnly else { return false }
    let statement = try prepared("SELECT 1 FROM stations WHERE address = ?1 AND ack_policy = 'device'")
    defer { statement.reset() }
    try statement.bind(1, address)
    return try statement.step()
  }

  /// Marks the kept ACKs of `address`'s messages newer than `since` (what the sync in the same transaction
  /// read) as pulled at `now`, for the messages that arrived within ``DeviceAckRule/pullWindowMs`` before it;
  /// entries of the opt-in rings only with their `wants` (the sync returned them). Returns how many were marked.
  @discardableResult
  func markPulled(
    _ address: String, since: Int64, through: Int64 = .max, now: Int64, wants: Wants = []
  ) throws(StoreError)
    -> Int
  {
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        """
        UPDATE device_acks SET pulled_at = ?3
        WHERE station = ?1 AND pulled_at IS NULL AND message_id IN (
          SELECT id FROM messages WHERE station = ?1 AND timestamp > ?2 AND timestamp >= ?4
            AND ((1 << (ring + (room IS NOT NULL))) & ?5) <> 0 AND timestamp <= ?6)
        """)
      defer { statement.reset() }
      try statement.bind(1, address)
      try statement.bind(2, since)
      try statement.bind(3, now)
      try statement.bind(4, DeviceAckRule.oldestAckedArrival(pulledAt: now))
      try statement.bind(5, wants.ringMask)
      try statement.bind(6, through)
      try statement.run()
      return changes
    }
  }

  /// The listener's step for pulled messages, in ONE write transaction: takes up to `limit` ACKs that were
  /// pulled and not handed on yet (oldest pull first), marks them handed on at `now`, and applies the 30 s rule
  /// (`ackDue`, `minIntervalMs`) to those still worth sending (``DeviceAckRule/stillWorthSending(pulledAt:now:)``).
  /// Only the lines the rule lets through are returned in ``TakenDeviceAcks/lines``; send them after this commit.
  /// With none waiting (one look at a partial index, outside any transaction) nothing is locked or written.
  /// `ackClockNow` (default `now`): the time of the 30 s rule, the clock the listener's writer uses for it (its
  /// steady clock, see `storeMessages`); `now` is the wall clock the responder stamped the pulls with.
  public func takePulledDeviceAcks(
    now: Int64, ackClockNow: Int64? = nil, minIntervalMs: Int64, limit: Int = 500
  ) throws(StoreError) -> TakenDeviceAcks {
    guard try hasPulledDeviceAcks() else { return TakenDeviceAcks() }
    return try writeBatch { () throws(StoreError) in
      let select = try prepared(
        """
        SELECT message_id, ack_key, line, pulled_at FROM device_acks
        WHERE pulled_at IS NOT NULL AND acked_at IS NULL ORDER BY pulled_at LIMIT ?1
        """)
      var rows: [(id: Int64, key: String, line: String, pulledAt: Int64)] = []
      do {
        defer { select.reset() }
        try select.bind(1, limit)
        while try select.step() {
          rows.append((select.int64(0), select.text(1), select.text(2), select.int64(3)))
        }
      }
      var taken = TakenDeviceAcks()
      guard !rows.isEmpty else { return taken }
      let mark = try prepared("UPDATE device_acks SET acked_at = ?2 WHERE message_id = ?1")
      for row in rows {
        defer { mark.reset() }
        try mark.bind(1, row.id)
        try mark.bind(2, now)
        try mark.run()
      }
      let fresh = rows.filter { DeviceAckRule.stillWorthSending(pulledAt: $0.pulledAt, now: now) }
      taken.stale = rows.count - fresh.count
      let due = try ackDue(keys: fresh.map(\.key), now: ackClockNow ?? now, minIntervalMs: minIntervalMs)
      for (row, isDue) in zip(fresh, due) {
        if isDue { taken.lines.append(row.line) } else { taken.suppressed += 1 }
      }
      return taken
    }
  }
}

/// An ACK a message stored under `ackPolicy:"device"` earns once pulled (`Database.recordDeviceAcks`).
public struct PendingDeviceAck: Sendable, Equatable {
  /// The stored message's id.
  public var messageID: Int64
  /// The addressee (any case).
  public var station: String
  /// The message's retransmission key (the 30 s rule's key).
  public var key: String
  /// The ACK line, CR LF included.
  public var line: String

  /// A pending ACK; see the properties.
  public init(messageID: Int64, station: String, key: String, line: String) {
    self.messageID = messageID
    self.station = station
    self.key = key
    self.line = line
  }
}

/// What `Database.takePulledDeviceAcks` took.
public struct TakenDeviceAcks: Sendable, Equatable {
  /// ACK lines to send now (CR LF included).
  public var lines: [String] = []
  /// ACKs the 30 s rule held back (the same message was ACKed less than 30 s before).
  public var suppressed = 0
  /// ACKs dropped because their pull is older than ``DeviceAckRule/pullWindowMs``.
  public var stale = 0

  public init() {}
}
