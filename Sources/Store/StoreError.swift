import CSQLite

/// Everything the store can fail with, typed so callers can map each case to a response.
///
/// The HTTP layer maps `.busy` to 503 (storage busy); the other cases are operator-facing
/// and their `description` says what happened and, where it helps, what to do.
public enum StoreError: Error, CustomStringConvertible, Sendable, Equatable {
  /// Another connection held the write lock (SQLITE_BUSY / SQLITE_LOCKED) for longer than the
  /// busy timeout. Transient: the request may be retried.
  case busy
  /// The database was written by a newer build whose schema this build does not know.
  case schemaTooNew(found: Int, supported: Int)
  /// The database lacks migrations this build needs (`migrate()` has not been run).
  case schemaTooOld(found: Int, required: Int)
  /// The file is damaged or is not an SQLite database at all.
  case corrupt(String)
  /// The database file could not be opened or configured.
  case cannotOpen(path: String, reason: String)
  /// A write was attempted on a read-only connection or file.
  case readOnly(String)
  /// A migration failed; its transaction was rolled back and the schema version is unchanged.
  case migrationFailed(name: String, reason: String)
  /// The caller passed a value the store refuses (a programming error in the caller).
  case invalidArgument(String)
  /// The connection was used after `close()`.
  case closed
  /// The database or the disk it is on is full (SQLITE_FULL): nothing more can be written until space is freed.
  case full(String)
  /// The operating system failed a read or write of the database files (SQLITE_IOERR, extended code kept).
  case ioError(code: Int32, message: String)
  /// Any other SQLite failure: the (extended) result code and SQLite's message.
  case sqlite(code: Int32, message: String)

  /// Classifies an SQLite result code and message into a case.
  init(code: Int32, message: String) {
    switch code & 0xFF {
    case SQLITE_BUSY, SQLITE_LOCKED: self = .busy
    case SQLITE_CORRUPT, SQLITE_NOTADB: self = .corrupt(message)
    case SQLITE_READONLY: self = .readOnly(message)
    case SQLITE_FULL: self = .full(message)
    case SQLITE_IOERR: self = .ioError(code: code, message: message)
    default: self = .sqlite(code: code, message: message)
    }
  }

  /// A sentence an operator can act on.
  public var description: String {
    switch self {
    case .busy:
      return "database is busy (another process held the write lock past the busy timeout); try again"
    case .schemaTooNew(let found, let supported):
      return "database schema version \(found) is newer than this build supports (\(supported)); "
        + "upgrade aprs-cloud"
    case .schemaTooOld(let found, let required):
      return "database schema version \(found) is older than this build needs (\(required)); "
        + "run `aprs-cloud migrate`"
    case .corrupt(let reason):
      return "database is corrupt or not an SQLite database: \(reason)"
    case .cannotOpen(let path, let reason):
      return "cannot open database at \(path): \(reason)"
    case .readOnly(let reason):
      return "database is read-only: \(reason)"
    case .migrationFailed(let name, let reason):
      return "migration \(name) failed and was rolled back: \(reason)"
    case .invalidArgument(let reason):
      return "invalid argument to the store: \(reason)"
    case .closed:
      return "database connection is closed"
    case .full(let message):
      return "database or disk is full (\(message)); free space on the database's file system"
    case .ioError(let code, let message):
      return "disk I/O error \(code) on the database: \(message)"
    case .sqlite(let code, let message):
      return "SQLite error \(code): \(message)"
    }
  }

  /// The storage's own fault behind this error, when it is one: a write that cannot happen now for reasons of the
  /// machine (no space, a lock held past the busy timeout, an I/O error, a read-only file) and may succeed later
  /// unchanged. Nil for everything else (a bad argument, a schema mismatch, a damaged file, ...).
  public var storageFault: StorageFault? {
    switch self {
    case .busy: .locked
    case .full: .full
    case .ioError(let code, _): .ioError(code: code)
    case .readOnly(let reason): .readOnly(reason)
    default: nil
    }
  }
}

/// Why writes to the database cannot happen now (``StoreError/storageFault``), as `/health`, the log and the API's
/// 503 answers name it. Retrying later helps once the operator (or the other process) fixed the cause.
public enum StorageFault: Sendable, Equatable, CustomStringConvertible {
  /// SQLITE_FULL: the file system holding the database (or its `-wal`) has no space left.
  case full
  /// SQLITE_BUSY / SQLITE_LOCKED past the busy timeout: another process holds the write lock.
  case locked
  /// SQLITE_IOERR (the extended code): the operating system failed a read or write.
  case ioError(code: Int32)
  /// SQLITE_READONLY: the file, its folder or its file system does not take writes.
  case readOnly(String)

  /// `database or disk is full`, `the database is locked`, `disk I/O error (code N)`, `the database is read-only`.
  public var description: String {
    switch self {
    case .full: "database or disk is full"
    case .locked: "the database is locked (another process holds its write lock)"
    case .ioError(let code): "disk I/O error (SQLite code \(code))"
    case .readOnly: "the database is read-only"
    }
  }
}
