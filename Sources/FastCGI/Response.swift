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
    var bytes: [UInt8] = []
    bytes.reserveCapacity(64 + headers.count * 48 + body.count)
    Self.append("Status: ", to: &bytes)
    Self.append(String(status), to: &bytes)
    bytes.append(0x20)
    Self.appendSafe(reason, to: &bytes)
    bytes.append(contentsOf: [13, 10])
    for (name, value) in headers where !Response.isServerHeader(name) {
      Self.appendSafe(name, to: &bytes)
      bytes.append(contentsOf: [0x3A, 0x20])
      Self.appendSafe(value, to: &bytes)
      bytes.append(contentsOf: [13, 10])
    }
    Self.append("Content-Length: ", to: &bytes)
    Self.append(String(body.count), to: &bytes)
    bytes.append(contentsOf: [13, 10, 13, 10])
    bytes.append(contentsOf: body)
    return bytes
  }

  private static func append(_ text: String, to bytes: inout [UInt8]) {
    bytes.append(contentsOf: text.utf8)
  }

  /// `text` without line breaks and other control characters (`headerSafe`), straight into `bytes`.
  /// In UTF-8 those are exactly the bytes below 0x20 and 0x7F.
  private static func appendSafe(_ text: String, to bytes: inout [UInt8]) {
    for byte in text.utf8 where byte >= 0x20 && byte != 0x7F { bytes.append(byte) }
  }

  /// Whether `name` is one of `serverHeaders`, in any case.
  static func isServerHeader(_ name: String) -> Bool {
    let utf8 = name.utf8
    guard utf8.count == 6 || utf8.count == 14 else { return false }
    return serverHeaders.contains(name.lowercased())
  }

  /// Header names (lower case) only the server writes.
  static let serverHeaders: Set<String> = ["status", "content-length"]

  /// A header name or value with line breaks and other control characters removed.
  public static func headerSafe(_ text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
  }
}
