import CSQLite
import CompanionFiles

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Keeping the database small and safe: pruning expired bookkeeping, old receipts, and stations and
/// tokens past their expiry, checkpointing the write-ahead log, and the online backup.
///
/// The listener calls `pruneExpired(now:)`, `pruneReceipts(before:)`, `pruneStations(now:expiryMs:)`
/// and `checkpoint(mode:)` now and then; `aprs-cloud backup` calls `backup(to:)`. Each is safe while the
/// responder and the listener run: pruning is one short write transaction, a checkpoint never
/// blocks readers, and the backup reads one snapshot while writers go on.
extension Database {
  // MARK: Pruning

  /// Deletes bookkeeping that no longer matters: dedup keys whose window ended, ACK send
  /// times older than `ackRetentionMs`, ended rate-limit windows, ended bans and records of evicted messages
  /// older than 30 days. The listener calls it
  /// now and then; correctness never depends on it (expired rows are ignored anyway).
  ///
  /// Dedup rows and ACK send times are on the listener's steady clock (`Database.storeMessages`), which a
  /// wall-clock step does not move: `windowsNow` (default `now`) is the time they are judged by. The listener
  /// passes its steady clock; a process without it (`aprs-cloud maintenance`) passes
  /// `min(now, steadyClockFloor())`, which is never past the listener's clock, so a wall clock an hour ahead of
  /// the listener's prunes no window still open on it. Rate-limit windows are the responder's, on `now`.
  /// How long the record of evicted unpulled messages (`drops`) is kept (ms): 30 days.
  static let dropsRetentionMs: Int64 = 30 * 86_400_000

  @discardableResult
  public func pruneExpired(
    now: Int64, windowsNow: Int64? = nil, ackRetentionMs: Int64 = 3_600_000
  ) throws(StoreError) -> PruneResult {
    let windows = windowsNow ?? now
    return try writeTransaction { () throws(StoreError) in
      var counts: [Int] = []
      for (sql, time) in [
        ("DELETE FROM dedup WHERE expires_at <= ?1", windows),
        ("DELETE FROM ack_state WHERE last_sent_at < ?1", windows - ackRetentionMs),
        ("DELETE FROM rate_limits WHERE expires_at <= ?1", now),
        ("DELETE FROM bans WHERE until IS NOT NULL AND until <= ?1", now),
        // A record of evicted messages matters only to a cursor that old (sql/017_inbox.sql).
        ("DELETE FROM drops WHERE at < ?1", now - Self.dropsRetentionMs),
      ] {
        let statement = try prepared(sql)
        defer { statement.reset() }
        try statement.bind(1, time)
        try statement.run()
        counts.append(changes)
      }
      return PruneResult(dedup: counts[0], acks: counts[1], rateLimits: counts[2], bans: counts[3])
    }
  }

  /// Deletes receipts received before `cutoff` (epoch ms); returns how many.
  @discardableResult
  public func pruneReceipts(before cutoff: Int64) throws(StoreError) -> Int {
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared("DELETE FROM receipts WHERE received_at < ?1")
      defer { statement.reset() }
      try statement.bind(1, cutoff)
      try statement.run()
      return changes
    }
  }

  /// Deletes what expired, in ONE write transaction: push tokens not refreshed (register or
  /// heartbeat with the token) within `expiryMs` before `now`, and stations not heard (register
  /// or heartbeat) within it, with everything that belongs to them (devices, avatar, messages,
  /// pending pushes and receipts cascade; their dedup rows are deleted too). Adds the counts to
  /// the `maintenance.*` totals in `meta`.
  ///
  /// Pass the configured `stationExpiry` (or more, to keep a returning phone's messages longer):
  /// a station past it is already out of the listener's filter and gets no pushes, so pruning only
  /// frees space. A row exactly at the cutoff (`now - expiryMs`) is kept.
  @discardableResult
  public func pruneStations(now: Int64, expiryMs: Int64) throws(StoreError) -> StationPruneResult {
    guard expiryMs > 0 else { throw .invalidArgument("expiryMs must be positive (got \(expiryMs))") }
    let cutoff = now - expiryMs
    return try writeTransaction { () throws(StoreError) in
      var result = StationPruneResult(stations: 0, devices: 0, messages: 0)
      do {
        let statement = try prepared(
          """
          SELECT count(*) FROM messages
          WHERE station IN (SELECT address FROM stations WHERE heartbeat_at < ?1)
          """)
        defer { statement.reset() }
        try statement.bind(1, cutoff)
        if try statement.step() { result.messages = statement.int(0) }
      }
      do {
        let statement = try prepared("SELECT address FROM stations WHERE heartbeat_at < ?1")
        var expired: [String] = []
        do {
          defer { statement.reset() }
          try statement.bind(1, cutoff)
          while try statement.step() { expired.append(statement.text(0)) }
        }
        for station in expired { try deleteDedupRows(station: station) }
      }
      // Tokens first: a station's tokens are never refreshed after the station itself, so every
      // token of an expired station is counted here and the cascade below finds none left.
      for (sql, keyPath) in [
        ("DELETE FROM devices WHERE refreshed_at < ?1", \StationPruneResult.devices),
        ("DELETE FROM stations WHERE heartbeat_at < ?1", \StationPruneResult.stations),
      ] {
        let statement = try prepared(sql)
        defer { statement.reset() }
        try statement.bind(1, cutoff)
        try statement.run()
        result[keyPath: keyPath] = changes
      }
      try addToMetaCounter(MaintenanceKey.devicesPruned, result.devices)
      try addToMetaCounter(MaintenanceKey.stationsPruned, result.stations)
      try setMetaValue(MaintenanceKey.lastPruneAt, String(now))
      return result
    }
  }

  /// Adds `amount` to the integer kept under `key` (a missing or garbled value counts as 0);
  /// the caller holds the write transaction.
  func addToMetaCounter(_ key: String, _ amount: Int) throws(StoreError) {
    let statement = try prepared(
      """
      INSERT INTO meta (key, value) VALUES (?1, CAST(?2 AS TEXT))
      ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + ?2 AS TEXT)
      """)
    defer { statement.reset() }
    try statement.bind(1, key)
    try statement.bind(2, amount)
    try statement.run()
  }

  // MARK: Checkpoints

  /// Copies the write-ahead log back into the database file (`sqlite3_wal_checkpoint_v2`).
  ///
  /// `.passive` copies what it can without waiting for anyone (cheap; run it often). `.truncate`
  /// waits (up to the busy timeout) for writers and for readers of old snapshots, copies
  /// everything and truncates the `-wal` file to zero bytes, so the file does not stay as large as
  /// its biggest burst; when someone holds it up the answer says `busy` and nothing is lost (run it
  /// again later). SQLite checkpoints passively by itself after each commit past 1000 pages, but
  /// never truncates.
  @discardableResult
  public func checkpoint(mode: CheckpointMode = .passive) throws(StoreError) -> CheckpointResult {
    guard !options.readOnly else { throw .readOnly("a read-only connection cannot checkpoint") }
    guard !isInTransaction else { throw .invalidArgument("cannot checkpoint inside a transaction") }
    return try withConnection { (connection: OpaquePointer) throws(StoreError) -> CheckpointResult in
      var logFrames: Int32 = 0
      var checkpointed: Int32 = 0
      let rc = unsafe sqlite3_wal_checkpoint_v2(connection, nil, mode.sqliteMode, &logFrames, &checkpointed)
      switch rc & 0xFF {
      case SQLITE_OK:
        return CheckpointResult(busy: false, walFrames: Int(logFrames), checkpointedFrames: Int(checkpointed))
      case SQLITE_BUSY:
        return CheckpointResult(busy: true, walFrames: Int(logFrames), checkpointedFrames: Int(checkpointed))
      default:
        throw unsafe Statement.error(rc, connection)
      }
    }
  }

  // MARK: Online backup

  /// Writes a consistent copy of the whole database to a new file at `destination` with SQLite's
  /// online backup API (`sqlite3_backup_init/step/finish`), safe while the responder and the
  /// listener run.
  ///
  /// The copy is one snapshot: this connection holds a read transaction for the whole backup, so
  /// it holds every transaction committed before the backup started and none that committed
  /// after (in WAL mode readers and writers do not block each other, and the backup is never
  /// restarted by other processes' commits; a database in a rollback-journal mode would keep its
  /// writers waiting for the whole backup instead, but every read-write connection of this store
  /// turns WAL on). Pages are copied `pagesPerStep` at a time, pausing
  /// `pauseMs` between steps. The copy is switched to `journal_mode=DELETE`, so it is one
  /// self-contained file (the server turns WAL on again when it opens a restored copy).
  ///
  /// `destination` must not exist (the store never overwrites a file); on failure nothing is left
  /// there. `progress`, when given, is called after each step with the pages still to copy and the
  /// total.
  @discardableResult
  public func backup(
    to destination: String, pagesPerStep: Int32 = 1024, pauseMs: Int32 = 0,
    progress: ((_ remaining: Int, _ total: Int) -> Void)? = nil
  ) throws(StoreError) -> BackupResult {
    guard !destination.isEmpty else { throw .invalidArgument("empty backup destination") }
    guard pagesPerStep > 0 else { throw .invalidArgument("pagesPerStep must be positive") }
    var existing = stat()
    if stat(destination, &existing) == 0 {
      throw .invalidArgument("\(destination) already exists; a backup never overwrites a file")
    }
    guard !isInTransaction else { throw .invalidArgument("cannot back up inside a transaction") }

    var opened: OpaquePointer?
    let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
    DatabaseFile.createIfMissing(destination)
    let openRC = unsafe sqlite3_open_v2(destination, &opened, flags, nil)
    guard openRC == SQLITE_OK, let target = unsafe opened else {
      let reason = unsafe opened.map { unsafe String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
      unsafe sqlite3_close_v2(opened)
      throw .cannotOpen(path: destination, reason: reason)
    }
    var closed = false
    defer {
      if !closed { unsafe sqlite3_close_v2(target) }
    }
    unsafe sqlite3_extended_result_codes(target, 1)
    unsafe sqlite3_busy_timeout(target, options.busyTimeoutMs)

    do throws(StoreError) {
      let (pages, steps) = try readTransaction { () throws(StoreError) -> (Int, Int) in
        // A deferred BEGIN takes its snapshot at the first read: take it now.
        _ = try scalarText("SELECT count(*) FROM sqlite_schema")
        return try withConnection { (source: OpaquePointer) throws(StoreError) -> (Int, Int) in
          try unsafe Self.copyPages(
            from: source, to: target, pagesPerStep: pagesPerStep, pauseMs: pauseMs,
            busyTimeoutMs: options.busyTimeoutMs, progress: progress)
        }
      }
      // One self-contained file: no -wal or -shm beside the copy.
      let mode = unsafe Self.run("PRAGMA journal_mode=DELETE", on: target)
      guard mode.rc == SQLITE_OK else {
        throw StoreError(code: mode.rc, message: mode.message)
      }
      let rc = unsafe sqlite3_close_v2(target)
      closed = true
      guard rc == SQLITE_OK else {
        throw StoreError(code: rc, message: "closing the backup failed")
      }
      var info = stat()
      let bytes = stat(destination, &info) == 0 ? Int64(info.st_size) : 0
      return BackupResult(pages: pages, steps: steps, bytes: bytes)
    } catch {
      if !closed {
        unsafe sqlite3_close_v2(target)
        closed = true
      }
      Self.removeFiles(of: destination)
      throw error
    }
  }

  /// The page-copying loop of `backup(to:)`: (pages copied, steps taken).
  private static func copyPages(
    from source: OpaquePointer, to target: OpaquePointer, pagesPerStep: Int32, pauseMs: Int32,
    busyTimeoutMs: Int32, progress: ((Int, Int) -> Void)?
  ) throws(StoreError) -> (Int, Int) {
    guard let backup = unsafe sqlite3_backup_init(target, "main", source, "main") else {
      throw unsafe Statement.error(sqlite3_errcode(target), target)
    }
    var steps = 0
    var waitedMs: Int32 = 0
    var rc: Int32 = SQLITE_OK
    while true {
      rc = unsafe sqlite3_backup_step(backup, pagesPerStep)
      steps += 1
      let code = rc & 0xFF
      if code == SQLITE_OK || code == SQLITE_DONE {
        waitedMs = 0
        unsafe progress?(Int(sqlite3_backup_remaining(backup)), Int(sqlite3_backup_pagecount(backup)))
        if code == SQLITE_DONE { break }
        if pauseMs > 0 { sqlite3_sleep(pauseMs) }
        continue
      }
      if (code == SQLITE_BUSY || code == SQLITE_LOCKED) && waitedMs < busyTimeoutMs {
        sqlite3_sleep(10)
        waitedMs += 10
        continue
      }
      break
    }
    let pages = Int(unsafe sqlite3_backup_pagecount(backup))
    let finish = unsafe sqlite3_backup_finish(backup)
    if rc & 0xFF != SQLITE_DONE {
      throw StoreError(code: rc, message: unsafe String(cString: sqlite3_errstr(rc)))
    }
    if finish != SQLITE_OK {
      throw unsafe Statement.error(finish, target)
    }
    return (pages, steps)
  }

  /// Runs one statement on a bare connection, stepping through its rows.
  private static func run(_ sql: String, on connection: OpaquePointer) -> (rc: Int32, message: String) {
    var failure: UnsafeMutablePointer<CChar>?
    let rc = unsafe sqlite3_exec(connection, sql, nil, nil, &failure)
    let message = unsafe failure.map { unsafe String(cString: $0) } ?? ""
    unsafe sqlite3_free(failure)
    return (rc, message)
  }

  /// Removes a database file and whatever SQLite may have left beside it.
  private static func removeFiles(of path: String) {
    for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
  }
}

/// How thoroughly `Database.checkpoint(mode:)` works.
public enum CheckpointMode: String, Sendable, CaseIterable {
  /// Copy what can be copied without waiting; never blocks anyone.
  case passive
  /// Wait for writers, then copy everything.
  case full
  /// As `full`, then wait for readers so the next writer starts the log from its beginning.
  case restart
  /// As `restart`, then truncate the `-wal` file to zero bytes.
  case truncate

  var sqliteMode: Int32 {
    switch self {
    case .passive: SQLITE_CHECKPOINT_PASSIVE
    case .full: SQLITE_CHECKPOINT_FULL
    case .restart: SQLITE_CHECKPOINT_RESTART
    case .truncate: SQLITE_CHECKPOINT_TRUNCATE
    }
  }
}

/// What a checkpoint did (the numbers `sqlite3_wal_checkpoint_v2` reports).
public struct CheckpointResult: Sendable, Equatable {
  /// Someone held it up (a writer, or a reader of an old snapshot): a `.full`, `.restart` or
  /// `.truncate` checkpoint did not finish its job. Nothing is lost; run it again later.
  public var busy: Bool
  /// Frames (pages) in the write-ahead log when it ran; 0 after a truncating checkpoint.
  public var walFrames: Int
  /// Of those, the frames now copied into the database file.
  public var checkpointedFrames: Int

  public init(busy: Bool, walFrames: Int, checkpointedFrames: Int) {
    self.busy = busy
    self.walFrames = walFrames
    self.checkpointedFrames = checkpointedFrames
  }
}

/// How many expired rows `Database.pruneExpired(now:ackRetentionMs:)` removed, per table.
public struct PruneResult: Sendable, Equatable {
  /// Dedup keys whose window ended.
  public var dedup: Int
  /// ACK send times older than the retention.
  public var acks: Int
  /// Rate-limit windows that ended.
  public var rateLimits: Int
  /// Bans whose `--for` ran out (`aprs-cloud ban`).
  public var bans: Int = 0
}

/// What `Database.pruneStations(now:expiryMs:)` deleted.
public struct StationPruneResult: Sendable, Equatable {
  /// Stations not heard within the expiry (with their avatars, messages, pushes and receipts).
  public var stations: Int
  /// Push tokens not refreshed within the expiry.
  public var devices: Int
  /// Messages that went with the deleted stations.
  public var messages: Int

  public init(stations: Int, devices: Int, messages: Int) {
    self.stations = stations
    self.devices = devices
    self.messages = messages
  }
}

/// What `Database.backup(to:)` wrote.
public struct BackupResult: Sendable, Equatable {
  /// Pages copied (the database's size in pages at the snapshot).
  public var pages: Int
  /// `sqlite3_backup_step` calls it took.
  public var steps: Int
  /// The size of the backup file in bytes.
  public var bytes: Int64
}
