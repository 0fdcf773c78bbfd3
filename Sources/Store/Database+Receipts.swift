/// Acknowledgements both ways: the delivery receipts (acks and rejs) registered stations get for the messages
/// they sent, and the send times of the ACKs the listener sends for messages it stored (the 30-second rule).
extension Database {
  /// Records acks and rejs addressed to registered stations, in ONE write transaction. A receipt for a station
  /// that is not registered is skipped; a repeated one (same station, peer, msgno, kind) only moves its
  /// `receivedAt` to `now`. Returns how many were recorded (new or refreshed).
  @discardableResult
  public func recordReceipts(_ receipts: [DeliveryReceipt], now: Int64) throws(StoreError) -> Int {
    guard !receipts.isEmpty else { return 0 }
    return try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        """
        INSERT INTO receipts (station, peer, msgno, kind, reply_ack, received_at)
        SELECT address, ?2, ?3, ?4, ?5, ?6 FROM stations WHERE address = ?1
        ON CONFLICT (station, peer, msgno, kind) DO UPDATE SET
          reply_ack = excluded.reply_ack, received_at = excluded.received_at
        """)
      var recorded = 0
      for receipt in receipts {
        defer { statement.reset() }
        try statement.bind(1, receipt.station.canonicalAddress)
        try statement.bind(2, receipt.peer)
        try statement.bind(3, receipt.msgno)
        try statement.bind(4, receipt.kind)
        try statement.bind(5, receipt.replyAck)
        try statement.bind(6, now)
        try statement.run()
        recorded += changes
      }
      return recorded
    }
  }

  /// The receipts recorded for `station` (any case), newest first.
  public func receipts(station: String) throws(StoreError) -> [DeliveryReceipt] {
    let statement = try prepared(
      """
      SELECT station, peer, msgno, kind, reply_ack, received_at FROM receipts
      WHERE station = ?1 ORDER BY received_at DESC, id DESC
      """)
    defer { statement.reset() }
    try statement.bind(1, station.canonicalAddress)
    var result: [DeliveryReceipt] = []
    while try statement.step() {
      result.append(
        DeliveryReceipt(
          station: statement.text(0), peer: statement.text(1), msgno: statement.text(2),
          kind: try statement.value(3),
          replyAck: statement.optionalText(4), receivedAt: statement.int64(5)))
    }
    return result
  }

  /// The 30-second rule: true (and the send time recorded as `now`) when no ACK for `key` was
  /// sent within `minIntervalMs` before `now`; false when one was. Atomic across processes.
  public func ackDue(key: String, now: Int64, minIntervalMs: Int64) throws(StoreError) -> Bool {
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        """
        INSERT INTO ack_state (key, last_sent_at) VALUES (?1, ?2)
        ON CONFLICT (key) DO UPDATE SET last_sent_at = excluded.last_sent_at
        WHERE excluded.last_sent_at - ack_state.last_sent_at >= ?3
          OR excluded.last_sent_at < ack_state.last_sent_at
        """)
      defer { statement.reset() }
      try statement.bind(1, key)
      try statement.bind(2, now)
      try statement.bind(3, minIntervalMs)
      try statement.run()
      return changes > 0
    }
  }

  /// `ackDue(key:now:minIntervalMs:)` for several keys in ONE write transaction: for each key, in order, true
  /// (and its send time recorded as `now`) when no ACK for it was sent within `minIntervalMs` before `now`.
  /// A key repeated in `keys` is due at most once.
  public func ackDue(keys: [String], now: Int64, minIntervalMs: Int64) throws(StoreError) -> [Bool] {
    guard !keys.isEmpty else { return [] }
    return try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        """
        INSERT INTO ack_state (key, last_sent_at) VALUES (?1, ?2)
        ON CONFLICT (key) DO UPDATE SET last_sent_at = excluded.last_sent_at
        WHERE excluded.last_sent_at - ack_state.last_sent_at >= ?3
          OR excluded.last_sent_at < ack_state.last_sent_at
        """)
      var due: [Bool] = []
      due.reserveCapacity(keys.count)
      for key in keys {
        defer { statement.reset() }
        try statement.bind(1, key)
        try statement.bind(2, now)
        try statement.bind(3, max(1, minIntervalMs))
        try statement.run()
        due.append(changes > 0)
      }
      return due
    }
  }
}
