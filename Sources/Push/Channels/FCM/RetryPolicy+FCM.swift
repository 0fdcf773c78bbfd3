import JSON
import Platform
import Store

/// FCM's and its token endpoint's answers (docs/push.md "Error handling").
extension RetryPolicy {
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
      return .gone(reason: label, refreshedBefore: nil)
    case (_, "SENDER_ID_MISMATCH"):
      return .gone(reason: label, refreshedBefore: nil)
    case (400, _):
      if let error, error.namesTheRegistrationToken {
        return .gone(
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

  /// Whether FCM answered `SENDER_ID_MISMATCH`: the token is of another Firebase project than the sender's
  /// (see `FCMProjectCheck` for why that alone does not delete it).
  public static func isSenderIDMismatch(_ response: ProviderResponse) -> Bool {
    response.transportError == nil && FCMError(body: response.body)?.errorCode == "SENDER_ID_MISMATCH"
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
