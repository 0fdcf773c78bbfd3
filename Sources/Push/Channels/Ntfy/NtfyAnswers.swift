import JSON
import Store

/// ntfy's answers to a publish (`POST` to a topic URL), as ntfy documents them: its error JSON
/// (`{"code":40101,"http":401,"error":"unauthorized","link":…}`, server/errors.go), authentication
/// (its publishing guide, "Authentication") and rate limiting (its configuration guide, "Rate limiting": limits per visitor, a
/// visitor being the client's IP address, or the user for an authenticated request; failed logins are counted per
/// IP address, 30 at once then one a minute, `visitor-auth-failure-limit-*`, after which every authenticated
/// request from that address is refused with 429 code 42909 — server.go `maybeAuthenticate`). ntfy sends no
/// `Retry-After`.
///
/// | answer | verdict |
/// |---|---|
/// | 2xx | delivered |
/// | 3xx | failing `redirect` (``HTTPAnswers/redirect(_:)``) |
/// | 401 (40101), 403 (40301) | disabled `auth_refused`: the token was revoked or lacks write access, or the topic needs one; never sent again |
/// | 404, 410 | disabled `gone` |
/// | 429 42909 (auth failures of this server's address), or any 429 to a target without a token (an IP-based limit) | failing `throttled`, every target at that ntfy server waits |
/// | other 429 (42901 requests, 42908 daily messages …: the user's limits) | failing `throttled`, that target waits |
/// | 5xx | failing `server_error`, the backoff |
/// | other 4xx (400 40xxx, 413 41301 …) | that message dropped, the target kept |
/// | no answer | failing `no_answer` |
enum NtfyAnswers {
  /// The verdict of `response` to a target with (`hasToken`) or without an access token.
  static func verdict(_ response: ProviderResponse, hasToken: Bool) -> ForwardVerdict {
    if let failure = response.transportError {
      return .failing(.noAnswer, reason: "no answer: \(failure)", wait: .transport)
    }
    let status = response.status
    let detail = errorDetail(response.body).map { " (\($0))" } ?? ""
    switch status {
    case 200...299:
      return .delivered
    case 300...399:
      return HTTPAnswers.redirect(response)
    case 401, 403:
      let what =
        hasToken
        ? "ntfy refused the access token" : "ntfy refused to publish without an access token"
      return .disable(.authRefused, reason: "\(status) \(what)\(detail); save the target with a new token")
    case 404, 410:
      return .disable(.gone, reason: "\(status) the endpoint is gone\(detail)")
    case 429:
      let code = errorCode(response.body)
      let wholeService = code == authFailureCode || !hasToken
      return .failing(
        .throttled, reason: "429 ntfy rate limited this server\(detail)",
        wait: .throttled(wholeService: wholeService))
    case 500...599:
      return .failing(.serverError, reason: "\(status)\(detail)", wait: .backoff)
    default:
      return .dropMessage(reason: "\(status)\(detail)")
    }
  }

  /// ntfy's code for "limit reached: too many auth failures" (server/errors.go), counted per IP address.
  static let authFailureCode = 42909

  /// `code` of ntfy's error JSON, nil when the body is not one.
  static func errorCode(_ body: [UInt8]) -> Int? {
    guard let object = errorObject(body), case .number(let number)? = object["code"] else { return nil }
    return number.int64.flatMap { Int(exactly: $0) }
  }

  /// `40101 unauthorized` from ntfy's error JSON (its code and `error`, shortened), nil when the body is not one.
  static func errorDetail(_ body: [UInt8]) -> String? {
    guard let object = errorObject(body) else { return nil }
    var parts: [String] = []
    if let code = errorCode(body) { parts.append(String(code)) }
    if case .string(let message)? = object["error"] {
      parts.append(String(message.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(120)))
    }
    return parts.isEmpty ? nil : parts.joined(separator: " ")
  }

  private static func errorObject(_ body: [UInt8]) -> JSONObject? {
    guard !body.isEmpty, body.count <= 4096,
      case .object(let object)? = try? JSONParser.parse(body, maxDepth: 4, maxMembers: 32)
    else { return nil }
    return object
  }
}
