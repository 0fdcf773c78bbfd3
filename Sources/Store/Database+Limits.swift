/// What the responder's global caps read and write (`[limits]` in the config): how many stations there
/// are, how many avatar bytes are stored, trimming a station's devices, and the hit counters `/metrics`
/// shows. The responder calls these inside its one `writeBatch` per register or heartbeat, so a check
/// and the write it guards see the same data.
extension Database {
  /// The meta key holding the running total of stored avatar image bytes (kept by the triggers of
  /// `sql/004_avatar_bytes.sql`; never written from Swift).
  static let avatarBytesKey = "avatar_bytes"

  /// Whether a station is stored under `address` (any case).
  public func hasStation(_ address: String) throws(StoreError) -> Bool {
    let statement = try prepared("SELECT 1 FROM stations WHERE address = ?1")
    defer { statement.reset() }
    try statement.bind(1, address.canonicalAddress)
    return try statement.step()
  }

  /// The meta key holding the number of stored stations (kept by the triggers of
  /// `sql/011_station_count.sql`; never written from Swift).
  static let stationCountKey = "station_count"

  /// How many stations are stored, live or expired: the running count in `meta`, one row read whatever
  /// the number of stations. Counts the table only when that row is missing or garbled (a database
  /// edited by hand).
  public func stationCount() throws(StoreError) -> Int {
    let kept = try prepared(
      "SELECT CAST(value AS INTEGER), value GLOB '[0-9]*' AND NOT value GLOB '*[^0-9]*' FROM meta WHERE key = ?1"
    )
    do {
      defer { kept.reset() }
      try kept.bind(1, Self.stationCountKey)
      if try kept.step(), kept.int(1) == 1 { return kept.int(0) }
    }
    let counted = try prepared("SELECT count(*) FROM stations")
    defer { counted.reset() }
    return try counted.step() ? counted.int(0) : 0
  }

  /// The bytes of every stored avatar image together (base64 text, as stored), read from the running
  /// total in `meta`; 0 when it is missing or garbled.
  public func storedAvatarBytes() throws(StoreError) -> Int64 {
    let statement = try prepared("SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?1")
    defer { statement.reset() }
    try statement.bind(1, Self.avatarBytesKey)
    return try statement.step() ? max(0, statement.int64(0)) : 0
  }

  /// The bytes of the avatar image stored for `address` (any case); 0 when it has none or is unknown.
  public func avatarImageBytes(of address: String) throws(StoreError) -> Int64 {
    let statement = try prepared(
      "SELECT coalesce(length(CAST(avatar_image AS BLOB)), 0) FROM stations WHERE address = ?1")
    defer { statement.reset() }
    try statement.bind(1, address.canonicalAddress)
    return try statement.step() ? statement.int64(0) : 0
  }

  /// Keeps at most `limit` (at least 1) devices of `station`, and `sparing` (the token just registered) whatever
  /// its times. With `freshSince` (epoch ms), the devices refreshed since then are kept first, the oldest
  /// registered among them first (then the stale ones, the most recently refreshed first), so a burst of new tokens pushes out stale devices and then each other, never
  /// the phone that has been there longest and still checks in (docs/design.md "Who may do what"; of two registered
  /// in the same millisecond, the first); without it,
  /// the most recently refreshed are kept. With `keyed`, only that class of
  /// devices is counted and trimmed (a claimed station's owner's devices, or its keyless pool), so the
  /// other class is never pushed out. With `registeredSince` (epoch ms), only devices registered then or later
  /// are counted and trimmed: a claimed station's keyless pool spares the devices it had before the claim
  /// (docs/design.md "Who may do what": a claim never evicts a device it did not bring). Returns how many were
  /// deleted.
  @discardableResult
  public func trimDevices(
    of station: String, keeping limit: Int, sparing token: String?, keyed: Bool? = nil,
    registeredSince: Int64? = nil, freshSince: Int64? = nil
  ) throws(StoreError) -> Int {
    guard limit >= 1 else { throw .invalidArgument("a station keeps at least 1 device (got \(limit))") }
    return try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        """
        DELETE FROM devices WHERE station = ?1 AND token IS NOT ?3 AND (?4 IS NULL OR keyed = ?4)
          AND (?5 IS NULL OR registered_at >= ?5) AND id NOT IN (
          SELECT id FROM devices WHERE station = ?1 AND (?4 IS NULL OR keyed = ?4)
            AND (?5 IS NULL OR registered_at >= ?5)
          ORDER BY token IS ?3 DESC,
            CASE WHEN ?6 IS NULL THEN 0 ELSE refreshed_at >= ?6 END DESC,
            CASE WHEN ?6 IS NOT NULL AND refreshed_at >= ?6 THEN registered_at ELSE -refreshed_at END ASC,
            CASE WHEN ?6 IS NOT NULL AND refreshed_at >= ?6 THEN id ELSE -id END ASC LIMIT ?2)
        """)
      defer { statement.reset() }
      try statement.bind(1, station.canonicalAddress)
      try statement.bind(2, limit)
      try statement.bind(3, token)
      try statement.bind(4, keyed)
      try statement.bind(5, registeredSince)
      try statement.bind(6, freshSince)
      try statement.run()
      return changes
    }
  }

  /// Adds `amount` to the hits of `limit` (joins the caller's `writeBatch`).
  public func countLimitHit(_ limit: LimitName, _ amount: Int = 1) throws(StoreError) {
    guard amount > 0 else { return }
    try writeTransaction { () throws(StoreError) in
      try addToMetaCounter(LimitStatus.key(limit), amount)
    }
  }

  /// The limits' hit counters and the stored avatar bytes, from one snapshot. Never writes.
  public func limitStatus() throws(StoreError) -> LimitStatus {
    try readTransaction { () throws(StoreError) in
      LimitStatus(
        metaRows: try metaValues(prefix: LimitStatus.keyPrefix), avatarBytes: try storedAvatarBytes())
    }
  }
}
