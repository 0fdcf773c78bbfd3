/// The listener lease: at most one listener runs per database. Its holder renews it every few seconds; a
/// successor takes it once it lapses, at once after a clean shutdown released it, or at once with
/// `takeOverLease` when it knows the holder is dead (on one host the listener's lock file tells).
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

  /// Takes the lease from `staleHolder`, expired or not, for `holder` until `now + ttlMs`: only if
  /// `staleHolder` still has it (compare-and-set), so a listener that took it meanwhile keeps it.
  /// The caller must know that `staleHolder` is dead (the listener holds the host's lock file, so
  /// any other holder on this host is gone). Returns false when someone else holds it now.
  public func takeOverLease(from staleHolder: String, holder: String, now: Int64, ttlMs: Int64)
    throws(StoreError)
    -> Bool
  {
    guard !holder.isEmpty else { throw .invalidArgument("empty lease holder") }
    return try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        "UPDATE listener_lease SET holder = ?2, acquired_at = ?3, expires_at = ?4 WHERE id = 1 AND holder = ?1"
      )
      defer { statement.reset() }
      try statement.bind(1, staleHolder)
      try statement.bind(2, holder)
      try statement.bind(3, now)
      try statement.bind(4, now + ttlMs)
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
}

/// The listener lease: who may run the one listener, and until when.
public struct LeaseRecord: Sendable, Equatable {
  /// The holder's identity (for example `host:pid`).
  public var holder: String
  /// When this holder first took the lease, epoch ms.
  public var acquiredAt: Int64
  /// When the lease lapses unless renewed, epoch ms.
  public var expiresAt: Int64
}
