import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// A non-blocking TCP connection to an APRS-IS server: `TCP_NODELAY`, `SO_KEEPALIVE`, close-on-exec.
final class TCPSocket {
  let descriptor: Int32
  /// The numeric address connected to (`127.0.0.1:14580`, `[::1]:14580`).
  let address: String
  private var isClosed = false

  private init(descriptor: Int32, address: String) {
    self.descriptor = descriptor
    self.address = address
  }

  deinit { close() }

  /// Looks `host` up afresh (`getaddrinfo`), then tries each address in turn, each for at most `timeoutMs`.
  /// Gives up early when `wake` becomes readable and `shouldStop()` says so.
  static func connect(
    host: String, port: Int, timeoutMs: Int64, wake: WakePipe, shouldStop: () -> Bool
  ) -> Result<TCPSocket, ConnectFailure> {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    hints.ai_flags = AI_NUMERICSERV
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &list)
    guard status == 0, let first = list else {
      return .failure(ConnectFailure("cannot resolve \(host): \(String(cString: gai_strerror(status)))"))
    }
    defer { freeaddrinfo(first) }
    var lastError = "no address for \(host)"
    var cursor: UnsafeMutablePointer<addrinfo>? = first
    while let entry = cursor {
      cursor = entry.pointee.ai_next
      if shouldStop() { return .failure(ConnectFailure("stopping")) }
      let address = numericAddress(entry.pointee.ai_addr, entry.pointee.ai_addrlen)
      switch attempt(entry.pointee, timeoutMs: timeoutMs, wake: wake, shouldStop: shouldStop) {
      case .success(let fd): return .success(TCPSocket(descriptor: fd, address: address))
      case .failure(let reason): lastError = "\(address): \(reason)"
      }
    }
    return .failure(ConnectFailure(lastError))
  }

  private static func attempt(
    _ info: addrinfo, timeoutMs: Int64, wake: WakePipe, shouldStop: () -> Bool
  ) -> Result<Int32, ConnectFailure> {
    let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
    let fd = socket(info.ai_family, type, 0)
    guard fd >= 0 else { return .failure(ConnectFailure(errnoText())) }
    var on: Int32 = 1
    let size = socklen_t(MemoryLayout<Int32>.size)
    _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, size)
    _ = setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, size)
    var idle: Int32 = 60
    var interval: Int32 = 10
    var probes: Int32 = 3
    _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPIDLE, &idle, size)
    _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPINTVL, &interval, size)
    _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPCNT, &probes, size)

    if Glibc.connect(fd, info.ai_addr, info.ai_addrlen) == 0 { return .success(fd) }
    guard errno == EINPROGRESS || errno == EINTR else {
      let reason = errnoText()
      Glibc.close(fd)
      return .failure(ConnectFailure(reason))
    }
    let deadline = monotonicMilliseconds() + timeoutMs
    while true {
      let remaining = deadline - monotonicMilliseconds()
      if remaining <= 0 {
        Glibc.close(fd)
        return .failure(ConnectFailure("connect timed out after \(timeoutMs) ms"))
      }
      var fds = [
        pollfd(fd: fd, events: Int16(POLLOUT), revents: 0),
        pollfd(fd: wake.readDescriptor, events: Int16(POLLIN), revents: 0),
      ]
      let ready = poll(&fds, 2, Int32(min(remaining, 1000)))
      if ready < 0 && errno != EINTR {
        let reason = errnoText()
        Glibc.close(fd)
        return .failure(ConnectFailure(reason))
      }
      if fds[1].revents != 0 {
        wake.drain()
        if shouldStop() {
          Glibc.close(fd)
          return .failure(ConnectFailure("stopping"))
        }
      }
      if fds[0].revents != 0 {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else {
          Glibc.close(fd)
          return .failure(ConnectFailure(String(cString: strerror(error))))
        }
        return .success(fd)
      }
    }
  }

  /// What a read gave.
  enum ReadResult {
    case data(Int)
    case wouldBlock
    case closed
    case failed(String)
  }

  /// Reads what is available into `buffer`.
  func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
    while true {
      let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
      if count > 0 { return .data(count) }
      if count == 0 { return .closed }
      switch errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK: return .wouldBlock
      default: return .failed(Self.errnoText())
      }
    }
  }

  /// Writes as much of `bytes` as the socket takes now; the count written, or nil on an error (`reason`).
  func write(_ bytes: UnsafeRawBufferPointer) -> Result<Int, ConnectFailure> {
    while true {
      let count = send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
      if count >= 0 { return .success(count) }
      switch errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK: return .success(0)
      default: return .failure(ConnectFailure(Self.errnoText()))
      }
    }
  }

  func close() {
    guard !isClosed else { return }
    isClosed = true
    Glibc.close(descriptor)
  }

  static func errnoText() -> String { String(cString: strerror(errno)) }

  private static func numericAddress(_ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t)
    -> String
  {
    guard let address else { return "?" }
    var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
    var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
    let status = getnameinfo(
      address, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
      NI_NUMERICHOST | NI_NUMERICSERV)
    guard status == 0 else { return "?" }
    let hostText = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let serviceText = String(
      decoding: service.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return hostText.contains(":") ? "[\(hostText)]:\(serviceText)" : "\(hostText):\(serviceText)"
  }
}

/// Why a connect (or a write) failed.
struct ConnectFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
