#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Read-only views for operators: the counts `/metrics` and `aprs-cloud status` show, and the
/// listings `aprs-cloud stations` and `aprs-cloud messages` print. None of them writes (not even
/// a station's sync cursor), so they are safe on a read-only connection and beside the running
/// responder and listener.
extension Database {
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
          stats.devices[statement.text(0)] = DeviceCount(total: statement.int(1), live: statement.int(2))
        }
      }
      do {
        let statement = try prepared("SELECT direction, count(*) FROM messages GROUP BY direction")
        defer { statement.reset() }
        while try statement.step() { stats.messages[statement.text(0)] = statement.int(1) }
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
      stats.lastMessageTimestamp = try lastMessageTimestamp()
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

  /// Every registered station with its device count, for `aprs-cloud stations`, by address.
  /// With `includeExpired` false only the live ones (heard within `expiryMs` before `now`).
  public func stationSummaries(
    now: Int64, expiryMs: Int64, includeExpired: Bool = true
  ) throws(StoreError) -> [StationSummary] {
    let statement = try prepared(
      """
      SELECT stations.address, stations.platform, stations.registered_at, stations.heartbeat_at,
             stations.last_sync_at, stations.avatar_hash IS NOT NULL, stations.avatar_cleared_at IS NOT NULL,
             stations.ack_messages,
             (SELECT count(*) FROM devices WHERE devices.station = stations.address),
             (SELECT count(*) FROM messages WHERE messages.station = stations.address)
      FROM stations WHERE ?2 OR stations.heartbeat_at >= ?1 ORDER BY stations.address
      """)
    defer { statement.reset() }
    try statement.bind(1, now - expiryMs)
    try statement.bind(2, includeExpired)
    var summaries: [StationSummary] = []
    while try statement.step() {
      let avatar: StationSummary.AvatarState =
        statement.bool(5) ? .set : statement.bool(6) ? .cleared : .none
      summaries.append(
        StationSummary(
          address: statement.text(0), platform: statement.optionalText(1), registeredAt: statement.int64(2),
          heartbeatAt: statement.int64(3), lastSyncAt: statement.optionalInt64(4), avatar: avatar,
          ackMessages: statement.bool(7), devices: statement.int(8), messages: statement.int(9),
          live: statement.int64(3) >= now - expiryMs))
    }
    return summaries
  }

  /// A station's newest `limit` stored messages, oldest first, without touching its sync cursor
  /// (unlike `sync`): what `aprs-cloud messages` prints.
  public func recentMessages(station: String, limit: Int) throws(StoreError) -> [StoredMessage] {
    guard limit > 0 else { return [] }
    let statement = try prepared(
      """
      SELECT direction, peer, text, msgno, timestamp FROM (
        SELECT direction, peer, text, msgno, timestamp FROM messages
        WHERE station = ?1 ORDER BY timestamp DESC LIMIT ?2)
      ORDER BY timestamp
      """)
    defer { statement.reset() }
    try statement.bind(1, station.canonicalAddress)
    try statement.bind(2, limit)
    var messages: [StoredMessage] = []
    while try statement.step() {
      messages.append(
        StoredMessage(
          direction: statement.text(0), peer: statement.text(1), text: statement.text(2),
          msgno: statement.optionalText(3), timestamp: statement.int64(4)))
    }
    return messages
  }
}

/// What `Database.stats(now:expiryMs:)` counted, from one snapshot.
public struct DatabaseStats: Sendable, Equatable {
  /// Registered stations, live or not.
  public var stations = 0
  /// Stations heard within the expiry window (the listener's filter holds these).
  public var liveStations = 0
  /// Push tokens by platform (`android`, `ios`).
  public var devices: [String: DeviceCount] = [:]
  /// Stored messages by direction (`received`, `sent`).
  public var messages: [String: Int] = [:]
  /// Pushes waiting in the outbox (including ones waiting for a retry).
  public var outboxPending = 0
  /// Pushes given up on (kept until their message rolls off).
  public var outboxFailed = 0
  /// When the oldest pending push was queued (epoch ms), nil when none is pending.
  public var oldestPendingAt: Int64?
  /// The newest message timestamp ever assigned (the sync cursor's high-water mark), epoch ms.
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

/// One line of `aprs-cloud stations`.
public struct StationSummary: Sendable, Equatable {
  /// Whether the station has an avatar.
  public enum AvatarState: String, Sendable {
    /// An icon or image is stored.
    case set
    /// The user cleared it (the clear time is kept so phones learn of it).
    case cleared
    /// Never set.
    case none
  }

  /// The upper-case station address.
  public var address: String
  /// The last platform given, nil for a sync-only station.
  public var platform: String?
  /// Its last registration, epoch ms.
  public var registeredAt: Int64
  /// Its last register or heartbeat (when it was last heard), epoch ms.
  public var heartbeatAt: Int64
  /// When its sync cursor last advanced, epoch ms; nil if it never synced.
  public var lastSyncAt: Int64?
  /// Its avatar.
  public var avatar: AvatarState
  /// Whether the listener ACKs its messages.
  public var ackMessages: Bool
  /// Its push tokens.
  public var devices: Int
  /// Its stored messages.
  public var messages: Int
  /// Heard within the expiry window.
  public var live: Bool
}
