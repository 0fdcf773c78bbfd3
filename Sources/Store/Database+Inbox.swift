/// The inbox that never loses a message unseen (`sql/017_inbox.sql`): what each keyed device pulled, and the
/// messages evicted before the station pulled them.
extension Database {
  /// The most messages a station with `retention` `untilPulled` may keep (`[server] maxUnpulledPerStation`).
  public var maxUnpulledPerStation: Int { options.maxUnpulledPerStation }

  /// How many of a station's own messages (its direct ring) `retention` keeps here: `[server] ringSize`, or the
  /// `untilPulled` `max`, at most `maxUnpulledPerStation` and never fewer than the ring. The other rings keep
  /// `ringSize` whatever the retention.
  public func retainedMessages(_ retention: Retention) -> Int {
    switch retention {
    case .ring: options.ringSize
    case .untilPulled(let max): Swift.max(options.ringSize, Swift.min(max, options.maxUnpulledPerStation))
    }
  }

  /// The newest timestamp every keyed device of `station` (canonical) pulled: the least `pulled_through` of its
  /// devices registered with the key; with none, the station's cursor. Messages after it are kept by
  /// ``Retention/untilPulled(max:)``.
  func pulledFloor(_ station: String) throws(StoreError) -> Int64 {
    let statement = try prepared(
      """
      SELECT coalesce(
        (SELECT min(pulled_through) FROM devices WHERE station = ?1 AND keyed = 1),
        (SELECT last_sync_cursor FROM stations WHERE address = ?1), 0)
      """)
    defer { statement.reset() }
    try statement.bind(1, station)
    return try statement.step() ? statement.int64(0) : 0
  }

  /// The `max` of `station`'s `retention` `untilPulled` (canonical address), nil for the ring: the one column
  /// the ring trim needs, not the whole settings.
  func retentionMax(_ station: String) throws(StoreError) -> Int? {
    let statement = try prepared("SELECT retention_max FROM station_settings WHERE station = ?1")
    defer { statement.reset() }
    try statement.bind(1, station)
    return try statement.step() ? statement.optionalInt64(0).map { Int($0) } : nil
  }

  /// The meta key counting every unpulled message ever evicted (`recordDrop`), for `/metrics`: the `drops` rows
  /// themselves are pruned after 30 days, this count never goes down.
  static let droppedUnpulledKey = "dropped_unpulled_total"

  /// Records that storing the message with timestamp `at` evicted `count` unpulled messages of `station`, and
  /// counts them in ``droppedUnpulledKey``.
  func recordDrop(_ station: String, at: Int64, count: Int) throws(StoreError) {
    let total = try prepared(
      """
      INSERT INTO meta (key, value) VALUES (?1, ?2)
      ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + excluded.value
      """)
    do {
      defer { total.reset() }
      try total.bind(1, Self.droppedUnpulledKey)
      try total.bind(2, count)
      try total.run()
    }
    let statement = try prepared(
      """
      INSERT INTO drops (station, at, count) VALUES (?1, ?2, ?3)
      ON CONFLICT (station, at) DO UPDATE SET count = count + excluded.count
      """)
    defer { statement.reset() }
    try statement.bind(1, station)
    try statement.bind(2, at)
    try statement.bind(3, count)
    try statement.run()
  }

  /// How many of `station`'s messages were evicted unpulled after `since` (a cursor, epoch ms): what a sync with
  /// `want:["inbox"]` reports as `dropped`.
  public func droppedCount(station: String, since: Int64) throws(StoreError) -> Int {
    let statement = try prepared("SELECT coalesce(sum(count), 0) FROM drops WHERE station = ?1 AND at > ?2")
    defer { statement.reset() }
    try statement.bind(1, station.canonicalAddress)
    try statement.bind(2, since)
    return try statement.step() ? statement.int(0) : 0
  }

  /// How many of `station`'s messages were evicted after its cursor, before any device pulled them: added to a
  /// push's `count`, so it is never under the number that came.
  public func droppedSinceCursor(station: String) throws(StoreError) -> Int {
    let statement = try prepared(
      """
      SELECT coalesce(sum(drops.count), 0) FROM drops JOIN stations ON stations.address = drops.station
      WHERE drops.station = ?1 AND drops.at > stations.last_sync_cursor
      """)
    defer { statement.reset() }
    try statement.bind(1, station.canonicalAddress)
    return try statement.step() ? statement.int(0) : 0
  }

  /// Marks that the keyed device with `token` of `station` pulled everything up to `through` (epoch ms).
  public func markDevicePulled(station: String, token: String, through: Int64) throws(StoreError) {
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        """
        UPDATE devices SET pulled_through = ?3
        WHERE station = ?1 AND (token = ?2 OR token = lower(?2)) AND pulled_through < ?3
        """)
      defer { statement.reset() }
      try statement.bind(1, station.canonicalAddress)
      try statement.bind(2, token)
      try statement.bind(3, through)
      try statement.run()
    }
  }

  /// The oldest timestamp `station` still holds in its own ring (nil when empty): what a sync with
  /// `want:["inbox"]` names beside `dropped`.
  public func oldestHeld(station: String) throws(StoreError) -> Int64? {
    let statement = try prepared("SELECT min(timestamp) FROM messages WHERE station = ?1 AND ring = 0")
    defer { statement.reset() }
    try statement.bind(1, station.canonicalAddress)
    return try statement.step() ? statement.optionalInt64(0) : nil
  }
}
