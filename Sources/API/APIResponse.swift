import JSON

/// One HTTP response, ready for the shell to write: status, headers, body (JSON unless
/// `contentType` says otherwise).
public struct APIResponse: Sendable {
  /// The `Content-Type` of every API answer.
  public static let json = "application/json"

  /// The HTTP status code.
  public var status: Int
  /// Extra headers beyond `Content-Type` and `Cache-Control: no-store`, which every response
  /// carries (the shell writes those two).
  public var headers: [(name: String, value: String)]
  /// The body.
  public var body: [UInt8]
  /// The `Content-Type` the shell writes: `application/json` for everything but `/metrics`
  /// (Prometheus text).
  public var contentType: String
  /// The station the request was about, for the log line (never a passcode or a token).
  public var station: String?

  public init(
    status: Int, headers: [(name: String, value: String)] = [], body: [UInt8],
    contentType: String = APIResponse.json, station: String? = nil
  ) {
    self.status = status
    self.headers = headers
    self.body = body
    self.contentType = contentType
    self.station = station
  }

  /// A 200 response with the document `writer` holds.
  public static func ok(_ writer: JSONWriter, station: String? = nil) -> APIResponse {
    APIResponse(status: 200, body: writer.bytes, station: station)
  }

  /// The response for an error: its status, its headers, `{"error":"…"}`.
  public static func error(_ error: APIError, station: String? = nil) -> APIResponse {
    var writer = JSONWriter(capacity: 64)
    writer.beginObject()
    writer.key("error")
    writer.string(error.message)
    writer.endObject()
    return APIResponse(status: error.status, headers: error.headers, body: writer.bytes, station: station)
  }

  /// The standard reason phrase for the status codes this server sends (`Status: 413 Payload Too Large`).
  public static func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 200: "OK"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 409: "Conflict"
    case 413: "Payload Too Large"
    case 415: "Unsupported Media Type"
    case 429: "Too Many Requests"
    case 500: "Internal Server Error"
    case 503: "Service Unavailable"
    default: "Status"
    }
  }
}
