#if canImport(Glibc)
  import Glibc
#endif

/// Many HTTP/1.1 requests open at once from one process, each on its own loopback connection, read
/// with `poll(2)`: long polls by the thousand for the tests and the benchmark (curl runs one process
/// per transfer or caps its parallel transfers; this holds them all).
///
/// Every request carries `Connection: close`, so an answer is complete when nginx closes the
/// connection. Times are monotonic microseconds.
public final class HeldHTTPRequests {
  /// One answer, or what became of the request.
  public struct Answer: Sendable {
    /// The HTTP status, 0 when the connection ended without a status line.
    public var status: Int
    /// The body (after the blank line).
    public var body: [UInt8]
    /// Monotonic µs when the request was sent, and when its answer was complete.
    public var sentAt: Int64
    public var answeredAt: Int64

    public var text: String { String(decoding: body, as: UTF8.self) }
  }

  private struct Held {
    var fd: Int32
    var received: [UInt8] = []
    var sentAt: Int64
  }

  public let port: Int
  private var held: [Int: Held] = [:]
  /// The answers so far, by the index `send` returned.
  public private(set) var answers: [Int: Answer] = [:]
  private var nextIndex = 0

  /// Requests go to nginx at 127.0.0.1:`port`.
  public init(port: Int) {
    self.port = port
  }

  deinit {
    for request in held.values { close(request.fd) }
  }

  /// How many requests are still waiting for their answer.
  public var waiting: Int { held.count }

  /// The indexes of the requests still waiting.
  public var waitingIndexes: [Int] { Array(held.keys) }

  /// Opens a connection and sends `POST path` with `body` (JSON); returns the request's index.
  public func send(_ path: String, json body: String) throws(TestFailure) -> Int {
    let fd = try connectLoopbackTCP(port: port)
    let bytes = Array(body.utf8)
    let request =
      Array(
        ("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
          + "Content-Length: \(bytes.count)\r\nConnection: close\r\n\r\n").utf8) + bytes
    do {
      try sendAll(fd, request)
    } catch {
      close(fd)
      throw error
    }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    let index = nextIndex
    nextIndex += 1
    held[index] = Held(fd: fd, sentAt: Self.now())
    return index
  }

  /// Closes request `index`'s connection without waiting for its answer (a client that goes away).
  public func abandon(_ index: Int) {
    guard let request = held.removeValue(forKey: index) else { return }
    close(request.fd)
  }

  /// Reads answers as they come (of the requests `only` names, or of all) until `done()` holds or
  /// `timeoutMs` passed; returns whether `done()` held. Watching only the one request that matters
  /// keeps `poll(2)` cheap when thousands are open.
  @discardableResult
  public func collect(only: [Int]? = nil, timeoutMs: Int64, until done: () -> Bool) -> Bool {
    let deadline = Self.now() + timeoutMs * 1000
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while !done() {
      let remaining = deadline - Self.now()
      if remaining <= 0 { return false }
      let indexes = only?.filter { held[$0] != nil } ?? Array(held.keys)
      var fds = indexes.map { pollfd(fd: held[$0]!.fd, events: Int16(POLLIN), revents: 0) }
      if fds.isEmpty { return done() }
      let ready = poll(&fds, nfds_t(fds.count), Int32(min((remaining + 999) / 1000, 100)))
      if ready < 0 && errno != EINTR { return false }
      guard ready > 0 else { continue }
      let now = Self.now()
      for (position, entry) in fds.enumerated() where entry.revents != 0 {
        let index = indexes[position]
        while var request = held[index] {
          let count = buffer.withUnsafeMutableBytes { recv(request.fd, $0.baseAddress, $0.count, 0) }
          if count > 0 {
            request.received += buffer[..<count]
            held[index] = request
            continue
          }
          if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break }
          close(request.fd)
          held[index] = nil
          answers[index] = Self.parse(request.received, sentAt: request.sentAt, answeredAt: now)
        }
      }
    }
    return true
  }

  /// Status and body of a whole HTTP/1.1 answer.
  static func parse(_ bytes: [UInt8], sentAt: Int64, answeredAt: Int64) -> Answer {
    let separator: [UInt8] = [13, 10, 13, 10]
    var status = 0
    var body: [UInt8] = []
    if let end = (0..<max(0, bytes.count - 3)).first(where: { bytes[$0..<$0 + 4].elementsEqual(separator) }) {
      let head = String(decoding: bytes[..<end], as: UTF8.self)
      let statusLine = head.split(separator: "\r\n").first ?? ""
      let parts = statusLine.split(separator: " ")
      if parts.count >= 2 { status = Int(parts[1]) ?? 0 }
      body = Array(bytes[(end + 4)...])
    }
    return Answer(status: status, body: body, sentAt: sentAt, answeredAt: answeredAt)
  }

  /// Monotonic microseconds now (the clock `Answer` times are on).
  public static func now() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000
  }
}
