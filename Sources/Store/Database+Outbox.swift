/// The outbox: the pushes the listener queued with each received message, and the push sender's bookkeeping
/// of what it did with them.
extension Database {
  /// Pending pushes due at `now` (next attempt not in the future), oldest first, with their
  /// messages (a room entry with its room). Pushes whose message rolled off the ring are gone with it.
  public func dueOutbox(now: Int64, limit: Int = 100) throws(StoreError) -> [OutboxEntry] {
    let statement = try prepared(
      """
      SELECT outbox.id, outbox.station, outbox.message_id, outbox.created_at, outbox.attempts,
             outbox.next_attempt_at, messages.direction, messages.peer, messages.text,
             messages.msgno, messages.timestamp, sends.state, messages.addressee, messages.kind,
             messages.subscription, messages.event, messages.latitude, messages.longitude,
             messages.answered_by, messages.room
      FROM outbox JOIN messages ON messages.id = outbox.message_id
      LEFT JOIN sends ON sends.message_id = outbox.message_id
      WHERE outbox.state = 'pending' AND outbox.next_attempt_at <= ?1
      ORDER BY outbox.id LIMIT ?2
      """)
    defer { statement.reset() }
    try statement.bind(1, now)
    try statement.bind(2, limit)
    var entries: [OutboxEntry] = []
    while try statement.step() {
      // A `sent` message's push is its `sendFailed` notice: it carries the send's state.
      let state: SendState? = statement.optionalValue(11)
      entries.append(
        OutboxEntry(
          id: statement.int64(0), station: statement.text(1), messageID: statement.int64(2),
          message: StoredMessage(
            direction: try statement.value(6), peer: statement.text(7), text: statement.text(8),
            msgno: statement.optionalText(9), timestamp: statement.int64(10), state: state,
            to: statement.optionalText(12), entry: Self.subscriptionEntry(statement, from: 13, room: 19),
            answeredBy: statement.optionalValue(18)),
          createdAt: statement.int64(3), attempts: statement.int(4), nextAttemptAt: statement.int64(5)))
    }
    return entries
  }

  /// The earliest time a pending push comes due after `now` (epoch ms): when the push sender next has work
  /// without being woken (a retry, a `Retry-After`). Nil when no pending push waits. Uses `outbox_due`.
  public func nextOutboxAttempt(after now: Int64) throws(StoreError) -> Int64? {
    let statement = try prepared(
      "SELECT min(next_attempt_at) FROM outbox WHERE state = 'pending' AND next_attempt_at > ?1")
    defer { statement.reset() }
    try statement.bind(1, now)
    guard try statement.step() else { return nil }
    return statement.optionalInt64(0)
  }

  /// Removes pushes that were sent (or are not worth sending any more).
  public func completeOutbox(ids: [Int64]) throws(StoreError) {
    try updateOutbox(ids: ids, sql: "DELETE FROM outbox WHERE id = ?1", nextAttemptAt: nil)
  }

  /// Counts a failed attempt and defers the pushes until `nextAttemptAt`.
  public func rescheduleOutbox(ids: [Int64], nextAttemptAt: Int64) throws(StoreError) {
    try updateOutbox(
      ids: ids, sql: "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?2 WHERE id = ?1",
      nextAttemptAt: nextAttemptAt)
  }

  /// Marks pushes as failed for good (kept for inspection until their message rolls off).
  public func failOutbox(ids: [Int64]) throws(StoreError) {
    try updateOutbox(
      ids: ids, sql: "UPDATE outbox SET state = 'failed', attempts = attempts + 1 WHERE id = ?1",
      nextAttemptAt: nil)
  }

  private func updateOutbox(ids: [Int64], sql: String, nextAttemptAt: Int64?) throws(StoreError) {
    guard !ids.isEmpty else { return }
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared(sql)
      for id in ids {
        defer { statement.reset() }
        try statement.bind(1, id)
        if let nextAttemptAt { try statement.bind(2, nextAttemptAt) }
        try statement.run()
      }
    }
  }

  /// Applies the push sender's bookkeeping for one round in ONE write transaction: pushes done
  /// (deleted), failed for good (kept as `failed`), rescheduled (attempts + 1, not before the
  /// given time), and dead tokens deleted (each with an optional `refreshedBefore` bound, see
  /// `deleteDevice(token:refreshedBefore:)`), and the APNs environment that accepted an iOS
  /// device remembered (`apnsEnvironments`, see `DeviceRecord.apnsEnvironment`). Returns the
  /// tokens actually deleted.
  @discardableResult
  public func applyPushResults(
    completed: [Int64], failed: [Int64], rescheduled: [(id: Int64, nextAttemptAt: Int64)],
    deadTokens: [(token: String, refreshedBefore: Int64?)],
    apnsEnvironments: [(token: String, environment: APNsEnvironment)] = []
  ) throws(StoreError) -> [String] {
    guard
      !completed.isEmpty || !failed.isEmpty || !rescheduled.isEmpty || !deadTokens.isEmpty
        || !apnsEnvironments.isEmpty
    else {
      return []
    }
    return try writeTransaction { () throws(StoreError) in
      if !apnsEnvironments.isEmpty {
        let statement = try prepared(
          "UPDATE devices SET apns_environment = ?2 WHERE token = ?1 AND platform = 'ios'")
        for (token, environment) in apnsEnvironments {
          defer { statement.reset() }
          try statement.bind(1, token)
          try statement.bind(2, environment)
          try statement.run()
        }
      }
      if !completed.isEmpty {
        let statement = try prepared("DELETE FROM outbox WHERE id = ?1")
        for id in completed {
          defer { statement.reset() }
          try statement.bind(1, id)
          try statement.run()
        }
      }
      if !failed.isEmpty {
        let statement = try prepared(
          "UPDATE outbox SET state = 'failed', attempts = attempts + 1 WHERE id = ?1")
        for id in failed {
          defer { statement.reset() }
          try statement.bind(1, id)
          try statement.run()
        }
      }
      if !rescheduled.isEmpty {
        let statement = try prepared(
          "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?2 WHERE id = ?1")
        for (id, nextAttemptAt) in rescheduled {
          defer { statement.reset() }
          try statement.bind(1, id)
          try statement.bind(2, nextAttemptAt)
          try statement.run()
        }
      }
      var deleted: [String] = []
      if !deadTokens.isEmpty {
        let statement = try prepared(
          "DELETE FROM devices WHERE token = ?1 AND (?2 IS NULL OR refreshed_at < ?2)")
        for (token, refreshedBefore) in deadTokens {
          defer { statement.reset() }
          try statement.bind(1, token)
          try statement.bind(2, refreshedBefore)
          try statement.run()
          if changes > 0 { deleted.append(token) }
        }
      }
      return deleted
    }
  }
}
