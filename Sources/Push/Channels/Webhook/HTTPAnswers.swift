import JSON
import Store

/// A webhook's answers (RFC 9110 §15): the receiver is the owner's own.
///
/// | answer | verdict |
/// |---|---|
/// | 2xx | delivered (§15.3) |
/// | 3xx (301, 302, 303, 307, 308) | failing `redirect` with the `Location`, never followed (§15.4: following is the client's choice; the signed body and a secret in the URL go only to the address the owner gave) |
/// | 404, 410 | disabled `gone` (§15.5.5, §15.5.11) |
/// | 429 | failing `throttled`, `Retry-After` else 60 s doubling (RFC 6585 §4, RFC 9110 §10.2.3) |
/// | 5xx | failing `server_error`, the backoff or a later `Retry-After` (§15.6) |
/// | other 4xx | that message dropped, the target kept |
/// | no answer | failing `no_answer` |
enum HTTPAnswers {
  static func verdict(_ response: ProviderResponse) -> ForwardVerdict {
    if let failure = response.transportError {
      return .failing(.noAnswer, reason: "no answer: \(failure)", wait: .transport)
    }
    let status = response.status
    let detail = response.body.isEmpty ? "" : ": " + response.bodySummary
    switch status {
    case 200...299:
      return .delivered
    case 300...399:
      return redirect(response)
    case 404, 410:
      return .disable(.gone, reason: "\(status) the endpoint is gone")
    case 429:
      return .failing(.throttled, reason: "429 rate limited" + detail, wait: .throttled(wholeService: false))
    case 500...599:
      return .failing(.serverError, reason: "\(status)" + detail, wait: .backoff)
    default:
      return .dropMessage(reason: "\(status)" + detail)
    }
  }

  /// A redirect (RFC 9110 §15.4): never followed, the target failing with the `Location` the owner should save
  /// instead (retried with the backoff, so a receiver that stops redirecting gets the messages still within
  /// `maxAge`).
  static func redirect(_ response: ProviderResponse) -> ForwardVerdict {
    let location = response.location.map { " to " + printable($0) } ?? " without a Location"
    return .failing(
      .redirect, reason: "\(response.status) redirect\(location), not followed: save the target's new URL",
      wait: .backoff)
  }

  /// `text` without control characters.
  static func printable(_ text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
  }
}
