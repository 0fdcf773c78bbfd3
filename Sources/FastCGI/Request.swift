/// One request as the web server handed it over (FastCGI or CGI), with its body already read.
///
/// The server builds it before calling the handler: parameters first, then the body, which is
/// checked against the server's body limit before a byte of it is read (see `RequestBodyError`).
public struct Request: Sendable {
  /// Every CGI/FastCGI parameter the web server passed (`REQUEST_METHOD`, `CONTENT_TYPE`,
  /// `HTTP_*`, …). In CGI mode this is the whole process environment. Over FastCGI the dictionary
  /// is built when asked for (from the FCGI_PARAMS bytes); `parameter(_:)` finds one without it.
  public var params: [String: String] {
    get {
      switch storage {
      case .decoded(let params): params
      case .raw(let bytes): (try? ParamsDecoder.decodeParameters(bytes[...])) ?? [:]
      }
    }
    set { storage = .decoded(newValue) }
  }
  /// The parameters as given, or still as FCGI_PARAMS name-value pairs (checked well-formed).
  private var storage: Parameters

  private enum Parameters: Sendable {
    case decoded([String: String])
    case raw([UInt8])
  }
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
  public var contentType: String? { parameter("CONTENT_TYPE") }

  /// The values of several parameters in one pass over the FCGI_PARAMS bytes, in the order of `names` (nil
  /// for each one missing).
  public func parameters(_ names: ParameterNames) -> [String?] {
    switch storage {
    case .decoded(let params): names.names.map { params[$0] }
    case .raw(let bytes): ParamsDecoder.values(of: names.utf8, in: bytes[...])
    }
  }

  /// One parameter's value (the first, if the name came twice), or nil.
  public func parameter(_ name: String) -> String? {
    switch storage {
    case .decoded(let params): params[name]
    case .raw(let bytes): ParamsDecoder.values(of: ParamsDecoder.Names([name]), in: bytes[...])[0]
    }
  }

  public init(
    params: [String: String], method: String, path: String, body: Result<[UInt8], RequestBodyError>,
    remoteAddress: String
  ) {
    self.storage = .decoded(params)
    self.method = method
    self.path = path
    self.body = body
    self.remoteAddress = remoteAddress
  }

  /// A request whose parameters are still FCGI_PARAMS bytes (well-formed: `ParamsDecoder.check`).
  init(
    rawParams: [UInt8], method: String, path: String, body: Result<[UInt8], RequestBodyError>,
    remoteAddress: String
  ) {
    self.storage = .raw(rawParams)
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

/// Names of parameters to look up together (`Request.parameters(_:)`), prepared once (a static constant).
public struct ParameterNames: Sendable {
  let names: [String]
  let utf8: ParamsDecoder.Names

  public init(_ names: [String]) {
    self.names = names
    self.utf8 = ParamsDecoder.Names(names)
  }
}
