import JSON
import Platform
import Store

/// APNs' answers (docs/push.md "Error handling").
extension RetryPolicy {
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

  /// Whether APNs refused the device token as `400 BadDeviceToken`: malformed, or a token of the other
  /// environment (a development build's token sent to production, or the reverse).
  public static func isBadDeviceToken(_ response: ProviderResponse) -> Bool {
    response.transportError == nil && response.status == 400
      && APNsError(body: response.body).reason == "BadDeviceToken"
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
      return .gone(reason: label, refreshedBefore: error.timestamp.map { min($0, now) })
    case (400, "BadDeviceToken"):
      return .gone(reason: label, refreshedBefore: nil)
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
}
