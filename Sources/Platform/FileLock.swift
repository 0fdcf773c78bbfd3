#if canImport(Glibc)
  import Glibc
#endif

/// An exclusive lock on a file (`flock(2)`, `LOCK_EX`) that lives exactly as long as its holder: the kernel drops
/// it when the descriptor is closed, which a `kill -9`, a crash or any exit does at once. So whoever gets the lock
/// knows that no earlier holder is still alive, on this host, without waiting for any timeout.
///
/// The file is opened (created with mode 0600 when missing) close-on-exec, so a child process never inherits the
/// lock. The holder writes `PID` and a free-form note into the file (``lock(note:)``), for operators and for the
/// log line of whoever waits. The lock is advisory: it binds only processes that take it. `flock` locks belong to
/// the open file, so a second `FileLock` on the same path conflicts with the first even inside one process.
/// Not `Sendable`: one thread uses it.
public final class FileLock {
  /// The file's path.
  public let path: String
  private var descriptor: Int32

  /// Opens (or creates, mode 0600) the lock file; does not lock it yet.
  public init(path: String) throws(FileLockError) {
    self.path = path
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { throw FileLockError(path: path, operation: "open", errno: errno) }
    descriptor = fd
  }

  deinit { close() }

  /// Takes the lock if nobody holds it, without waiting: true when this object holds it now (also when it already
  /// did), false when another open file holds it. On success the file's content is replaced by `PID NOTE\n`.
  public func lock(note: String = "") throws(FileLockError) -> Bool {
    guard descriptor >= 0 else { throw FileLockError(path: path, operation: "flock", errno: EBADF) }
    while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
      if errno == EINTR { continue }
      if errno == EWOULDBLOCK { return false }
      throw FileLockError(path: path, operation: "flock", errno: errno)
    }
    let text = Array("\(getpid()) \(note)\n".utf8)
    if ftruncate(descriptor, 0) == 0 {
      _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }
    return true
  }

  /// Run as root, gives the lock file the owner and group of the file at `path` (as SQLite does with a
  /// database's `-wal` and `-shm` files), so the service user can still open a lock file that root created.
  /// Does nothing for other users or when `path` cannot be read.
  public func adoptOwner(of path: String) {
    guard geteuid() == 0, descriptor >= 0 else { return }
    var model = stat()
    var own = stat()
    guard stat(path, &model) == 0, fstat(descriptor, &own) == 0 else { return }
    if own.st_uid != model.st_uid || own.st_gid != model.st_gid {
      _ = fchown(descriptor, model.st_uid, model.st_gid)
    }
  }

  /// What the file says now (the current or last holder's `PID NOTE`), trimmed; empty when unreadable.
  public func contents() -> String {
    var buffer = [UInt8](repeating: 0, count: 512)
    guard descriptor >= 0 else { return "" }
    let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
    guard count > 0 else { return "" }
    var end = count
    while end > 0 && (buffer[end - 1] == 0x0A || buffer[end - 1] == 0x20) { end -= 1 }
    return String(decoding: buffer[0..<end], as: UTF8.self)
  }

  /// Closes the file, which releases the lock if this object held it. Safe to call twice.
  public func close() {
    if descriptor >= 0 { _ = Glibc.close(descriptor) }
    descriptor = -1
  }
}

/// A lock file could not be opened or locked.
public struct FileLockError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The lock file.
  public var path: String
  /// The call that failed (`open`, `flock`).
  public var operation: String
  /// Its `errno`.
  public var errno: Int32

  public init(path: String, operation: String, errno: Int32) {
    self.path = path
    self.operation = operation
    self.errno = errno
  }

  public var description: String {
    "\(operation) \(path): \(String(cString: strerror(errno)))"
  }
}
