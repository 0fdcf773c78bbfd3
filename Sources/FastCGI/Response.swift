/// One answer, CGI style: `Status:` line, headers, `Content-Length`, blank line, body.
public struct Response: Sendable {
  /// The HTTP status code.
  public var status: Int
  /// The reason phrase after the code on the `Status:` line (`OK`, `Payload Too Large`).
  public var reason: String
  /// The headers, in this order. `Status` and `Content-Length` are the server's own: given here
  /// they are dropped. Line breaks and other control characters are removed from names and values.
  public var headers: [(name: String, value: String)]
  /// The body; its length becomes `Content-Length`.
  public var body: [UInt8]

  public init(status: Int, reason: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [])
  {
    self.status = status
    self.reason = reason
    self.headers = headers
    self.body = body
  }

  /// The bytes on the wire (FastCGI stdout or CGI standard output).
  public func encoded() -> [UInt8] {
    var head = "Status: \(status) \(Response.headerSafe(reason))\r\n"
    for (name, value) in headers where !Response.serverHeaders.contains(name.lowercased()) {
      head += Response.headerSafe(name) + ": " + Response.headerSafe(value) + "\r\n"
    }
    head += "Content-Length: \(body.count)\r\n\r\n"
    var bytes = Array(head.utf8)
    bytes.reserveCapacity(bytes.count + body.count)
    bytes.append(contentsOf: body)
    return bytes
  }

  /// Header names (lower case) only the server writes.
  static let serverHeaders: Set<String> = ["status", "content-length"]

  /// A header name or value with line breaks and other control characters removed.
  public static func headerSafe(_ text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
  }
}
