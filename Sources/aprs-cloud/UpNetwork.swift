import Config

#if canImport(Glibc)
  import Glibc
#endif

/// The address nginx listens on: `127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:8080`, `localhost:8080` or a
/// bare port (on 127.0.0.1).
struct UpListenAddress: Equatable, CustomStringConvertible {
  /// The numeric host, without brackets (`127.0.0.1`, `::1`).
  var host: String
  var port: UInt16

  /// Parses `text` as given to `flag` (named in the errors).
  init(parsing text: String, flag: String = "--http") throws(UsageError) {
    var hostPart = "127.0.0.1"
    var portPart = Substring(text)
    if text.hasPrefix("[") {
      guard let close = text.firstIndex(of: "]"), text[close...].hasPrefix("]:") else {
        throw UsageError("\(flag): '\(text)' is not [IPV6]:PORT")
      }
      hostPart = String(text[text.index(after: text.startIndex)..<close])
      portPart = text[text.index(close, offsetBy: 2)...]
    } else if let colon = text.lastIndex(of: ":") {
      hostPart = String(text[..<colon])
      portPart = text[text.index(after: colon)...]
    }
    if hostPart == "localhost" { hostPart = "127.0.0.1" }
    guard let port = UInt16(portPart), port > 0 else {
      throw UsageError("\(flag): '\(text)' needs a port from 1 to 65535 (HOST:PORT)")
    }
    guard Self.family(of: hostPart) != nil else {
      throw UsageError("\(flag): '\(hostPart)' is not a numeric IPv4 or IPv6 address")
    }
    host = hostPart
    self.port = port
  }

  /// The private metrics listener's address: `127.0.0.1:9180` unless `--metrics` says otherwise.
  static let defaultMetrics = "127.0.0.1:9180"

  /// Parses `text` as the private metrics listener's address (`--metrics`): a loopback address only,
  /// so `/metrics` never leaves the machine.
  init(parsingMetrics text: String) throws(UsageError) {
    try self.init(parsing: text, flag: "--metrics")
    guard isLoopback else {
      throw UsageError("--metrics: '\(text)' must be a loopback address (127.0.0.1:PORT or [::1]:PORT)")
    }
  }

  var isIPv6: Bool { Self.family(of: host) == AF_INET6 }

  /// Whether the host is 127.0.0.1 or ::1, the addresses nginx/aprs-cloud-metrics.conf allows.
  var isLoopback: Bool {
    var bytes = [UInt8](repeating: 0, count: 16)
    if inet_pton(AF_INET, host, &bytes) == 1 { return bytes[..<4] == [127, 0, 0, 1] }
    guard inet_pton(AF_INET6, host, &bytes) == 1 else { return false }
    return bytes[..<15].allSatisfy { $0 == 0 } && bytes[15] == 1
  }

  /// As nginx's `listen` takes it.
  var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

  /// The address a local client uses to reach it (a wildcard listener is reached on loopback).
  var loopbackReachable: UpListenAddress {
    var copy = self
    if host == "0.0.0.0" { copy.host = "127.0.0.1" }
    if host == "::" { copy.host = "::1" }
    return copy
  }

  /// The base URL for curl.
  var url: String { "http://\(loopbackReachable.description)" }

  private static func family(of host: String) -> Int32? {
    var buffer = [UInt8](repeating: 0, count: 16)
    if inet_pton(AF_INET, host, &buffer) == 1 { return AF_INET }
    if inet_pton(AF_INET6, host, &buffer) == 1 { return AF_INET6 }
    return nil
  }

  /// Opens a TCP socket to this address (bound with `bind` or connected), or returns errno.
  fileprivate func withSocketAddress<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
    if isIPv6 {
      var address = sockaddr_in6()
      address.sin6_family = sa_family_t(AF_INET6)
      address.sin6_port = port.bigEndian
      inet_pton(AF_INET6, host, &address.sin6_addr)
      return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
      }
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    inet_pton(AF_INET, host, &address.sin_addr)
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
  }
}

enum UpNetwork {
  /// Checks that nothing listens on `address` by binding it for a moment (as nginx will, with
  /// SO_REUSEADDR). Throws the reason when it is taken or not allowed.
  static func checkAvailable(_ address: UpListenAddress, flag: String = "--http") throws(UpError) {
    let fd = socket(
      address.isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw UpError("cannot create a socket: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    let result = address.withSocketAddress { bind(fd, $0, $1) }
    guard result != 0 else { return }
    let error = errno
    switch error {
    case EADDRINUSE:
      // `make run` passes HTTP and METRICS as --http and --metrics.
      let variable = flag == "--metrics" ? "METRICS" : "HTTP"
      throw UpError(
        "\(address) is already in use (another `aprs-cloud up` or a web server?); pick a free port with "
          + "\(flag) HOST:PORT (under `make run`: `make run \(variable)=HOST:PORT`)")
    case EACCES:
      throw UpError("not allowed to listen on \(address): ports below 1024 need root; use a port like 8080")
    case EADDRNOTAVAIL:
      throw UpError("\(address) is not an address of this machine")
    default:
      throw UpError("cannot listen on \(address): \(String(cString: strerror(error)))")
    }
  }

  /// One `GET /health` over HTTP/1.0 with a short timeout; the status code, or nil when nothing
  /// answered.
  static func healthStatus(_ address: UpListenAddress, timeout: Double = 1) -> Int? {
    let target = address.loopbackReachable
    let fd = socket(
      target.isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    guard target.withSocketAddress({ connect(fd, $0, $1) }) == 0 else { return nil }
    let request = "GET /health HTTP/1.0\r\nHost: \(target)\r\nUser-Agent: aprs-cloud-up\r\n\r\n"
    let sent = request.utf8CString.withUnsafeBufferPointer {
      send(fd, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL))
    }
    guard sent == request.utf8.count else { return nil }
    // "HTTP/1.1 200 OK": the status is the second word of the first line.
    var buffer = [UInt8](repeating: 0, count: 64)
    var count = 0
    while count < buffer.count {
      let received = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + count, $0.count - count, 0) }
      if received <= 0 { break }
      count += received
      if buffer[..<count].contains(UInt8(ascii: "\n")) { break }
    }
    let line = String(decoding: buffer[..<count], as: UTF8.self)
    let words = line.split(separator: " ", maxSplits: 2)
    guard words.count >= 2, words[0].hasPrefix("HTTP/") else { return nil }
    return Int(words[1])
  }
}
