import JSON

/// One request of the conformance runner, as any public client of `/v1` could send it (docs/protocol.md
/// "Transport"): a method, a path under the server's base URL, extra header lines and the body.
struct ConformanceRequest: Sendable {
  /// `GET`, `HEAD` or `POST`.
  var method: String
  /// `/v1/register`, `/health`, …: appended to the base URL.
  var path: String
  /// Header lines beyond `content-type` (`Origin: …`).
  var headers: [String] = []
  /// The body as sent (a POST's JSON, or bytes that are deliberately not JSON); nil for none.
  var body: [UInt8]?
}

/// What the server answered to a ``ConformanceRequest``.
struct ConformanceAnswer: Sendable {
  var status: Int
  /// Header fields in the order they came.
  var headers: [(name: String, value: String)] = []
  var body: [UInt8] = []
  /// How long the answer took, ms (a long poll's hold).
  var elapsedMs: Int = 0

  /// The first header field named `name` (compared without case), or nil.
  func header(_ name: String) -> String? {
    let wanted = name.lowercased()
    return headers.first { $0.name.lowercased() == wanted }?.value
  }

  /// The body as a JSON object, or nil when it is not one.
  var object: JSONObject? {
    guard case .object(let object)? = try? JSONParser.parse(body) else { return nil }
    return object
  }

  /// The body as text, shortened for a reason line.
  var bodyExcerpt: String {
    let text = String(decoding: body.prefix(160), as: UTF8.self)
    return body.count > 160 ? text + "…" : text
  }
}

/// Why a request got no answer at all (refused connection, timeout, TLS failure): libcurl's sentence.
struct ConformanceTransportError: Error, CustomStringConvertible {
  var description: String
}

/// How the runner reaches a server: the only I/O of the checks. ``ConformanceHTTP`` is the real one;
/// tests script one.
protocol ConformanceTransport {
  func exchange(_ request: ConformanceRequest) throws(ConformanceTransportError) -> ConformanceAnswer
}

/// A check's verdict.
enum CheckStatus: String, Sendable {
  case pass = "PASS"
  case fail = "FAIL"
  case skip = "SKIP"
}

/// One check's result: its name, the section of docs/protocol.md it checks, its verdict and why.
struct CheckResult: Sendable {
  var name: String
  /// `docs/protocol.md#the-cursor`.
  var section: String
  var status: CheckStatus
  var reason: String
}

/// Ends a check early: a FAIL or a SKIP with its reason.
struct CheckStop: Error {
  var status: CheckStatus
  var reason: String

  static func fail(_ reason: String) -> CheckStop { CheckStop(status: .fail, reason: reason) }
  static func skip(_ reason: String) -> CheckStop { CheckStop(status: .skip, reason: reason) }
}

/// The checks, in the order they run, each named after its section of docs/protocol.md.
enum ConformanceCheck: String, CaseIterable, Sendable {
  case info
  case health
  case transport
  case passcode
  case identity
  case errorBodies = "error-bodies"
  case register
  case sync
  case syncCursor = "sync-cursor"
  case heartbeat
  case optInsOff = "opt-ins-off"
  case avatars
  case longPoll = "long-poll"
  case limitsRetryAfter = "limits-retry-after"
  case unregister
  case unregisterEmptyToken = "unregister-empty-token"

  /// The section's anchor in docs/protocol.md.
  var anchor: String {
    switch self {
    case .info: "server-information"
    case .health: "get-health"
    case .transport: "transport"
    case .passcode: "passcode"
    case .identity: "identity"
    case .errorBodies: "errors"
    case .register: "post-v1register"
    case .sync: "post-v1sync"
    case .syncCursor: "the-cursor"
    case .heartbeat: "post-v1heartbeat"
    case .optInsOff: "opt-in-answers-want"
    case .avatars: "avatars"
    case .longPoll: "long-poll"
    case .limitsRetryAfter: "limits"
    case .unregister, .unregisterEmptyToken: "post-v1unregister"
    }
  }

  /// `docs/protocol.md#<anchor>`.
  var section: String { "docs/protocol.md#" + anchor }
}

extension JSONValue {
  /// The value as an integer, when it is a JSON number written as one.
  var integer: Int64? {
    guard case .number(let number) = self else { return nil }
    return number.int64
  }

  var text: String? {
    guard case .string(let text) = self else { return nil }
    return text
  }

  var members: JSONObject? {
    guard case .object(let object) = self else { return nil }
    return object
  }

  var elements: [JSONValue]? {
    guard case .array(let elements) = self else { return nil }
    return elements
  }

  /// A request value from Swift literals' shapes.
  static func int(_ value: Int64) -> JSONValue { .number(JSONNumber(literal: String(value))) }
}

/// A JSON object's bytes from members in order.
func conformanceBody(_ members: [(String, JSONValue)]) -> [UInt8] {
  var writer = JSONWriter()
  writer.value(.object(JSONObject(members.map { (key: $0.0, value: $0.1) })))
  return writer.bytes
}
