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
  /// The token is dead: delete it. For APNs 410 only when it was not refreshed at or after
  /// `refreshedBefore` (the time APNs learned it was dead, epoch ms).
  case deleteToken(reason: String, refreshedBefore: Int64?)
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

  // MARK: FCM

  /// The parts of an FCM error body a decision depends on.
  public struct FCMError: Sendable, Equatable {
    /// `error.status` (`INVALID_ARGUMENT`, `UNAUTHENTICATED`, …).
    public var status: String?
    /// The `errorCode` of the `google.firebase.fcm.v1.FcmError` detail, nil when there is none.
    public var errorCode: String?
    /// Fields named by `google.rpc.BadRequest` violations.
    public var violatedFields: [String] = []
    /// The descriptions of those violations.
    public var violationDescriptions: [String] = []
    /// `error.message`.
    public var message: String?

    /// Whether the error is about the registration token: a violation on `message.token`, or a violation or
    /// message that names the registration token (FCM often answers a dead or malformed token with
    /// `INVALID_ARGUMENT` and only the message "The registration token is not a valid FCM registration token").
    public var namesTheRegistrationToken: Bool {
      violatedFields.contains("message.token")
        || (violationDescriptions + [message ?? ""]).contains { Self.mentionsRegistrationToken($0) }
    }

    static func mentionsRegistrationToken(_ text: String) -> Bool {
      text.lowercased().contains("registration token")
    }

    /// Parses an FCM error body; nil when it is not one (an HTML page from a proxy, say).
    public init?(body: [UInt8]) {
      guard case .object(let root)? = try? JSONParser.parse(body), case .object(let error)? = root["error"]
      else {
        return nil
      }
      if case .string(let status)? = error["status"] { self.status = status }
      if case .string(let message)? = error["message"] { self.message = message }
      if case .array(let details)? = error["details"] {
        for case .object(let detail) in details {
          guard case .string(let type)? = detail["@type"] else { continue }
          if type.hasSuffix("google.firebase.fcm.v1.FcmError"), case .string(let code)? = detail["errorCode"]
          {
            errorCode = code
          }
          if case .array(let violations)? = detail["fieldViolations"] {
            for case .object(let violation) in violations {
              if case .string(let field)? = violation["field"] { violatedFields.append(field) }
              if case .string(let text)? = violation["description"] { violationDescriptions.append(text) }
            }
          }
        }
      }
    }
  }

  /// What an answer means before any provider's own error codes: no answer at all (retry), or
  /// success; nil for a provider error.
  private static func noAnswerOrSuccess(
    _ response: ProviderResponse, now: Int64, attempts: Int, jitter: Double
  ) -> PushDecision? {
    if let failure = response.transportError {
      let at = transportRetry(response, now: now, attempts: attempts, jitter: jitter)
      return .retry(at: at, reason: "no answer: \(failure)")
    }
    return response.status == 200 ? .delivered : nil
  }

  /// The decision for an FCM `messages:send` answer. `reauthenticated`: this request already
  /// went out again with a fresh access token after a 401. `throttles`: 429s the device got in a row before
  /// this answer; `expiresAt`: the end of the push's lifetime, epoch ms (see ``later(of:orWait:now:expiresAt:)``).
  /// 429 and 5xx (503 `UNAVAILABLE` included) retry at the later of `Retry-After` and the backoff.
  public static func fcm(
    _ response: ProviderResponse, now: Int64, attempts: Int, reauthenticated: Bool, jitter: Double,
    throttles: Int = 0, expiresAt: Int64? = nil
  ) -> PushDecision {
    if let decision = noAnswerOrSuccess(response, now: now, attempts: attempts, jitter: jitter) {
      return decision
    }
    let backoff = now + backoffMs(attempts: attempts, jitter: jitter)
    let error = FCMError(body: response.body)
    let code = error?.errorCode
    let label = "\(response.status) \(code ?? error?.status ?? "")".trimmingTrailingSpace
    switch (response.status, code) {
    case (_, "UNREGISTERED"):
      return .deleteToken(reason: label, refreshedBefore: nil)
    case (_, "SENDER_ID_MISMATCH"):
      return .deleteToken(reason: label, refreshedBefore: nil)
    case (400, _):
      if let error, error.namesTheRegistrationToken {
        return .deleteToken(
          reason: label + " (the registration token" + (error.message.map { ": " + $0 } ?? "") + ")",
          refreshedBefore: nil)
      }
      // Anything else wrong with the request: that push is given up (the engine logs the body).
      return .giveUp(reason: label + (error?.message.map { ": " + $0 } ?? ""))
    case (401, nil):
      return reauthenticated
        ? .retry(at: backoff, reason: "401 again after a fresh access token")
        : .reauthenticate(reason: "401 (access token refused)")
    case (403, nil):
      // PERMISSION_DENIED without an FcmError: the service account may not send for this project.
      return .stopProvider(reason: label + (error?.message.map { ": " + $0 } ?? ""))
    case (429, _):
      let at = throttledRetry(
        response, now: now, attempts: attempts, throttles: throttles, expiresAt: expiresAt, jitter: jitter)
      return .retry(at: at, reason: label)
    case (500...599, _):
      let at = serverErrorRetry(response, now: now, attempts: attempts, expiresAt: expiresAt, jitter: jitter)
      return .retry(at: at, reason: error == nil ? "\(response.status) \(response.bodySummary)" : label)
    default:
      return .giveUp(reason: label)
    }
  }

  // MARK: APNs

  /// The parts of an APNs error body: `{"reason":…,"timestamp":…}`.
  public struct APNsError: Sendable, Equatable {
    public var reason: String?
    /// For 410: when APNs learned the token was no longer valid, epoch ms (a number out of range clamped to
    /// 0…Int64.max; nil when absent or not a number).
    public var timestamp: Int64?

    public init(body: [UInt8]) {
      guard case .object(let root)? = try? JSONParser.parse(body) else { return }
      if case .string(let reason)? = root["reason"] { self.reason = reason }
      timestamp = ProviderNumber.int64(root["timestamp"], clampedTo: 0...Int64.max)
    }
  }

  /// Whether FCM answered `SENDER_ID_MISMATCH`: the token is of another Firebase project than the sender's
  /// (see `FCMProjectCheck` for why that alone does not delete it).
  public static func isSenderIDMismatch(_ response: ProviderResponse) -> Bool {
    response.transportError == nil && FCMError(body: response.body)?.errorCode == "SENDER_ID_MISMATCH"
  }

  /// Whether APNs refused the device token as `400 BadDeviceToken`: malformed, or a token of the other
  /// environment (a development build's token sent to production, or the reverse).
  public static func isBadDeviceToken(_ response: ProviderResponse) -> Bool {
    response.transportError == nil && response.status == 400
      && APNsError(body: response.body).reason == "BadDeviceToken"
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

  /// The decision for an APNs answer. `reauthenticated`: this request already went out again
  /// with a freshly signed JWT after `ExpiredProviderToken`. `throttles` and `expiresAt` as for ``fcm``: 429
  /// and 5xx retry at the later of `Retry-After` and the backoff.
  public static func apns(
    _ response: ProviderResponse, now: Int64, attempts: Int, reauthenticated: Bool, jitter: Double,
    throttles: Int = 0, expiresAt: Int64? = nil
  ) -> PushDecision {
    if let decision = noAnswerOrSuccess(response, now: now, attempts: attempts, jitter: jitter) {
      return decision
    }
    let backoff = now + backoffMs(attempts: attempts, jitter: jitter)
    let error = APNsError(body: response.body)
    let reason = error.reason ?? ""
    let label = "\(response.status) \(reason)".trimmingTrailingSpace
    switch (response.status, reason) {
    case (410, _):
      // A time in the future is taken as now: APNs cannot have learned it later than it answered.
      return .deleteToken(reason: label, refreshedBefore: error.timestamp.map { min($0, now) })
    case (400, "BadDeviceToken"):
      return .deleteToken(reason: label, refreshedBefore: nil)
    case (403, "ExpiredProviderToken"):
      return reauthenticated
        ? .retry(at: backoff, reason: label + " again after re-signing")
        : .reauthenticate(reason: label)
    case (403, "InvalidProviderToken"), (403, "MissingProviderToken"):
      return .stopProvider(
        reason: label + ": APNs refused the signing key (check keyFile, keyId, teamId and production)")
    case (429, "TooManyProviderTokenUpdates"):
      // Our own token caching went wrong, not this device's rate: the ordinary backoff.
      let at = serverErrorRetry(response, now: now, attempts: attempts, expiresAt: expiresAt, jitter: jitter)
      return .retry(at: at, reason: label)
    case (429, _):
      let at = throttledRetry(
        response, now: now, attempts: attempts, throttles: throttles, expiresAt: expiresAt, jitter: jitter)
      return .retry(at: at, reason: label)
    case (500...599, _):
      let at = serverErrorRetry(response, now: now, attempts: attempts, expiresAt: expiresAt, jitter: jitter)
      return .retry(at: at, reason: label)
    default:
      // PayloadTooLarge, DeviceTokenNotForTopic, BadTopic, BadCollapseId, …: never retried.
      return .giveUp(reason: label)
    }
  }

  // MARK: OAuth

  /// What the token endpoint's answer means.
  public enum TokenDecision: Sendable, Equatable {
    /// A new access token, valid for `expiresIn` seconds (always within `accessTokenLifetime`).
    case token(String, expiresIn: Int64)
    /// Try again at this time (epoch ms).
    case retry(at: Int64, reason: String)
    /// The service account is refused: a configuration fault.
    case stopProvider(reason: String)
  }

  /// The lifetimes an access token is taken to have, s: Google's are 3599 s; a longer claim is cut to an
  /// hour, a shorter one raised to a minute (a 401 refreshes it sooner anyway).
  public static let accessTokenLifetime: ClosedRange<Int64> = 60...3600
  /// The lifetime taken when the answer has none (or not a number), s.
  public static let defaultAccessTokenLifetime: Int64 = 3600

  /// The decision for the OAuth token endpoint's answer to a JWT-bearer grant.
  public static func oauth(_ response: ProviderResponse, now: Int64, attempts: Int, jitter: Double)
    -> TokenDecision
  {
    let backoff = now + backoffMs(attempts: attempts, jitter: jitter)
    if let failure = response.transportError {
      return .retry(at: backoff, reason: "token endpoint: no answer: \(failure)")
    }
    let object: JSONObject? =
      if case .object(let root)? = try? JSONParser.parse(response.body) { root } else { nil }
    if response.status == 200 {
      guard case .string(let token)? = object?["access_token"], !token.isEmpty else {
        return .retry(at: backoff, reason: "token endpoint: 200 without access_token")
      }
      let expiresIn =
        ProviderNumber.int64(object?["expires_in"], clampedTo: accessTokenLifetime)
        ?? defaultAccessTokenLifetime
      return .token(token, expiresIn: expiresIn)
    }
    var detail = ""
    if case .string(let error)? = object?["error"] { detail = error }
    if case .string(let description)? = object?["error_description"] { detail += ": " + description }
    switch response.status {
    case 400, 401, 403:
      let hint = detail.hasPrefix("invalid_grant") ? " (a wrong key, or this machine's clock is off)" : ""
      return .stopProvider(
        reason: "token endpoint refused the service account: \(response.status) \(detail)\(hint)")
    case 429:
      let at = later(of: response, orWait: throttleMs(throttles: attempts), now: now)
      return .retry(at: at, reason: "token endpoint: 429")
    default:
      let at = later(of: response, orWait: backoff - now, now: now)
      return .retry(at: at, reason: "token endpoint: \(response.status) \(detail)".trimmingTrailingSpace)
    }
  }
}

extension String {
  fileprivate var trimmingTrailingSpace: String {
    var text = self
    while text.hasSuffix(" ") { text.removeLast() }
    return text
  }
}
