/// One request as the web server handed it over (FastCGI or CGI), with its body already read.
///
/// The server builds it before calling the handler: parameters first, then the body, which is
/// checked against the server's body limit before a byte of it is read (see `RequestBodyError`).
public struct Request: Sendable {
  /// Every CGI/FastCGI parameter the web server passed (`REQUEST_METHOD`, `CONTENT_TYPE`,
  /// `HTTP_*`, …). In CGI mode this is the whole process environment.
  public var params: [String: String]
  /// `REQUEST_METHOD`; `GET` when it is missing or empty.
  public var method: String
  /// The path the application routes on, from `DOCUMENT_URI`, `REQUEST_URI` or `SCRIPT_NAME` +
  /// `PATH_INFO`, without query string and without the prefix the web server mounted it under
  /// (see `RequestPath`): `/v1/sync`, `/health`.
  public var path: String
  /// The body bytes (exactly `CONTENT_LENGTH` of them; empty without one), or why there are none.
  public var body: Result<[UInt8], RequestBodyError>
  /// `REMOTE_ADDR`, the client's address as the web server saw it; empty when not passed.
  public var remoteAddress: String

  /// `CONTENT_TYPE`, if the web server passed one.
  public var contentType: String? { params["CONTENT_TYPE"] }

  public init(
    params: [String: String], method: String, path: String, body: Result<[UInt8], RequestBodyError>,
    remoteAddress: String
  ) {
    self.params = params
    self.method = method
    self.path = path
    self.body = body
    self.remoteAddress = remoteAddress
  }
}

/// Why a request has no body to hand over. Decided by the server before the handler runs; the
/// handler answers it (the `/v1` API with 413 or 400). The `description` is the sentence for
/// the client.
public enum RequestBodyError: Error, Equatable, Sendable, CustomStringConvertible {
  /// `CONTENT_LENGTH` is over the limit (bytes): nothing of the body was kept, at most 1 MiB of
  /// it was read and thrown away so the web server can finish sending and read the answer.
  case tooLarge(limit: Int)
  /// `CONTENT_LENGTH` is negative, not decimal digits, or has a sign, spaces or a fraction.
  case invalidLength
  /// FastCGI: body bytes came without a `CONTENT_LENGTH`.
  case lengthRequired
  /// The body ended before `CONTENT_LENGTH` bytes (both counts in bytes).
  case endedEarly(received: Int, expected: Int)

  public var description: String {
    switch self {
    case .tooLarge(let limit): "request body is larger than \(limit) bytes"
    case .invalidLength: "Content-Length is not a valid length"
    case .lengthRequired: "a request body needs a Content-Length"
    case .endedEarly(let received, let expected):
      "request body ended early (\(received) of \(expected) bytes)"
    }
  }
}
