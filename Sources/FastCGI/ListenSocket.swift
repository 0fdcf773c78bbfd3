import CFastCGI

#if canImport(Glibc)
  import Glibc
#endif

/// The FastCGI listening socket: our own (`--listen`) or the one inherited on fd 0.
public struct ListenSocket: Sendable {
  /// Where the socket came from.
  public enum Kind: String, Sendable {
    /// A unix socket this process created (removed again by `close`).
    case unix
    /// A TCP socket this process opened.
    case tcp
    /// The listening socket spawn-fcgi, mod_fcgid or systemd passed on fd 0 (left open by `close`).
    case inherited
  }

  /// The listening descriptor (non-blocking).
  public let fd: Int32
  public let kind: Kind
  /// What the start line shows: the path, `HOST:PORT`, or `fd:0`.
  public let address: String
  /// The socket file we created (removed at exit if it is still ours).
  private let ownedPath: String?
  private let ownedIdentity: (dev: UInt, ino: UInt)?

  /// The listen backlog of the sockets we open: connections waiting to be accepted (after a restart,
  /// every long-poll client comes back at once). Linux caps it at `net.core.somaxconn`.
  static let backlog: Int32 = 4096

  /// Whether fd 0 is a listening socket (spawn-fcgi, mod_fcgid, systemd with
  /// `StandardInput=socket`) rather than a CGI request's body or a terminal. Asks libfcgi
  /// (`FCGX_IsCGI`), which also initialises it.
  public static func fdZeroIsListening() -> Bool { FCGX_IsCGI() == 0 }

  /// The socket spawn-fcgi, mod_fcgid or systemd passed as standard input.
  public static func inherited() throws(StartupError) -> ListenSocket {
    try makeNonBlocking(0, "fd 0")
    return ListenSocket(fd: 0, kind: .inherited, address: "fd:0", ownedPath: nil, ownedIdentity: nil)
  }

  /// Opens `spec`: `HOST:PORT` (IPv4 or a name, as libfcgi accepts) or a unix socket path.
  public static func open(_ spec: String) throws(StartupError) -> ListenSocket {
    if spec.hasPrefix("[") {
      throw StartupError("--listen \(spec): libfcgi has no IPv6; use a unix socket or an IPv4 address")
    }
    if !spec.contains("/"), let colon = spec.lastIndex(of: ":") {
      let port = spec[spec.index(after: colon)...]
      guard let number = Int(port), (1...65535).contains(number) else {
        throw StartupError(
          "--listen \(spec): expected HOST:PORT with a port from 1 to 65535, or a socket path")
      }
      return try openTCP(spec)
    }
    return try openUnix(spec)
  }

  private static func openTCP(_ spec: String) throws(StartupError) -> ListenSocket {
    let fd = FCGX_OpenSocket(spec, backlog)
    guard fd >= 0 else {
      throw StartupError("cannot listen on \(spec): \(String(cString: strerror(errno)))")
    }
    try makeNonBlocking(fd, spec)
    return ListenSocket(fd: fd, kind: .tcp, address: spec, ownedPath: nil, ownedIdentity: nil)
  }

  private static func openUnix(_ path: String) throws(StartupError) -> ListenSocket {
    guard path.utf8.count <= 107 else {
      throw StartupError("socket path \(path) is longer than 107 bytes")
    }
    // libfcgi reads "x:9..." as HOST:PORT (first ':', then atoi), even inside a path.
    if let colon = path.firstIndex(of: ":"), atoi(String(path[path.index(after: colon)...])) != 0 {
      throw StartupError("socket path \(path) would be read by libfcgi as HOST:PORT; choose one without ':'")
    }
    var info = stat()
    if lstat(path, &info) == 0 {
      guard info.st_mode & S_IFMT == S_IFSOCK else {
        throw StartupError("\(path) exists and is not a socket; refusing to replace it")
      }
      if isAccepting(path) {
        throw StartupError("another process is already serving \(path)")
      }
      unlink(path)
    }
    // Owner and group may connect (nginx in the same group), nobody else, from the first moment.
    let previousMask = umask(0o117)
    let fd = FCGX_OpenSocket(path, backlog)
    let openError = errno
    umask(previousMask)
    guard fd >= 0 else {
      throw StartupError("cannot listen on \(path): \(String(cString: strerror(openError)))")
    }
    chmod(path, 0o660)
    try makeNonBlocking(fd, path)
    var created = stat()
    let identity = lstat(path, &created) == 0 ? (UInt(created.st_dev), UInt(created.st_ino)) : nil
    return ListenSocket(fd: fd, kind: .unix, address: path, ownedPath: path, ownedIdentity: identity)
  }

  /// Whether some process accepts connections on the unix socket at `path`. Only a refused
  /// connection means stale; a full backlog (EAGAIN on a non-blocking connect) means busy, not dead.
  private static func isAccepting(_ path: String) -> Bool {
    let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard probe >= 0 else { return false }
    defer { _ = Glibc.close(probe) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      let bytes = Array(path.utf8.prefix(raw.count - 1))
      raw.copyBytes(from: bytes)
    }
    let result = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    return result == 0 || errno == EAGAIN || errno == EINPROGRESS
  }

  /// Accept never blocks: workers wait in poll(2) on this socket and the shutdown pipe, and a
  /// worker that loses the race for a connection gets EAGAIN instead of sleeping in accept.
  private static func makeNonBlocking(_ fd: Int32, _ name: String) throws(StartupError) {
    let flags = fcntl(fd, F_GETFL)
    guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else {
      throw StartupError("cannot configure the listening socket \(name): \(String(cString: strerror(errno)))")
    }
  }

  /// Closes our own socket and removes its file if it is still the one we created. An inherited
  /// socket is left alone: systemd keeps it open for the next start.
  public func close() {
    guard kind != .inherited else { return }
    _ = Glibc.close(fd)
    if let ownedPath, let ownedIdentity {
      var info = stat()
      if lstat(ownedPath, &info) == 0, UInt(info.st_dev) == ownedIdentity.dev,
        UInt(info.st_ino) == ownedIdentity.ino
      {
        unlink(ownedPath)
      }
    }
  }
}

/// A reason the server cannot start (socket, pipe, threads), as a sentence for the log.
public struct StartupError: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
