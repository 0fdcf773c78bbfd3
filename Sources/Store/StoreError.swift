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
  /// Any other SQLite failure: the (extended) result code and SQLite's message.
  case sqlite(code: Int32, message: String)

  /// Classifies an SQLite result code and message into a case.
  init(code: Int32, message: String) {
    switch code & 0xFF {
    case SQLITE_BUSY, SQLITE_LOCKED: self = .busy
    case SQLITE_CORRUPT, SQLITE_NOTADB: self = .corrupt(message)
    case SQLITE_READONLY: self = .readOnly(message)
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
    case .sqlite(let code, let message):
      return "SQLite error \(code): \(message)"
    }
  }
}
