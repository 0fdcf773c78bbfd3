#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What the processes sharing the database say about themselves, and what the database says about
/// itself: the status records the listener, the push sender and maintenance publish in `meta` (see
/// `StatusTypes.swift` for their fields and encoding), and the counts `/metrics` and `aprs-cloud status`
/// show. The readers never write, so they are safe on a read-only connection.
extension Database {
  // MARK: The listener

  /// Publishes the listener's status, every field in ONE write transaction (a reader never sees half of it).
  public func publishListenerStatus(_ status: ListenerStatus) throws(StoreError) {
    try setMetaValues(status.metaRows)
  }

  /// The listener's last published status; `state` is nil when no listener ever published one here.
  public func listenerStatus() throws(StoreError) -> ListenerStatus {
    ListenerStatus(metaRows: try metaValues(prefix: ListenerStatus.keyPrefix))
  }

  // MARK: The push sender

  /// Publishes one push provider's state.
  public func publishPushState(_ state: PushProviderState, for platform: DevicePlatform) throws(StoreError) {
    try setMeta(PushStatus.stateKey(platform), state.description)
  }

  /// Publishes the push sender's counters, in ONE write transaction (joins a `writeBatch`).
  public func publishPushCounters(_ counters: PushCounters) throws(StoreError) {
    try setMetaValues(counters.metaRows)
  }

  /// What the push sender last published: each provider's state (`.off` when none), its warning and its
  /// counters.
  public func pushStatus() throws(StoreError) -> PushStatus {
    PushStatus(metaRows: try metaValues(prefix: PushStatus.keyPrefix))
  }

  /// Publishes one push provider's warning (nil clears it): a provider that sends but is misconfigured, shown
  /// in `/health`'s `degraded` list.
  public func publishPushWarning(_ warning: String?, for platform: DevicePlatform) throws(StoreError) {
    try setMeta(PushStatus.warningKey(platform), warning ?? "")
  }

  // MARK: Maintenance

  /// The store's maintenance totals (what `pruneStations(now:expiryMs:)` deleted since the database was
  /// created).
  public func maintenanceStatus() throws(StoreError) -> MaintenanceStatus {
    MaintenanceStatus(metaRows: try metaValues(prefix: MaintenanceStatus.keyPrefix))
  }

  // MARK: The meta table

  /// The meta keys only the store itself writes: the cursor's high-water mark, the running total
  /// of avatar bytes and the station count (both kept by triggers).
  static let storeOwnedMetaKeys: Set<String> = [
    lastMessageTimestampKey, avatarBytesKey, stationCountKey, droppedUnpulledKey,
  ]

  /// Stores a small value under `key`. The store's own keys (the cursor's high-water mark, the
  /// avatar byte total) are refused.
  func setMeta(_ key: String, _ value: String) throws(StoreError) {
    guard !Self.storeOwnedMetaKeys.contains(key) else {
      throw .invalidArgument("meta key \(key) belongs to the store")
    }
    try writeTransaction { () throws(StoreError) in try setMetaValue(key, value) }
  }

  /// The value stored under `key`, or nil.
  func meta(_ key: String) throws(StoreError) -> String? {
    let statement = try prepared("SELECT value FROM meta WHERE key = ?1")
    defer { statement.reset() }
    try statement.bind(1, key)
    return try statement.step() ? statement.text(0) : nil
  }

  /// Stores several meta values in ONE write transaction. The store's own keys are refused, as in
  /// `setMeta`.
  func setMetaValues(_ values: [(key: String, value: String)]) throws(StoreError) {
    for (key, _) in values where Self.storeOwnedMetaKeys.contains(key) {
      throw .invalidArgument("meta key \(key) belongs to the store")
    }
    guard !values.isEmpty else { return }
    try writeTransaction { () throws(StoreError) in
      for (key, value) in values { try setMetaValue(key, value) }
    }
  }

  /// Every meta value whose key starts with `prefix`, by key.
  func metaValues(prefix: String) throws(StoreError) -> [String: String] {
    let statement = try prepared("SELECT key, value FROM meta WHERE substr(key, 1, ?2) = ?1")
    defer { statement.reset() }
    try statement.bind(1, prefix)
    try statement.bind(2, prefix.unicodeScalars.count)
    var values: [String: String] = [:]
    while try statement.step() { values[statement.text(0)] = statement.text(1) }
    return values
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

  // MARK: The database's own numbers

  /// The database-derived numbers of `/metrics` and `aprs-cloud status`, from ONE read snapshot
  /// with a handful of aggregate queries (each a scan of a small table or an index).
  ///
  /// A station (and a device) is live while heard (register or heartbeat) within `expiryMs`
  /// before `now`, as `liveStations(now:expiryMs:)` decides for the listener's filter.
  public func stats(now: Int64, expiryMs: Int64) throws(StoreError) -> DatabaseStats {
    let cutoff = now - expiryMs
    return try readTransaction { () throws(StoreError) in
      var stats = DatabaseStats()
      do {
        let statement = try prepared(
          "SELECT count(*), coalesce(sum(heartbeat_at >= ?1), 0) FROM stations")
        defer { statement.reset() }
        try statement.bind(1, cutoff)
        if try statement.step() {
          stats.stations = statement.int(0)
          stats.liveStations = statement.int(1)
        }
      }
      do {
        let statement = try prepared(
          """
          SELECT platform, count(*), coalesce(sum(refreshed_at >= ?1), 0)
          FROM devices GROUP BY platform ORDER BY platform
          """)
        defer { statement.reset() }
        try statement.bind(1, cutoff)
        while try statement.step() {
          guard let platform: DevicePlatform = statement.optionalValue(0) else { continue }
          stats.devices[platform] = DeviceCount(total: statement.int(1), live: statement.int(2))
        }
      }
      do {
        let statement = try prepared("SELECT direction, count(*) FROM messages GROUP BY direction")
        defer { statement.reset() }
        while try statement.step() { stats.messages[try statement.value(0)] = statement.int(1) }
      }
      do {
        let statement = try prepared(
          "SELECT state, count(*), min(created_at) FROM outbox GROUP BY state ORDER BY state")
        defer { statement.reset() }
        while try statement.step() {
          switch statement.text(0) {
          case "pending":
            stats.outboxPending = statement.int(1)
            stats.oldestPendingAt = statement.optionalInt64(2)
          case "failed": stats.outboxFailed = statement.int(1)
          default: break
          }
        }
      }
      // The newest message still stored (the unique timestamp's index answers it), not the cursor's high-water
      // mark, which read markers and sends move too.
      let newest = try prepared("SELECT max(timestamp) FROM messages")
      do {
        defer { newest.reset() }
        stats.lastMessageTimestamp = try newest.step() ? newest.optionalInt64(0) ?? 0 : 0
      }
      stats.droppedUnpulled = Int(try meta(Self.droppedUnpulledKey) ?? "") ?? 0
      stats.schemaVersion = try schemaVersion()
      stats.pageSize = Int(try scalarText("PRAGMA page_size") ?? "") ?? 0
      stats.pageCount = Int(try scalarText("PRAGMA page_count") ?? "") ?? 0
      stats.freePages = Int(try scalarText("PRAGMA freelist_count") ?? "") ?? 0
      stats.lease = try lease()
      return stats
    }
  }

  /// The size of the write-ahead log file beside the database in bytes (0 when there is none).
  /// It grows while readers hold old snapshots and shrinks only with a TRUNCATE checkpoint.
  public func walFileBytes() -> Int64 {
    var info = stat()
    guard stat(path + "-wal", &info) == 0 else { return 0 }
    return Int64(info.st_size)
  }
}

/// What `Database.stats(now:expiryMs:)` counted, from one snapshot.
public struct DatabaseStats: Sendable, Equatable {
  /// Registered stations, live or not.
  public var stations = 0
  /// Stations heard within the expiry window (the listener's filter holds these).
  public var liveStations = 0
  /// Push tokens by platform (tokens of a platform this build does not know are left out).
  public var devices: [DevicePlatform: DeviceCount] = [:]
  /// Stored messages by direction.
  public var messages: [MessageDirection: Int] = [:]
  /// Pushes waiting in the outbox (including ones waiting for a retry).
  public var outboxPending = 0
  /// Pushes given up on (kept until their message rolls off).
  public var outboxFailed = 0
  /// When the oldest pending push was queued (epoch ms), nil when none is pending.
  public var oldestPendingAt: Int64?
  /// Messages evicted from a station's ring before it pulled them (the `dropped` of `want:["inbox"]`
  /// answers), counted since the database was made.
  public var droppedUnpulled = 0
  /// The timestamp of the newest message stored (received or sent), epoch ms; 0 when none is.
  public var lastMessageTimestamp: Int64 = 0
  /// `PRAGMA user_version`.
  public var schemaVersion = 0
  /// `PRAGMA page_size`, bytes.
  public var pageSize = 0
  /// `PRAGMA page_count`: the main file's pages (its size is `pageSize * pageCount`).
  public var pageCount = 0
  /// `PRAGMA freelist_count`: unused pages inside the file.
  public var freePages = 0
  /// The listener lease, expired or not; nil when no listener holds or held one.
  public var lease: LeaseRecord?

  public init() {}

  /// Every stored message, whatever its direction.
  public var totalMessages: Int { messages.values.reduce(0, +) }
  /// The main database file's size in bytes.
  public var databaseBytes: Int64 { Int64(pageSize) * Int64(pageCount) }
}

/// How many push tokens one platform has.
public struct DeviceCount: Sendable, Equatable {
  /// Every stored token.
  public var total: Int
  /// Tokens refreshed within the expiry window (the ones pushes go to).
  public var live: Int

  public init(total: Int, live: Int) {
    self.total = total
    self.live = live
  }
}
