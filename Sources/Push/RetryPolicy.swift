import JSON
import Platform
import Store

/// A provider's answer to one request, or why there was none.
public struct ProviderResponse: Sendable, Equatable {
  /// The HTTP status, 0 when no answer arrived.
  public var status: Int
  /// The response body.
  public var body: [UInt8]
  /// `Retry-After` (seconds or an HTTP date), when the answer had one that parses.
  public var retryAfter: RetryAfter?
  /// The transport failure (timeout, connection refused, TLS), when there was no answer.
  public var transportError: String?
  /// The failure was the connection going away under the request (GOAWAY, a refused or reset
  /// stream, a dropped connection), not a slow or unreachable provider.
  public var connectionLost: Bool
  /// The request was never sent: every address the endpoint's host resolved to is loopback, private,
  /// link-local or otherwise not public (`HTTPRequest.refusePrivateAddresses`); the first one refused.
  public var refusedAddress: IPAddress?
  /// HTTP: the `Location` header of the answer (a redirect's target, never followed), when it had one.
  public var location: String?
  /// SMTP: the server's last reply line with the failure's code, as sent (`552 5.2.2 Mailbox full`, at most 300 bytes), when it answered.
  public var mailReply: String?

  /// `retryAfterSeconds` is shorthand for `retryAfter: .seconds(…)` (used when `retryAfter` is nil).
  public init(
    status: Int, body: [UInt8] = [], retryAfter: RetryAfter? = nil, retryAfterSeconds: Int64? = nil,
    transportError: String? = nil, connectionLost: Bool = false, refusedAddress: IPAddress? = nil,
    location: String? = nil, mailReply: String? = nil
  ) {
    self.status = status
    self.body = body
    self.retryAfter = retryAfter ?? retryAfterSeconds.map(RetryAfter.seconds)
    self.transportError = transportError
    self.connectionLost = connectionLost
    self.refusedAddress = refusedAddress
    self.location = location
    self.mailReply = mailReply
  }

  /// The body for a log line: at most 2000 bytes of it as text (invalid UTF-8 replaced), `(empty)` when
  /// there is none.
  var bodyForLog: String {
    guard !body.isEmpty else { return "(empty)" }
    let text = String(decoding: body.prefix(2000), as: UTF8.self)
    return body.count > 2000 ? text + "…" : text
  }

  /// A JSON body's string, shortened, for logs.
  var bodySummary: String {
    let text = String(decoding: body.prefix(200), as: UTF8.self)
    return text.unicodeScalars.contains { $0 == "<" } ? "(HTML page)" : text
  }
}

/// What to do with one device's push after its provider answered.
public enum PushDecision: Sendable, Equatable {
  /// Accepted by the provider.
  case delivered
  /// The recipient is gone: a device's token is dead (the device is deleted; for APNs 410 only when it was not
  /// refreshed at or after `refreshedBefore`, the time APNs learned it was dead, epoch ms), or a forward target is
  /// dead (it is disabled with the reason, and its owner told).
  case gone(reason: String, refreshedBefore: Int64?)
  /// Transient: try again at this time (epoch ms).
  case retry(at: Int64, reason: String)
  /// Do not retry this push to this device (the token is kept).
  case giveUp(reason: String)
  /// The credentials went stale: refresh them (FCM access token, APNs JWT) and resend once.
  case reauthenticate(reason: String)
  /// A configuration fault: stop this provider loudly (the other one and storage go on).
  case stopProvider(reason: String)
}

/// The error handling of docs/push.md "Error handling", as pure functions of an answer.
public enum RetryPolicy {
  /// Backoff after a server error or timeout starts here (and never goes below it).
  public static let minimumBackoffMs: Int64 = 10_000
  /// And stops growing here.
  public static let maximumBackoffMs: Int64 = 15 * 60_000
  /// A 429 without `Retry-After` waits this long; each further 429 in a row to the same device doubles it
  /// (``throttleMs(throttles:)``).
  public static let defaultRetryAfterMs: Int64 = 60_000
  /// And never longer than this.
  public static let maximumThrottleMs: Int64 = 3_600_000
  /// A push whose connection went away under it (GOAWAY, a refused stream) is resent this soon,
  /// on a new connection, once; after that it backs off like any failure.
  public static let reconnectRetryMs: Int64 = 1000

  /// When to try again after a failure without an answer: a lost connection once soon, a
  /// timeout or an unreachable provider with the backoff.
  static func transportRetry(_ response: ProviderResponse, now: Int64, attempts: Int, jitter: Double) -> Int64
  {
    if response.connectionLost && attempts == 0 { return now + reconnectRetryMs }
    return now + backoffMs(attempts: attempts, jitter: jitter)
  }

  /// Exponential backoff with jitter: 10 s × 2^attempts (capped), plus up to half again at
  /// random (`jitter` in 0..<1). Never below 10 s.
  public static func backoffMs(attempts: Int, jitter: Double) -> Int64 {
    let exponent = min(max(0, attempts), 16)
    let base = min(maximumBackoffMs, minimumBackoffMs << Int64(exponent))
    let spread = Int64(Double(base) * 0.5 * min(max(jitter, 0), 1))
    return max(minimumBackoffMs, base + spread)
  }

  /// The wait after a 429 without `Retry-After`: 60 s, then 120, 240, … for each 429 the device got in a row
  /// before this one (`throttles`), at most an hour (FCM asks for growing waits: docs/push.md "Error handling").
  public static func throttleMs(throttles: Int) -> Int64 {
    let exponent = min(max(0, throttles), 6)  // 60 s × 2^6 is past the hour already
    return min(maximumThrottleMs, defaultRetryAfterMs << Int64(exponent))
  }

  /// When a push the provider put off (429, 5xx) goes again: the later of the answer's `Retry-After` (seconds,
  /// or an HTTP date judged by `now`) and `now + waitMs`, the sender's own wait (the backoff, or for a 429
  /// without `Retry-After` the ``throttleMs(throttles:)``). The own wait never runs past `expiresAt`, the end
  /// of the push's lifetime (`[messaging] maxAge`): the last try comes while the push is still worth sending.
  /// A `Retry-After` past it is obeyed, and the sender drops the push instead of sending it late.
  public static func later(
    of response: ProviderResponse, orWait waitMs: Int64, now: Int64, expiresAt: Int64? = nil
  ) -> Int64 {
    var own = now + waitMs
    if let expiresAt { own = min(own, max(now, expiresAt)) }
    guard let retryAfter = response.retryAfter else { return own }
    return max(own, now + retryAfter.delayMs(now: now))
  }

  /// The retry time of a push answered 429: the later of `Retry-After` and the backoff when it has one, else
  /// the doubling wait of repeated 429s; never past `expiresAt` by the sender's own choice.
  static func throttledRetry(
    _ response: ProviderResponse, now: Int64, attempts: Int, throttles: Int, expiresAt: Int64?, jitter: Double
  ) -> Int64 {
    let wait =
      response.retryAfter == nil
      ? throttleMs(throttles: throttles) : backoffMs(attempts: attempts, jitter: jitter)
    return later(of: response, orWait: wait, now: now, expiresAt: expiresAt)
  }

  /// The retry time of a push answered with a server error (5xx): the later of `Retry-After` and the backoff.
  static func serverErrorRetry(
    _ response: ProviderResponse, now: Int64, attempts: Int, expiresAt: Int64?, jitter: Double
  ) -> Int64 {
    later(of: response, orWait: backoffMs(attempts: attempts, jitter: jitter), now: now, expiresAt: expiresAt)
  }

  /// What an answer means before any provider's own error codes: no answer at all (retry), or
  /// success; nil for a provider error.
  static func noAnswerOrSuccess(
    _ response: ProviderResponse, now: Int64, attempts: Int, jitter: Double
  ) -> PushDecision? {
    if let failure = response.transportError {
      let at = transportRetry(response, now: now, attempts: attempts, jitter: jitter)
      return .retry(at: at, reason: "no answer: \(failure)")
    }
    return response.status == 200 ? .delivered : nil
  }

  /// What kind of failure an answer is, for telling "every push fails the same way" from scattered
  /// failures: the status and the provider's code (`400 INVALID_ARGUMENT`, `400 BadTopic`), without the
  /// free-text message.
  public static func failureKind(_ response: ProviderResponse, platform: DevicePlatform) -> String {
    if response.transportError != nil { return "no answer" }
    let code: String? =
      switch platform {
      case .android: FCMError(body: response.body).flatMap { $0.errorCode ?? $0.status }
      // Apple's Web Push service answers like APNs (`{"reason":"BadJwtToken"}`); others mostly say nothing.
      case .ios, .webpush, .unifiedpush: APNsError(body: response.body).reason
      }
    return "\(response.status) \(code ?? "")".trimmingTrailingSpace
  }

}

extension String {
  var trimmingTrailingSpace: String {
    var text = self
    while text.hasSuffix(" ") { text.removeLast() }
    return text
  }
}
