#if canImport(Glibc)
  import Glibc
#endif

/// The database file as the file system sees it, and the names of the files beside it: how a new database file
/// comes to exist, where a companion file goes, and whose it is.
public enum DatabaseFile {
  /// Creates an empty file at `path` when there is none, with mode `0666` less the process umask, so
  /// the umask alone decides who may open the database: SQLite creates its files `0644` less the
  /// umask, which no umask turns into the group-writable `0660` a group-shared folder needs
  /// (`Platform.FileModes`). SQLite then gives the `-wal` and `-shm` files the database file's mode, and
  /// an empty file is an empty database. Special names (empty, `:memory:`, `file:` URIs) are left to
  /// SQLite; any failure too (SQLite's open reports it).
  public static func createIfMissing(_ path: String) {
    guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else { return }
    let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o666)
    if fd >= 0 { close(fd) }
  }
}

extension DatabaseFile {
  /// The path of a file that goes with the database at `path`: its real path (symbolic links resolved, so every
  /// spelling of one database shares the file) plus `suffix`; `path` plus `suffix` when it cannot be resolved.
  public static func companionPath(_ path: String, suffix: String) -> String {
    var resolved = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    if realpath(path, &resolved) != nil {
      return String(decoding: resolved.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        + suffix
    }
    return path + suffix
  }

  /// Run as root, gives the open file `fd` the owner and group of the database at `databasePath` (as SQLite does
  /// with its `-wal` and `-shm`), so the service user can still use a companion file that root created. Does
  /// nothing for other users or when the database cannot be read.
  public static func adoptOwner(_ fd: Int32, of databasePath: String) {
    guard geteuid() == 0, fd >= 0 else { return }
    var model = stat()
    var own = stat()
    guard stat(databasePath, &model) == 0, fstat(fd, &own) == 0 else { return }
    if own.st_uid != model.st_uid || own.st_gid != model.st_gid { _ = fchown(fd, model.st_uid, model.st_gid) }
  }
}
