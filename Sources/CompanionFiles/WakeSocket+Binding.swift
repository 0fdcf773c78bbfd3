import Platform

#if canImport(Glibc)
  import Glibc
#endif

extension WakeSocket {
  /// How a wake socket takes its path (``Role/binding``).
  public enum Binding: Sendable, Equatable {
    /// Whatever socket file is at the path is replaced: the caller knows no live process owns it (the listener,
    /// which holds the lease).
    case replacing
    /// A socket another live process has bound there (a datagram `connect(2)` to it succeeds) is left to it and
    /// ``WakeSocket/bind(_:path:)`` returns nil; a socket file left by a process that ended is replaced.
    case ifFree
  }

  /// Whether a process has a socket bound at `path` (a datagram `connect(2)` to it succeeds).
  static func isLive(_ path: String) -> Bool {
    guard var address = UnixAddress(path) else { return false }
    let probe = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard probe >= 0 else { return false }
    defer { Glibc.close(probe) }
    return address.withPointer { connect(probe, $0, $1) } == 0
  }

  /// Binds a UNIX datagram socket at `path`, replacing a socket file there (a stale one: the caller decided no live
  /// process owns it). Returns the descriptor and the bound file's device and inode (to remove it later only while
  /// it is still this one). Throws the `errno` of what failed (a path longer than a socket address holds is
  /// `ENAMETOOLONG`).
  static func bindDatagramSocket(at path: String) throws(FileLockError) -> (
    Int32, (device: UInt, inode: UInt)?
  ) {
    guard var address = UnixAddress(path) else {
      throw FileLockError(path: path, operation: "bind", errno: ENAMETOOLONG)
    }
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw FileLockError(path: path, operation: "socket", errno: errno) }
    var info = stat()
    if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK { unlink(path) }
    guard address.bind(fd) == 0 else {
      let failure = errno
      Glibc.close(fd)
      throw FileLockError(path: path, operation: "bind", errno: failure)
    }
    if lstat(path, &info) == 0 { return (fd, (UInt(info.st_dev), UInt(info.st_ino))) }
    return (fd, nil)
  }

  /// Removes the socket file at `path` while it is still the one `bound` names (a successor may have bound its own).
  static func unlinkBoundSocket(_ path: String, _ bound: (device: UInt, inode: UInt)?) {
    var info = stat()
    if let bound, lstat(path, &info) == 0, UInt(info.st_dev) == bound.device, UInt(info.st_ino) == bound.inode
    {
      unlink(path)
    }
  }
}
