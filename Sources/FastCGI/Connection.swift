import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// One accepted FastCGI connection: its socket, the parser over what it sent, the request it
/// carries and, while parked, its ticket.
///
/// Owned by exactly one thread at a time (the worker that accepted it or took it from the ready
/// queue, or the keeper thread) and handed between them through the server's queues, never shared:
/// nothing in it is locked.
final class Connection {
  /// What the keeper holds it for.
  enum Role {
    /// A request is still coming in (or, on a kept connection, the next one).
    case reading
    /// Its request is parked.
    case parked
    /// Answered; what the web server still sends is read and thrown away until it closes.
    case draining
  }

  /// Unique for the server's lifetime (the keeper's epoll and tables know it by this).
  let id: UInt64
  let fd: Int32
  var parser: RequestParser
  /// Read returned end of stream (or failed): nothing more will come.
  var inputEnded = false
  /// A write failed or timed out: the client is gone.
  var writeFailed = false
  /// The handler's answer, as records, until the handler returns.
  var pendingAnswer: [UInt8]?

  /// The request being served: its FCGI_PARAMS bytes until the handler gets them, then only what
  /// log lines and a parked request need.
  var params: [UInt8] = []
  var method = "GET"
  var path = "/"
  var remoteAddress = ""
  /// Monotonic µs when the parameters were complete.
  var startedAt: Int64 = 0
  /// Requests answered on this connection (more than one only on a kept connection).
  var requestsServed = 0

  /// While parked (and on its way back to a worker): the handler's ticket.
  var ticket: ParkTicket?
  /// Monotonic ms when the request was first parked (0: never).
  var parkedAt: Int64 = 0
  /// The keeper has held the request in its parked set (a park after a wake is not its first).
  var wasHeld = false

  /// The keeper's view.
  var role = Role.reading
  /// Monotonic ms when the keeper gives up on it (reading, draining), 0 for none.
  var deadline: Int64 = 0
  /// Monotonic ms after which a draining connection is closed however much it still sends.
  var drainUntil: Int64 = 0

  init(id: UInt64, fd: Int32, bodyLimit: Int) {
    self.id = id
    self.fd = fd
    self.parser = RequestParser(bodyLimit: bodyLimit)
  }

  /// The parameters `begin` reads, in this order.
  private static let known = ParamsDecoder.Names([
    "REQUEST_METHOD", "DOCUMENT_URI", "REQUEST_URI", "SCRIPT_NAME", "PATH_INFO", "REMOTE_ADDR",
  ])

  /// Takes the parameters (FCGI_PARAMS bytes, well-formed) of a request that has started and works
  /// out its method, path and client address.
  func begin(_ parameters: [UInt8]) {
    params = parameters
    let values = ParamsDecoder.values(of: Self.known, in: parameters[...])
    method = values[0].flatMap { $0.isEmpty ? nil : $0 } ?? "GET"
    path = RequestPath.resolve(
      documentURI: values[1], requestURI: values[2], scriptName: values[3], pathInfo: values[4])
    remoteAddress = values[5] ?? ""
    startedAt = monotonicMicroseconds()
  }

  /// The request for the handler (the parameters go with it).
  func request(body: Result<[UInt8], RequestBodyError>) -> Request {
    defer { params = [] }
    return Request(rawParams: params, method: method, path: path, body: body, remoteAddress: remoteAddress)
  }

  /// Forgets the answered request (a kept connection reads the next one).
  func resetForNextRequest() {
    requestsServed += 1
    parser.reset()
    params = []
    ticket = nil
    parkedAt = 0
    wasHeld = false
    role = .reading
  }

  /// One `read(2)` into `buffer`: the byte count, 0 at the end of the stream, -1 with `errno`
  /// (EAGAIN: nothing there now). Retries EINTR.
  func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
    while true {
      let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
      if count < 0 && errno == EINTR { continue }
      return count
    }
  }

  /// Reads what arrived and feeds it to the parser: its event, or `endOfInput()` once the peer closed or the
  /// read failed (and `inputEnded` set); nil when nothing is there now (EAGAIN).
  func readEvent(into buffer: UnsafeMutableRawBufferPointer) -> RequestParser.Event? {
    let count = read(into: buffer)
    if count > 0 { return parser.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count])) }
    guard count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) else { return nil }
    inputEnded = true
    return parser.endOfInput()
  }

  /// Writes all of `bytes` to the non-blocking socket, waiting in `poll(2)` while the socket buffer
  /// is full, for at most `timeoutMs` in all. False (and `writeFailed`) when the peer is gone or
  /// the time ran out.
  @discardableResult
  func writeAll(_ bytes: [UInt8], timeoutMs: Int64) -> Bool {
    guard !writeFailed else { return false }
    let deadline = monotonicMilliseconds() + timeoutMs
    let done = bytes.withUnsafeBytes { buffer -> Bool in
      var offset = 0
      while offset < buffer.count {
        let written = send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
        if written >= 0 {
          offset += written
          continue
        }
        if errno == EINTR { continue }
        guard errno == EAGAIN || errno == EWOULDBLOCK else { return false }
        let remaining = deadline - monotonicMilliseconds()
        guard remaining > 0 else { return false }
        var probe = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        if poll(&probe, 1, Int32(clamping: remaining)) < 0 && errno != EINTR { return false }
      }
      return true
    }
    if !done { writeFailed = true }
    return done
  }

  /// Whether the socket has nothing unread and has not ended: closing it now sends a clean end of
  /// stream (closing with unread bytes would reset the connection, and over TCP the reset can
  /// overtake the answer).
  func hasNothingUnread() -> Bool {
    var byte: UInt8 = 0
    let count = recv(fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
    if count == 0 { inputEnded = true }
    return count == 0 || (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
  }
}
