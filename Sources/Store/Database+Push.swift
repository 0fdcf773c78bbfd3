/// A station's avatar as a push about one of its messages carries it.
public enum PushAvatar: Sendable, Equatable {
  /// Never set, or the sender is not a known station.
  case none
  /// A stored avatar.
  case stored(Avatar)
  /// A known station that cleared its avatar (the push carries a tombstone).
  case cleared
}

extension Database {
  /// The distinct senders of the station's messages newer than its last sync cursor (the ones a
  /// push's `count` counts), newest first, at most `limit`.
  public func unpulledSenders(station: String, limit: Int = 5) throws(StoreError) -> [String] {
    let statement = try prepared(
      """
      SELECT messages.peer, max(messages.timestamp) AS newest
      FROM messages JOIN stations ON stations.address = messages.station
      WHERE messages.station = ?1 AND messages.timestamp > stations.last_sync_cursor
        AND messages.direction = 'received'
      GROUP BY messages.peer ORDER BY newest DESC LIMIT ?2
      """)
    defer { statement.reset() }
    try statement.bind(1, station.canonicalAddress)
    try statement.bind(2, limit)
    var senders: [String] = []
    while try statement.step() { senders.append(statement.text(0)) }
    return senders
  }

  /// The avatar of `address` (any case) for a push: stored, cleared (a known station that
  /// cleared it), or none (never set, or not a known station).
  public func pushAvatar(of address: String) throws(StoreError) -> PushAvatar {
    let statement = try prepared(
      "SELECT avatar_icon, avatar_image, avatar_hash, avatar_cleared_at FROM stations WHERE address = ?1")
    defer { statement.reset() }
    try statement.bind(1, address.canonicalAddress)
    guard try statement.step() else { return .none }
    if !statement.isNull(2) {
      return .stored(
        Avatar(icon: statement.optionalText(0), image: statement.optionalText(1), hash: statement.text(2)))
    }
    return statement.isNull(3) ? .none : .cleared
  }

  /// Drops a token the push provider called invalid, unless it was refreshed (registered or
  /// heartbeated) at or after `refreshedBefore`: APNs says when it learned the token was dead,
  /// and a token the app sent again after that may be alive. Returns true when it was deleted.
  @discardableResult
  public func deleteDevice(token: String, refreshedBefore: Int64) throws(StoreError) -> Bool {
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared("DELETE FROM devices WHERE token = ?1 AND refreshed_at < ?2")
      defer { statement.reset() }
      try statement.bind(1, token)
      try statement.bind(2, refreshedBefore)
      try statement.run()
      return changes > 0
    }
  }

  /// Applies the push sender's bookkeeping for one round in ONE write transaction: pushes done
  /// (deleted), failed for good (kept as `failed`), rescheduled (attempts + 1, not before the
  /// given time), and dead tokens deleted (each with an optional `refreshedBefore` bound, see
  /// `deleteDevice(token:refreshedBefore:)`). Returns the tokens actually deleted.
  @discardableResult
  public func applyPushResults(
    completed: [Int64], failed: [Int64], rescheduled: [(id: Int64, nextAttemptAt: Int64)],
    deadTokens: [(token: String, refreshedBefore: Int64?)]
  ) throws(StoreError) -> [String] {
    guard !completed.isEmpty || !failed.isEmpty || !rescheduled.isEmpty || !deadTokens.isEmpty else {
      return []
    }
    return try writeTransaction { () throws(StoreError) in
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
