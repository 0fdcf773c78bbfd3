import API
import Logging
import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// One request's transport: where its parameters and body come from and where its answer goes.
/// FastCGI and CGI each provide one; `Responder` does the same thing over both.
protocol RequestChannel {
  /// A CGI/FastCGI parameter (`REQUEST_METHOD`, `CONTENT_LENGTH`, …).
  func parameter(_ name: String) -> String?
  /// Reads up to `buffer.count` body bytes; fewer only at the end of the body or on an error.
  mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> Int
  /// Writes the whole response; false when the client is gone.
  mutating func write(_ bytes: [UInt8]) -> Bool
  /// Whether the transport marks the end of the body (FastCGI's empty stdin record), so reading
  /// without a `CONTENT_LENGTH` is safe. CGI only promises `CONTENT_LENGTH` bytes.
  var bodyEndIsMarked: Bool { get }
}

/// Moves one request through: parameters and body in, `APIHandler` in the middle, status line,
/// headers and body out, one log line. It decides nothing about the API itself except what it
/// must decide before the body is read (413 for an announced body over the limit, 400 for a
/// `CONTENT_LENGTH` that is missing, garbage or a lie).
struct Responder {
  let handler: APIHandler
  let maxBody: Int
  let logger: Logger
  /// Where each request is counted and timed for `/metrics` (shared by every worker).
  var metrics: RequestMetrics?
  /// Whether `metricsParameter` is believed: true for FastCGI, where parameters come from the web
  /// server's configuration; false for CGI, where any of them may come from the environment.
  var acceptsMetricsParameter = false

  /// The FastCGI parameter that marks a request from nginx's private metrics listener
  /// (`fastcgi_param APRS_CLOUD_METRICS on;` in nginx/aprs-cloud-metrics.conf; the public locations
  /// send it empty). A client cannot set it: nginx passes request headers as `HTTP_*`.
  static let metricsParameter = "APRS_CLOUD_METRICS"

  /// At most this much of a refused body is read and thrown away, so the web server can finish
  /// sending it and read the answer instead of failing on a closed socket.
  static let drainLimit = 1 << 20

  func serve<Channel: RequestChannel>(_ channel: inout Channel) {
    let started = monotonicMicroseconds()
    metrics?.begin()
    let method = channel.parameter("REQUEST_METHOD").flatMap { $0.isEmpty ? nil : $0 } ?? "GET"
    let path = RequestPath.resolve(
      documentURI: channel.parameter("DOCUMENT_URI"), requestURI: channel.parameter("REQUEST_URI"),
      scriptName: channel.parameter("SCRIPT_NAME"), pathInfo: channel.parameter("PATH_INFO"))

    logger.debug("request started", ["method": method, "path": path])
    let response: APIResponse
    switch readBody(&channel) {
    case .success(let body):
      let request = APIRequest(
        method: method, path: path, contentType: channel.parameter("CONTENT_TYPE"), body: body,
        remoteAddress: channel.parameter("REMOTE_ADDR") ?? "",
        viaMetricsListener: acceptsMetricsParameter && channel.parameter(Self.metricsParameter) == "on")
      response = handler.handle(request)
    case .failure(let error):
      response = .error(error)
    }

    let delivered = channel.write(Responder.encode(response))
    let elapsed = monotonicMicroseconds() - started
    metrics?.record(path: path, status: response.status, microseconds: elapsed)
    // A scraper asks for /metrics every few seconds: its answers are logged at debug only.
    let level: LogLevel =
      response.status >= 500 ? .error : (path == "/metrics" && response.status == 200 ? .debug : .info)
    if logger.isEnabled(level) {
      var fields: [(String, String)] = [("method", method), ("path", path)]
      if let station = response.station { fields.append(("station", station)) }
      fields.append(("status", String(response.status)))
      fields.append(("us", String(elapsed)))
      if !delivered { fields.append(("delivered", "false")) }
      logger.log(level, "request", fields: fields)
    }
  }

  /// The body, or the error to answer without calling the handler.
  func readBody<Channel: RequestChannel>(_ channel: inout Channel) -> Result<[UInt8], APIError> {
    switch BodyLength.classify(channel.parameter("CONTENT_LENGTH"), limit: maxBody) {
    case .tooLarge(let length):
      drain(
        &channel, upTo: channel.bodyEndIsMarked ? Responder.drainLimit : min(length, Responder.drainLimit))
      return .failure(.payloadTooLarge(limit: maxBody))
    case .invalid:
      if channel.bodyEndIsMarked { drain(&channel, upTo: Responder.drainLimit) }
      return .failure(.badRequest("Content-Length is not a valid length"))
    case .absent:
      guard channel.bodyEndIsMarked else { return .success([]) }
      var probe: UInt8 = 0
      let count = withUnsafeMutableBytes(of: &probe) { channel.read(into: $0) }
      guard count <= 0 else {
        drain(&channel, upTo: Responder.drainLimit)
        return .failure(.badRequest("a request body needs a Content-Length"))
      }
      return .success([])
    case .exact(let length):
      var body = [UInt8](repeating: 0, count: length)
      var received = 0
      while received < length {
        let count = body.withUnsafeMutableBytes { buffer in
          channel.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[received...]))
        }
        if count <= 0 { break }
        received += count
      }
      guard received == length else {
        return .failure(.badRequest("request body ended early (\(received) of \(length) bytes)"))
      }
      return .success(body)
    }
  }

  private func drain<Channel: RequestChannel>(_ channel: inout Channel, upTo limit: Int) {
    var scratch = [UInt8](repeating: 0, count: 16_384)
    var remaining = limit
    while remaining > 0 {
      let count = scratch.withUnsafeMutableBytes { buffer in
        channel.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(buffer.count, remaining)]))
      }
      if count <= 0 { return }
      remaining -= count
    }
  }

  /// `Status:` line, `Content-Type` and `Cache-Control`, the response's own headers,
  /// `Content-Length`, body.
  static func encode(_ response: APIResponse) -> [UInt8] {
    var head = "Status: \(response.status) \(APIResponse.reasonPhrase(response.status))\r\n"
    head += "Content-Type: \(headerSafe(response.contentType))\r\nCache-Control: no-store\r\n"
    let reserved: Set<String> = ["status", "content-type", "cache-control", "content-length"]
    for (name, value) in response.headers where !reserved.contains(name.lowercased()) {
      head += headerSafe(name) + ": " + headerSafe(value) + "\r\n"
    }
    head += "Content-Length: \(response.body.count)\r\n\r\n"
    var bytes = Array(head.utf8)
    bytes.reserveCapacity(bytes.count + response.body.count)
    bytes.append(contentsOf: response.body)
    return bytes
  }

  /// A header name or value with line breaks and other control characters removed.
  static func headerSafe(_ text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
  }
}

/// Writes every byte to a file descriptor, retrying short writes and EINTR. False on failure.
@discardableResult
func writeAll(_ fileDescriptor: Int32, _ bytes: [UInt8]) -> Bool {
  bytes.withUnsafeBytes { buffer in
    var offset = 0
    while offset < buffer.count {
      let written = Glibc.write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
      if written < 0 {
        if errno == EINTR { continue }
        return false
      }
      offset += written
    }
    return true
  }
}
