import CSQLite
import CompanionFiles

/// One connection to the aprs-cloud SQLite database.
///
/// Thread model: one `Database` per thread. A connection is opened with
/// `SQLITE_OPEN_NOMUTEX`, caches its prepared statements and is not `Sendable`: open a new one
/// on each thread (or worker) that needs the database instead of sharing one. Processes and
/// threads share state only through the file, in WAL mode.
///
/// Every connection runs with `journal_mode=WAL`, `foreign_keys=ON`, the configured busy timeout
/// and `synchronous` as its options say (`NORMAL` unless a writer asks for `FULL`). Every
/// transaction that may write starts with `BEGIN IMMEDIATE` (writers queue on the busy timeout
/// instead of failing half-way); reads that need one snapshot use a deferred `BEGIN`. Operations
/// take the current time (`now`, epoch ms) as a parameter: the store never reads a clock.
@safe public final class Database {
  /// The file this connection was opened on.
  public let path: String
  /// The options it was opened with.
  public let options: StoreOptions

  private var connection: OpaquePointer?
  private var statements: [String: Statement] = [:]
  /// Inside `writeBatch` or `readSnapshot`: the operations' own transactions join the batch's.
  private(set) var batchDepth = 0
  /// Inside `readSnapshot`: a write would have to upgrade the read transaction, so it is refused.
  private var inReadSnapshot = false
  /// The transactions this connection began, for tests that check how many a piece of work takes.
  private(set) var transactionCounts = TransactionCounts()

  /// The identity (device, inode) of the file as it was opened, for ``fileChange()``; nil for special paths.
  public private(set) var openedIdentity: DatabaseFileChange.Identity?

  /// Test hook: runs inside `sync`'s read transaction, after the messages were read and before
  /// the global last timestamp is, so a test can commit from another connection right there.
  var afterSyncMessagesRead: (() -> Void)?

  /// Opens (creating it unless read-only) the database at `path` and configures the
  /// connection. Does not migrate: call `migrate()` (or `checkSchema()`) next.
  public init(path: String, options: StoreOptions = .init()) throws(StoreError) {
    self.path = path
    self.options = options
    guard options.ringSize > 0 else {
      throw .invalidArgument("ringSize must be at least 1 (got \(options.ringSize))")
    }
    var opened: OpaquePointer?
    let access = options.readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
    if !options.readOnly { DatabaseFile.createIfMissing(path) }
    let rc = unsafe sqlite3_open_v2(path, &opened, access | SQLITE_OPEN_NOMUTEX, nil)
    guard rc == SQLITE_OK, let opened = unsafe opened else {
      let reason = unsafe opened.map { unsafe String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
      unsafe sqlite3_close_v2(opened)
      throw .cannotOpen(path: path, reason: reason)
    }
    unsafe sqlite3_extended_result_codes(opened, 1)
    unsafe sqlite3_busy_timeout(opened, options.busyTimeoutMs)
    _ = unsafe csqlite_db_config_defensive(opened, 1)
    unsafe connection = opened
    do throws(StoreError) {
      try configure()
      if !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") {
        openedIdentity = DatabaseFileChange.Identity.of(path: path)
      }
    } catch {
      close()
      if case .sqlite(let code, let message) = error, code & 0xFF == SQLITE_CANTOPEN {
        throw .cannotOpen(path: path, reason: message)
      }
      throw error
    }
  }

  deinit {
    close()
  }

  private func configure() throws(StoreError) {
    if !options.readOnly {
      let mode = try scalarText("PRAGMA journal_mode=WAL")?.lowercased() ?? ""
      guard mode == "wal" || mode == "memory" else {
        throw .cannotOpen(path: path, reason: "cannot switch to WAL journal mode (still \(mode))")
      }
    }
    try execute("PRAGMA synchronous=\(options.synchronous.rawValue); PRAGMA foreign_keys=ON;")
  }

  /// Finalizes every cached statement and closes the connection. Safe to call twice; any
  /// later operation throws `StoreError.closed`.
  public func close() {
    for statement in statements.values { statement.finalize() }
    statements.removeAll()
    if let connection = unsafe connection {
      unsafe sqlite3_close_v2(connection)
    }
    unsafe connection = nil
  }

  /// The raw connection, nil once closed (``fileChange()``).
  var connectionForChecks: OpaquePointer? { unsafe connection }

  private func open() throws(StoreError) -> OpaquePointer {
    guard let connection = unsafe connection else { throw .closed }
    return unsafe connection
  }

  /// Runs `body` with the raw connection, for the few operations that call SQLite's C API
  /// directly (checkpoints, the online backup in `Database+Maintenance.swift`).
  func withConnection<T>(_ body: (OpaquePointer) throws(StoreError) -> T) throws(StoreError) -> T {
    try unsafe body(open())
  }

  // MARK: Statements

  /// The cached prepared statement for `sql`, preparing it on first use. Reset it when done.
  func prepared(_ sql: String) throws(StoreError) -> Statement {
    if let cached = statements[sql] { return cached }
    let statement = try unsafe Statement(connection: open(), sql: sql)
    statements[sql] = statement
    return statement
  }

  /// Runs one or more statements that return nothing (schema scripts, pragmas). Not cached.
  func execute(_ sql: String) throws(StoreError) {
    let connection = try unsafe open()
    var failure: UnsafeMutablePointer<CChar>?
    let rc = unsafe sqlite3_exec(connection, sql, nil, nil, &failure)
    let message = unsafe failure.map { unsafe String(cString: $0) }
    unsafe sqlite3_free(failure)
    if rc != SQLITE_OK {
      let fallback = unsafe String(cString: sqlite3_errmsg(connection))
      throw StoreError(code: rc, message: message ?? fallback)
    }
  }

  /// The first column of the first row of a one-off statement (pragmas), or nil without a row.
  func scalarText(_ sql: String) throws(StoreError) -> String? {
    let statement = try unsafe Statement(connection: open(), sql: sql)
    defer { statement.finalize() }
    return try statement.step() ? statement.optionalText(0) : nil
  }

  /// Every row's first column of a one-off statement (pragmas that report several lines).
  func columnTexts(_ sql: String) throws(StoreError) -> [String] {
    let statement = try unsafe Statement(connection: open(), sql: sql)
    defer { statement.finalize() }
    var rows: [String] = []
    while try statement.step() { rows.append(statement.text(0)) }
    return rows
  }

  /// Rows changed by the last INSERT, UPDATE or DELETE on this connection.
  var changes: Int {
    guard let connection = unsafe connection else { return 0 }
    return Int(unsafe sqlite3_changes(connection))
  }

  /// The rowid of the last row this connection inserted.
  var lastInsertRowID: Int64 {
    guard let connection = unsafe connection else { return 0 }
    return unsafe sqlite3_last_insert_rowid(connection)
  }

  /// Whether a transaction is open on this connection.
  var isInTransaction: Bool {
    guard let connection = unsafe connection else { return false }
    return unsafe sqlite3_get_autocommit(connection) == 0
  }

  // MARK: Transactions

  /// Runs `body` in a `BEGIN IMMEDIATE` transaction: commits when it returns, rolls back when
  /// it throws. Writers queue here (up to the busy timeout), never half-way through.
  func writeTransaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
    guard !options.readOnly else { throw .readOnly("this connection was opened read-only") }
    guard !inReadSnapshot else { throw .invalidArgument("a write inside readSnapshot") }
    if batchDepth > 0 { return try body() }
    let result: T
    if let gate = options.writerGate {
      gate.enter()
      defer { gate.leave() }
      result = try transaction("BEGIN IMMEDIATE", body)
    } else {
      result = try transaction("BEGIN IMMEDIATE", body)
    }
    options.commitNotice?.committed()
    return result
  }

  /// Runs `body` in a deferred `BEGIN` transaction: every read inside sees one snapshot.
  func readTransaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
    if batchDepth > 0 { return try body() }
    return try transaction("BEGIN", body)
  }

  /// Runs several store operations in ONE write transaction (`BEGIN IMMEDIATE`): they commit
  /// together, or not at all when `body` throws, for the price of one commit. Each operation's
  /// own transaction joins this one.
  public func writeBatch<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
    try writeTransaction { () throws(StoreError) in
      batchDepth += 1
      defer { batchDepth -= 1 }
      return try body()
    }
  }

  /// Runs several reads in ONE deferred `BEGIN` transaction: every operation inside sees the same
  /// snapshot, and the connection takes one read lock instead of one per query. An operation that
  /// writes throws `StoreError.invalidArgument` inside (a read transaction cannot upgrade safely).
  public func readSnapshot<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
    // Inside a batch already: its transaction is the snapshot.
    if batchDepth > 0 { return try body() }
    return try transaction("BEGIN") { () throws(StoreError) in
      batchDepth += 1
      inReadSnapshot = true
      defer {
        batchDepth -= 1
        inReadSnapshot = false
      }
      return try body()
    }
  }

  private func transaction<T>(_ begin: String, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
    guard !isInTransaction else { throw .invalidArgument("transactions do not nest") }
    try runCached(begin)
    if begin == "BEGIN" { transactionCounts.reads += 1 } else { transactionCounts.writes += 1 }
    do throws(StoreError) {
      let value = try body()
      try runCached("COMMIT")
      return value
    } catch {
      if isInTransaction, let connection = unsafe connection {
        unsafe sqlite3_exec(connection, "ROLLBACK", nil, nil, nil)
      }
      throw error
    }
  }

  private func runCached(_ sql: String) throws(StoreError) {
    let statement = try prepared(sql)
    defer { statement.reset() }
    try statement.run()
  }

  // MARK: Connection state

  /// The settings in effect on this connection, read back from SQLite.
  public func connectionSettings() throws(StoreError) -> ConnectionSettings {
    ConnectionSettings(
      journalMode: try scalarText("PRAGMA journal_mode") ?? "",
      synchronous: Int(try scalarText("PRAGMA synchronous") ?? "") ?? -1,
      foreignKeys: try scalarText("PRAGMA foreign_keys") == "1",
      busyTimeoutMs: Int(try scalarText("PRAGMA busy_timeout") ?? "") ?? -1)
  }

  /// `PRAGMA data_version`: changes whenever another connection commits to the file, so a
  /// reader can poll it cheaply to learn that registrations changed.
  public func dataVersion() throws(StoreError) -> Int64 {
    let statement = try prepared("PRAGMA data_version")
    defer { statement.reset() }
    return try statement.step() ? statement.int64(0) : 0
  }

  /// `PRAGMA integrity_check`: `"ok"` for a healthy file, else SQLite's findings, one per line.
  public func integrityCheck() throws(StoreError) -> String {
    try columnTexts("PRAGMA integrity_check").joined(separator: "\n")
  }
}

/// How many transactions a connection began, by kind.
struct TransactionCounts: Equatable {
  /// `BEGIN IMMEDIATE` (writes, `writeBatch`).
  var writes = 0
  /// Deferred `BEGIN` (snapshot reads, `readSnapshot`).
  var reads = 0
}

/// The pragmas in effect on one connection, as SQLite reports them.
public struct ConnectionSettings: Sendable, Equatable {
  /// `PRAGMA journal_mode`: `"wal"` on every read-write connection.
  public var journalMode: String
  /// `PRAGMA synchronous`: 1 (NORMAL) or 2 (FULL), see ``SynchronousMode``.
  public var synchronous: Int
  /// `PRAGMA foreign_keys`.
  public var foreignKeys: Bool
  /// `PRAGMA busy_timeout`, in milliseconds.
  public var busyTimeoutMs: Int
}
