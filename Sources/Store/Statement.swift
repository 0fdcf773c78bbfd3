import CSQLite

/// One prepared SQLite statement, owned and cached by a `Database` connection.
///
/// Like its connection, a statement belongs to one thread. Callers bind, step and read
/// columns through the typed helpers below and call `reset()` when done (usually with
/// `defer`); the connection finalizes every cached statement when it closes. This file,
/// `Database.swift` and `Database+Maintenance.swift` (checkpoints, the online backup) are the only
/// places that touch SQLite's C pointers.
@safe final class Statement {
  /// The SQL text this statement was prepared from (the cache key).
  let sql: String
  private let handle: OpaquePointer
  private let connection: OpaquePointer

  /// Prepares exactly one SQL statement on `connection`.
  init(connection: OpaquePointer, sql: String) throws(StoreError) {
    var prepared: OpaquePointer?
    var trailingText = false
    let rc = unsafe sql.withCString { text in
      var tail: UnsafePointer<CChar>?
      let rc = unsafe sqlite3_prepare_v3(
        connection, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, &tail)
      if var cursor = unsafe tail {
        while unsafe cursor.pointee != 0 {
          let byte = unsafe UInt8(bitPattern: cursor.pointee)
          if byte != 0x20 && byte != 0x0A && byte != 0x0D && byte != 0x09 && byte != 0x3B {
            trailingText = true
            break
          }
          unsafe cursor += 1
        }
      }
      return rc
    }
    guard rc == SQLITE_OK, let prepared = unsafe prepared else {
      throw unsafe Self.error(rc, connection)
    }
    if trailingText {
      unsafe sqlite3_finalize(prepared)
      throw .invalidArgument("a cached statement must hold exactly one SQL statement: \(sql)")
    }
    self.sql = sql
    unsafe self.handle = prepared
    unsafe self.connection = connection
  }

  /// The typed error for an SQLite result code, with the connection's current message.
  static func error(_ rc: Int32, _ connection: OpaquePointer) -> StoreError {
    let message = unsafe String(cString: sqlite3_errmsg(connection))
    return StoreError(code: rc, message: message)
  }

  private func check(_ rc: Int32) throws(StoreError) {
    if rc != SQLITE_OK { throw unsafe Self.error(rc, connection) }
  }

  // MARK: Binding (1-based parameter indexes, as in SQL's ?1, ?2, …)

  /// Binds text, or NULL when `value` is nil.
  func bind(_ index: Int32, _ value: String?) throws(StoreError) {
    guard let value else { return try check(unsafe sqlite3_bind_null(handle, index)) }
    let length = UInt64(value.utf8.count)
    let rc = unsafe value.withCString { text in
      unsafe sqlite3_bind_text64(handle, index, text, length, csqlite_transient(), UInt8(SQLITE_UTF8))
    }
    try check(rc)
  }

  /// Binds a 64-bit integer, or NULL when `value` is nil.
  func bind(_ index: Int32, _ value: Int64?) throws(StoreError) {
    guard let value else { return try check(unsafe sqlite3_bind_null(handle, index)) }
    try check(unsafe sqlite3_bind_int64(handle, index, value))
  }

  /// Binds an integer, or NULL when `value` is nil.
  func bind(_ index: Int32, _ value: Int?) throws(StoreError) {
    try bind(index, value.map { Int64($0) })
  }

  /// Binds a double, or NULL when `value` is nil.
  func bind(_ index: Int32, _ value: Double?) throws(StoreError) {
    guard let value else { return try check(unsafe sqlite3_bind_null(handle, index)) }
    try check(unsafe sqlite3_bind_double(handle, index, value))
  }

  /// Binds a boolean as 0 or 1, or NULL when `value` is nil.
  func bind(_ index: Int32, _ value: Bool?) throws(StoreError) {
    try bind(index, value.map { Int64($0 ? 1 : 0) })
  }

  /// Binds a `String`-backed enum as its raw value (NULL for nil).
  func bind<T: RawRepresentable>(_ index: Int32, _ value: T?) throws(StoreError) where T.RawValue == String {
    try bind(index, value?.rawValue)
  }

  // MARK: Stepping

  /// Advances to the next row: true when a row is available, false when the statement is done.
  func step() throws(StoreError) -> Bool {
    let rc = unsafe sqlite3_step(handle)
    switch rc {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    default: throw unsafe Self.error(rc, connection)
    }
  }

  /// Runs a statement that returns no rows we need (INSERT, UPDATE, DELETE, PRAGMA …).
  func run() throws(StoreError) {
    while try step() {}
  }

  /// Rewinds the statement and clears its bindings so the cache can hand it out again.
  func reset() {
    unsafe sqlite3_reset(handle)
    unsafe sqlite3_clear_bindings(handle)
  }

  /// Releases the statement; called once, by the connection, when it closes.
  func finalize() {
    unsafe sqlite3_finalize(handle)
  }

  // MARK: Columns (0-based, as SQLite numbers result columns)

  /// The number of columns a row of this statement has.
  var columnCount: Int32 {
    unsafe sqlite3_column_count(handle)
  }

  /// Whether the column holds NULL.
  func isNull(_ column: Int32) -> Bool {
    unsafe sqlite3_column_type(handle, column) == SQLITE_NULL
  }

  /// The column as a 64-bit integer (0 for NULL).
  func int64(_ column: Int32) -> Int64 {
    unsafe sqlite3_column_int64(handle, column)
  }

  /// The column as an integer (0 for NULL).
  func int(_ column: Int32) -> Int {
    Int(int64(column))
  }

  /// The column as a boolean: any non-zero integer is true.
  func bool(_ column: Int32) -> Bool {
    int64(column) != 0
  }

  /// The column as a 64-bit integer, or nil for NULL.
  func optionalInt64(_ column: Int32) -> Int64? {
    isNull(column) ? nil : int64(column)
  }

  /// The column as a double, or nil for NULL.
  func optionalDouble(_ column: Int32) -> Double? {
    isNull(column) ? nil : unsafe sqlite3_column_double(handle, column)
  }

  /// The column as UTF-8 text ("" for NULL).
  func text(_ column: Int32) -> String {
    guard let bytes = unsafe sqlite3_column_text(handle, column) else { return "" }
    let count = Int(unsafe sqlite3_column_bytes(handle, column))
    return unsafe String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
  }

  /// The column as UTF-8 text, or nil for NULL.
  func optionalText(_ column: Int32) -> String? {
    isNull(column) ? nil : text(column)
  }

  /// The column's text as a `String`-backed enum (`MessageDirection`, `DevicePlatform`, …); nil for NULL or
  /// for a text the enum does not know.
  func optionalValue<T: RawRepresentable>(_ column: Int32, as type: T.Type = T.self) -> T?
  where T.RawValue == String {
    optionalText(column).flatMap(T.init(rawValue:))
  }

  /// The column's text as a `String`-backed enum whose column a CHECK constraint keeps to known values; any
  /// other text means the file was damaged (`StoreError.corrupt`).
  func value<T: RawRepresentable>(_ column: Int32, as type: T.Type = T.self) throws(StoreError) -> T
  where T.RawValue == String {
    guard let value = T(rawValue: text(column)) else {
      throw .corrupt("unexpected \(T.self) \"\(text(column))\" in a row")
    }
    return value
  }
}
