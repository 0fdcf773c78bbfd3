/// Moving what is in flight by a step of the wall clock (`WallClockSteps`, Platform), so that the durations its
/// stored wall-clock times stand for stay what they were.
extension Database {
  /// Moves the times (`created_at`, `last_sent_at`, `next_at`, `expires_at`) of every pending send up to id
  /// `throughID` (those there before the step; later ones were stamped after it) by `stepMs`, in one write
  /// transaction: after a step of −1 h the next copy is still due 31 s after the last one, after +1 h the send
  /// does not expire an hour early. Returns how many sends moved.
  @discardableResult
  public func shiftPendingSends(byMs stepMs: Int64, throughID: Int64) throws(StoreError) -> Int {
    guard stepMs != 0 else { return 0 }
    return try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        """
        UPDATE sends SET created_at = created_at + ?1, last_sent_at = last_sent_at + ?1, next_at = next_at + ?1,
          expires_at = expires_at + ?1
        WHERE state = 'pending' AND message_id <= ?2
        """)
      defer { statement.reset() }
      try statement.bind(1, stepMs)
      try statement.bind(2, throughID)
      try statement.run()
      return changes
    }
  }

  /// Moves `created_at` and `next_attempt_at` of every outbox row up to id `throughID` by `stepMs`, in one write
  /// transaction: a push waiting for its coalescing window or a retry keeps its wait, and a forward step does not
  /// make it older than `[messaging] maxAge` (dropped unsent). Returns how many rows moved.
  @discardableResult
  public func shiftOutbox(byMs stepMs: Int64, throughID: Int64) throws(StoreError) -> Int {
    guard stepMs != 0 else { return 0 }
    return try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        """
        UPDATE outbox SET created_at = created_at + ?1, next_attempt_at = next_attempt_at + ?1 WHERE id <= ?2
        """)
      defer { statement.reset() }
      try statement.bind(1, stepMs)
      try statement.bind(2, throughID)
      try statement.run()
      return changes
    }
  }

  /// The newest send's id (0 when none): what ``shiftPendingSends(byMs:throughID:)`` moves after a step.
  public func newestSendID() throws(StoreError) -> Int64 {
    let statement = try prepared("SELECT coalesce(max(message_id), 0) FROM sends")
    defer { statement.reset() }
    return try statement.step() ? statement.int64(0) : 0
  }

  /// The newest outbox row's id (0 when none): what ``shiftOutbox(byMs:throughID:)`` moves after a step.
  public func newestOutboxID() throws(StoreError) -> Int64 {
    let statement = try prepared("SELECT coalesce(max(id), 0) FROM outbox")
    defer { statement.reset() }
    return try statement.step() ? statement.int64(0) : 0
  }
}
