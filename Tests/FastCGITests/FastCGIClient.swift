import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// A minimal FastCGI client over a unix socket, for driving the server record by record,
/// including records no web server would send.
final class FastCGIClient {
  /// Record types (FastCGI 1.0, section 8).
  enum RecordType: UInt8 {
    case beginRequest = 1
    case abortRequest = 2
    case endRequest = 3
    case params = 4
    case stdin = 5
    case stdout = 6
    case stderr = 7
    case getValues = 9
    case unknownType = 11
  }

  /// One record as received.
  struct Record {
    var type: UInt8
    var requestID: UInt16
    var content: [UInt8]
  }

  /// What came back on a connection.
  struct Outcome {
    var records: [Record] = []
    /// Whether the stream ended (EOF or reset) rather than after FCGI_END_REQUEST.
    var closedWithoutEnd = false

    var ended: Bool { records.contains { $0.type == RecordType.endRequest.rawValue } }
    var stdout: [UInt8] { records.filter { $0.type == RecordType.stdout.rawValue }.flatMap(\.content) }

    /// The CGI-style answer in the stdout records, if they hold one.
    var reply: Reply? { Reply(parsing: stdout) }
  }

  /// A `Status:` line, headers and body.
  struct Reply {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    init?(parsing bytes: [UInt8]) {
      let separator = Array("\r\n\r\n".utf8)
      guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
      let lines = String(decoding: bytes[..<end], as: UTF8.self).split(separator: "\r\n")
      headers = lines.compactMap { line in
        guard let colon = line.firstIndex(of: ":") else { return nil }
        return (String(line[..<colon]), String(line[line.index(colon, offsetBy: 2)...]))
      }
      guard let statusLine = headers.first(where: { $0.name == "Status" }),
        let code = Int(statusLine.value.prefix(3))
      else { return nil }
      status = code
      body = Array(bytes[(end + 4)...])
    }

    func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
    var text: String { String(decoding: body, as: UTF8.self) }
  }

  let fd: Int32

  /// Connects to the unix socket at `path`; reads and writes time out after `timeoutSeconds`, so a
  /// server that never answers fails the test instead of hanging it.
  init(path: String, timeoutSeconds: Int = 15) throws {
    fd = try connectUnixSocket(path)
    var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
  }

  deinit { close(fd) }

  // MARK: Encoding

  /// One record: the 8-byte header (version, type, request id, content length, padding length)
  /// and the content, padded to a multiple of 8 unless `padding` says otherwise.
  static func record(
    _ type: UInt8, _ content: [UInt8], requestID: UInt16 = 1, version: UInt8 = 1, padding: Int? = nil
  ) -> [UInt8] {
    let pad = padding ?? (8 - content.count % 8) % 8
    return [
      version, type, UInt8(requestID >> 8), UInt8(requestID & 0xFF), UInt8(content.count >> 8),
      UInt8(content.count & 0xFF), UInt8(pad), 0,
    ] + content + [UInt8](repeating: 0, count: pad)
  }

  /// FCGI_BEGIN_REQUEST: role (1 responder) and flags (1 keep the connection).
  static func begin(role: UInt16 = 1, flags: UInt8 = 0, requestID: UInt16 = 1) -> [UInt8] {
    record(
      RecordType.beginRequest.rawValue, [UInt8(role >> 8), UInt8(role & 0xFF), flags, 0, 0, 0, 0, 0],
      requestID: requestID)
  }

  /// A name-value length: one byte below 128, else four with the high bit set.
  static func length(_ count: Int) -> [UInt8] {
    count < 128
      ? [UInt8(count)]
      : [
        UInt8(0x80 | (count >> 24)), UInt8((count >> 16) & 0xFF), UInt8((count >> 8) & 0xFF),
        UInt8(count & 0xFF),
      ]
  }

  /// Name-value pairs as FCGI_PARAMS content.
  static func encodeParams(_ pairs: [(String, String)]) -> [UInt8] {
    pairs.flatMap { name, value in
      length(name.utf8.count) + length(value.utf8.count) + Array(name.utf8) + Array(value.utf8)
    }
  }

  /// `bytes` as records of `type` of at most `chunk` bytes each (none for no bytes).
  static func stream(_ type: RecordType, _ bytes: [UInt8], chunk: Int = 65_535) -> [UInt8] {
    stride(from: 0, to: bytes.count, by: chunk).flatMap { start in
      record(type.rawValue, Array(bytes[start..<min(bytes.count, start + chunk)]))
    }
  }

  /// The records of a whole request: BEGIN, the params (and their end), the body in records of
  /// `bodyChunk` bytes, the end of the body.
  static func request(_ params: [(String, String)], body: [UInt8] = [], bodyChunk: Int = 65_535) -> [UInt8] {
    begin() + stream(.params, encodeParams(params)) + record(RecordType.params.rawValue, [])
      + stream(.stdin, body, chunk: bodyChunk) + record(RecordType.stdin.rawValue, [])
  }

  /// What nginx passes for `method path`, with `CONTENT_LENGTH` when there is a body.
  static func params(
    _ method: String, _ path: String, body: [UInt8] = [], contentLength: String? = nil,
    extra: [(String, String)] = []
  ) -> [(String, String)] {
    var params: [(String, String)] = [
      ("GATEWAY_INTERFACE", "CGI/1.1"), ("REQUEST_METHOD", method), ("REQUEST_URI", path),
      ("DOCUMENT_URI", path), ("SCRIPT_NAME", path), ("REMOTE_ADDR", "192.0.2.7"),
    ]
    if let length = contentLength ?? (body.isEmpty ? nil : String(body.count)) {
      params.append(("CONTENT_LENGTH", length))
    }
    return params + extra
  }

  // MARK: Sending and receiving

  /// Sends every byte; throws when the server is gone.
  func send(_ bytes: [UInt8]) throws {
    try sendAll(fd, bytes)
  }

  /// Says no more bytes will come (the server reads end of stream).
  func finishSending() { shutdown(fd, Int32(SHUT_WR)) }

  /// Reads records until FCGI_END_REQUEST or the end of the stream.
  func receive() -> Outcome {
    var outcome = Outcome()
    var pending: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      while pending.count >= 8 {
        let length = Int(pending[4]) << 8 | Int(pending[5])
        let total = 8 + length + Int(pending[6])
        guard pending.count >= total else { break }
        let record = Record(
          type: pending[1], requestID: UInt16(pending[2]) << 8 | UInt16(pending[3]),
          content: Array(pending[8..<(8 + length)]))
        pending.removeFirst(total)
        outcome.records.append(record)
        if record.type == RecordType.endRequest.rawValue { return outcome }
      }
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 {
        outcome.closedWithoutEnd = true
        return outcome
      }
      pending += buffer[0..<count]
    }
  }

  /// One whole request on a new connection, and what came back.
  static func exchange(path socketPath: String, _ bytes: [UInt8]) throws -> Outcome {
    let client = try FastCGIClient(path: socketPath)
    try client.send(bytes)
    return client.receive()
  }
}
