import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// The processes that have one database open, and which file that is: `<database>.users` beside it (its real path,
/// as the listener's lock file), on which every daemon (listener, FastCGI responder) holds a shared `flock` for as
/// long as it runs, and in which the first of them wrote the identity (device and inode) of the database file they
/// all use (docs/design.md "Faults").
///
/// SQLite finds a database's `-wal` and `-shm` by its path. A process still using a file that was deleted or
/// replaced shares them with any process that opens the new file at that path, and their commits mix: the old
/// file's log applied onto the new one, or the new one's pages read against the old. So a daemon that opens the
/// database first ``join(shouldStop:waiting:)``s: it waits while the users still running use another file than the
/// one the path names now (they notice the change within a second or two and exit), and when it is the first
/// user and the last ones used another file, it moves their `-wal` and `-shm` aside (renamed
/// `…-wal.orphaned-<epoch ms>`, never deleted) before SQLite can apply them. `aprs-cloud restore` takes the file
/// exclusively (``lockExclusive(databasePath:)``): it refuses while any daemon runs on the database.
///
/// `flock` locks belong to the open file and the kernel drops them when a process ends, however it ends.
/// Not `Sendable`: one thread uses it.
public final class DatabaseUsers {
  /// How often a waiting daemon looks again (ms).
  public static let pollMs: Int64 = 100

  /// The users file of the database at `databasePath`.
  public static func path(forDatabase databasePath: String) -> String {
    DatabaseFile.companionPath(databasePath, suffix: ".users")
  }

  /// The database file.
  public let databasePath: String
  /// The users file.
  public let path: String
  private var descriptor: Int32

  /// Opens (creating it, mode 0666 less the umask) the users file of the database; locks nothing yet.
  public init(databasePath: String) throws(FileLockError) {
    self.databasePath = databasePath
    path = Self.path(forDatabase: databasePath)
    var fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o666)
    // Another user's file (a daemon once run as root): a lock needs no write access, only the record does.
    if fd < 0 && errno == EACCES { fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
    guard fd >= 0 else { throw FileLockError(path: path, operation: "open", errno: errno) }
    descriptor = fd
    DatabaseFile.adoptOwner(fd, of: databasePath)
  }

  private init(unlockedFor databasePath: String) {
    self.databasePath = databasePath
    path = Self.path(forDatabase: databasePath)
    descriptor = -1
  }

  deinit { close() }

  /// Closes the file, which ends this process's use. Safe to call twice.
  public func close() {
    if descriptor >= 0 { _ = Glibc.close(descriptor) }
    descriptor = -1
  }

  /// Becomes a user of the database file the path names (creating an empty one when there is none and nobody
  /// else uses the database, as opening it would), waiting while running users use another file: `waiting` is called once with a sentence for the
  /// log, then every ``pollMs`` `shouldStop` is asked (true: give up, returns nil). Returns the files moved aside
  /// (the `-wal` and `-shm` a previous file's users left behind), usually none.
  public func join(shouldStop: () -> Bool, waiting: (String) -> Void) throws(FileLockError) -> [String]? {
    var announced = false
    while true {
      if try tryLock(LOCK_EX) {
        // Nobody else uses the database: an empty file where there is none, as opening it would make.
        DatabaseFile.createIfMissing(databasePath)
        let current = DatabaseFileChange.Identity.of(path: databasePath)
        var moved: [String] = []
        if let recorded = recordedIdentity(), let current, recorded != Self.text(current) {
          moved = Self.moveAside(databasePath)
        }
        if let current { record(Self.text(current)) }
        _ = try tryLock(LOCK_SH)
        return moved
      }
      if try tryLock(LOCK_SH) {
        // Others use it: join them if they use the file the path names (never create one under them: a user
        // that is rescuing a deleted file puts it back there).
        if let current = DatabaseFileChange.Identity.of(path: databasePath),
          recordedIdentity() == Self.text(current)
        {
          return []
        }
        _ = flock(descriptor, LOCK_UN)
      }
      if !announced {
        announced = true
        waiting(
          "processes still using a deleted or replaced file at \(databasePath) are running (they hold \(path)); "
            + "waiting for them to exit")
      }
      if shouldStop() { return nil }
      var pause = timespec(tv_sec: 0, tv_nsec: Int(Self.pollMs) * 1_000_000)
      nanosleep(&pause, nil)
    }
  }

  /// The users file of the database, locked exclusively: no daemon runs on the database while it is held (they
  /// wait for it). Nil when a daemon uses the database now. Where there is no users file (no daemon ever ran on
  /// the database) none is made: the answer holds nothing.
  public static func lockExclusive(databasePath: String) throws(FileLockError) -> DatabaseUsers? {
    guard access(path(forDatabase: databasePath), F_OK) == 0 else {
      return DatabaseUsers(unlockedFor: databasePath)
    }
    let users = try DatabaseUsers(databasePath: databasePath)
    guard try users.tryLock(LOCK_EX) else {
      users.close()
      return nil
    }
    return users
  }

  private func tryLock(_ kind: Int32) throws(FileLockError) -> Bool {
    guard descriptor >= 0 else { throw FileLockError(path: path, operation: "flock", errno: EBADF) }
    while flock(descriptor, kind | LOCK_NB) != 0 {
      if errno == EINTR { continue }
      if errno == EWOULDBLOCK { return false }
      throw FileLockError(path: path, operation: "flock", errno: errno)
    }
    return true
  }

  private func recordedIdentity() -> String? {
    var buffer = [UInt8](repeating: 0, count: 128)
    let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
    guard count > 0 else { return nil }
    let text = String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").first.map(
      String.init)
    return text.flatMap { $0.isEmpty ? nil : $0 }
  }

  private func record(_ identity: String) {
    let bytes = Array("\(identity)\n".utf8)
    if ftruncate(descriptor, 0) == 0 {
      _ = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }
  }

  static func text(_ identity: DatabaseFileChange.Identity) -> String {
    "\(identity.device):\(identity.inode)"
  }

  /// Renames `<database>-wal` and `-shm` to `…-wal.orphaned-<epoch ms>` where they exist; returns the new paths.
  static func moveAside(_ databasePath: String) -> [String] {
    let stamp = epochMilliseconds()
    var moved: [String] = []
    for suffix in ["-wal", "-shm"] {
      let from = databasePath + suffix
      let to = "\(from).orphaned-\(stamp)"
      if access(from, F_OK) == 0, rename(from, to) == 0 { moved.append(to) }
    }
    return moved
  }
}
