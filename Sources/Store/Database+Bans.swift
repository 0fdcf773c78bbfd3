/// The operator's bans (`sql/014_bans.sql`): made and lifted by `aprs-cloud ban` and `unban`, read by the
/// listener's writer in each batch's transaction and by the responder for each request.
extension Database {
  /// Makes or replaces the ban on `ban.target` (a second ban of the same target updates its reason and end).
  public func ban(_ ban: Ban) throws(StoreError) {
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        """
        INSERT INTO bans (kind, value, reason, created_at, until) VALUES (?1, ?2, ?3, ?4, ?5)
        ON CONFLICT (kind, value) DO UPDATE SET reason = excluded.reason, created_at = excluded.created_at,
          until = excluded.until
        """)
      defer { statement.reset() }
      try statement.bind(1, ban.target.kind)
      try statement.bind(2, ban.target.value)
      try statement.bind(3, ban.reason)
      try statement.bind(4, ban.createdAt)
      try statement.bind(5, ban.until)
      try statement.run()
    }
  }

  /// Lifts the ban on `target`; false when there was none.
  @discardableResult
  public func unban(_ target: BanTarget) throws(StoreError) -> Bool {
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared("DELETE FROM bans WHERE kind = ?1 AND value = ?2 RETURNING 1")
      defer { statement.reset() }
      try statement.bind(1, target.kind)
      try statement.bind(2, target.value)
      return try statement.step()
    }
  }

  /// Every ban in force at `now` (ms), calls first, each kind in the order made.
  public func bans(now: Int64) throws(StoreError) -> [Ban] {
    let statement = try prepared(
      """
      SELECT kind, value, reason, created_at, until FROM bans WHERE until IS NULL OR until > ?1
      ORDER BY kind DESC, created_at, value
      """)
    defer { statement.reset() }
    try statement.bind(1, now)
    var bans: [Ban] = []
    while try statement.step() {
      let value = statement.text(1)
      let target: BanTarget?
      switch statement.optionalValue(0, as: BanKind.self) {
      case .call: target = CallList.normalized(value).map(BanTarget.call)
      case .address: target = BannedBlock(parsing: value).map(BanTarget.address)
      case nil: target = nil
      }
      // A row edited by hand into something unreadable bans nothing.
      guard let target else { continue }
      bans.append(
        Ban(
          target: target, reason: statement.text(2), createdAt: statement.int64(3),
          until: statement.optionalInt64(4)))
    }
    return bans
  }

  /// The bans in force at `now`, ready for matching (one query; the table holds a handful of rows).
  public func activeBans(now: Int64) throws(StoreError) -> ActiveBans {
    var calls: [String] = []
    var blocks: [BannedBlock] = []
    for ban in try bans(now: now) {
      switch ban.target {
      case .call(let call): calls.append(call)
      case .address(let block): blocks.append(block)
      }
    }
    return ActiveBans(calls: CallList(trusted: calls), blocks: blocks)
  }
}
