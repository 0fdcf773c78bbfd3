#if canImport(Glibc)
  import Glibc
#endif

/// A stream socket connected to the unix socket at `path` (close-on-exec); the caller owns and closes the
/// descriptor. Throws with the path and `errno`'s text when it cannot connect.
public func connectUnixSocket(_ path: String) throws(TestFailure) -> Int32 {
  let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
  guard fd >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
  var address = sockaddr_un()
  address.sun_family = sa_family_t(AF_UNIX)
  withUnsafeMutableBytes(of: &address.sun_path) { raw in
    raw.copyBytes(from: Array(path.utf8.prefix(raw.count - 1)))
  }
  let connected = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
    }
  }
  guard connected == 0 else {
    let error = errno
    close(fd)
    throw TestFailure("connect to \(path): \(String(cString: strerror(error)))")
  }
  return fd
}

/// A stream socket connected to `127.0.0.1:port` (close-on-exec); the caller owns and closes the descriptor.
/// Throws with the address and `errno`'s text when it cannot connect.
public func connectLoopbackTCP(port: Int) throws(TestFailure) -> Int32 {
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
  guard fd >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = in_port_t(UInt16(port).bigEndian)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  let connected = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
    }
  }
  guard connected == 0 else {
    let error = errno
    close(fd)
    throw TestFailure("connect to 127.0.0.1:\(port): \(String(cString: strerror(error)))")
  }
  return fd
}

/// Sends every byte of `bytes` on the connected socket `fd` (retrying short sends and `EINTR`; no SIGPIPE).
/// Throws with `errno`'s text when the peer is gone.
public func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws(TestFailure) {
  var offset = 0
  while offset < bytes.count {
    let sent = bytes.withUnsafeBytes {
      send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
    }
    if sent < 0 {
      if errno == EINTR { continue }
      throw TestFailure("send: \(String(cString: strerror(errno)))")
    }
    offset += sent
  }
}
