extension Database {
  /// Takes the listener lease for `holder` until `now + ttlMs` when it is free, expired or
  /// already held by `holder` (then it is renewed). Returns false when another holder has it.
  public func acquireLease(holder: String, now: Int64, ttlMs: Int64) throws(StoreError) -> Bool {
    guard !holder.isEmpty else { throw .invalidArgument("empty lease holder") }
    return try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        """
        INSERT INTO listener_lease (id, holder, acquired_at, expires_at) VALUES (1, ?1, ?2, ?3)
        ON CONFLICT (id) DO UPDATE SET
          acquired_at = CASE WHEN listener_lease.holder = excluded.holder
            THEN listener_lease.acquired_at ELSE excluded.acquired_at END,
          holder = excluded.holder,
          expires_at = excluded.expires_at
        WHERE listener_lease.holder = excluded.holder OR listener_lease.expires_at <= excluded.acquired_at
        """)
      defer { statement.reset() }
      try statement.bind(1, holder)
      try statement.bind(2, now)
      try statement.bind(3, now + ttlMs)
      try statement.run()
      return changes > 0
    }
  }

  /// Gives the lease up if `holder` has it (a clean shutdown), so a successor need not wait.
  public func releaseLease(holder: String) throws(StoreError) {
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared("DELETE FROM listener_lease WHERE holder = ?1")
      defer { statement.reset() }
      try statement.bind(1, holder)
      try statement.run()
    }
  }

  /// The current lease, expired or not, or nil when nobody holds one.
  public func lease() throws(StoreError) -> LeaseRecord? {
    let statement = try prepared("SELECT holder, acquired_at, expires_at FROM listener_lease WHERE id = 1")
    defer { statement.reset() }
    guard try statement.step() else { return nil }
    return LeaseRecord(
      holder: statement.text(0), acquiredAt: statement.int64(1), expiresAt: statement.int64(2))
  }

  /// Stores a small setting or counter under `key`. The store's own keys (the cursor's
  /// high-water mark) are refused.
  public func setMeta(_ key: String, _ value: String) throws(StoreError) {
    guard key != Self.lastMessageTimestampKey else {
      throw .invalidArgument("meta key \(key) belongs to the store")
    }
    try writeTransaction { () throws(StoreError) in try setMetaValue(key, value) }
  }

  /// The value stored under `key`, or nil.
  public func meta(_ key: String) throws(StoreError) -> String? {
    let statement = try prepared("SELECT value FROM meta WHERE key = ?1")
    defer { statement.reset() }
    try statement.bind(1, key)
    return try statement.step() ? statement.text(0) : nil
  }

  /// Upserts a meta row; the caller holds the write transaction.
  func setMetaValue(_ key: String, _ value: String) throws(StoreError) {
    let statement = try prepared(
      "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
    defer { statement.reset() }
    try statement.bind(1, key)
    try statement.bind(2, value)
    try statement.run()
  }

  /// Deletes bookkeeping that no longer matters: dedup keys whose window ended, ACK send
  /// times older than `ackRetentionMs`, and ended rate-limit windows. The listener calls it
  /// now and then; correctness never depends on it (expired rows are ignored anyway).
  @discardableResult
  public func pruneExpired(now: Int64, ackRetentionMs: Int64 = 3_600_000) throws(StoreError) -> PruneResult {
    try writeTransaction { () throws(StoreError) in
      var counts: [Int] = []
      for sql in [
        "DELETE FROM dedup WHERE expires_at <= ?1",
        "DELETE FROM ack_state WHERE last_sent_at < ?1",
        "DELETE FROM rate_limits WHERE expires_at <= ?1",
      ] {
        let statement = try prepared(sql)
        defer { statement.reset() }
        try statement.bind(1, sql.contains("ack_state") ? now - ackRetentionMs : now)
        try statement.run()
        counts.append(changes)
      }
      return PruneResult(dedup: counts[0], acks: counts[1], rateLimits: counts[2])
    }
  }
}
