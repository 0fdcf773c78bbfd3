/// Web Push subscriptions that their push service refuses the same way on every push, until they are deleted:
/// pure, the clock injected (each answer's `now`, epoch ms).
///
/// RFC 8030 ends a subscription with 404 or 410, and `RetryPolicy.webPush` deletes it then. Other refusals give
/// one push up and keep the subscription, as they may be passing; but some are about the one subscription and
/// never change, so every push to it would be refused for ever:
/// - 403: the VAPID key is not the one the subscription was made with (its `applicationServerKey`; Mozilla
///   autopush and FCM answer so for a subscription made before this server's key changed, RFC 8292 §4.2);
/// - 400: the push service refuses this subscription's request (autopush: crypto keys missing or invalid for it,
///   an invalid router in the URL);
/// - 405: the endpoint takes no push (not a push resource).
///
/// After ``deleteAfterRefusals`` such refusals in a row with the same status, the first at least
/// ``deleteAfterMs`` before the last, the subscription is deleted as dead (`.gone`, with why). An accepted
/// push or another refusal breaks the row; answers that say nothing about the subscription (429, 5xx, no answer:
/// retried) leave it as it is. A refusal whose reason Apple documents as about the request rather than the
/// subscription (``countsAsRefusal(reason:)``: `403 BadJwtToken` for a VAPID contact it does not take,
/// `400 BadExpirationDate`, …) never counts: it refuses every subscription alike, `WebPushServiceWatch` warns
/// of it, and the fix is the server's.
///
/// Kept in memory: a restart starts every row again, which only delays a deletion.
struct WebPushRefusals {
  /// Refusals in a row, the same way, that delete a subscription.
  static let deleteAfterRefusals = 5
  /// The least time from the first to the last of those refusals, ms (a day: a station's pushes come in bursts,
  /// and a day tells a lasting refusal from a push service's bad hour).
  static let deleteAfterMs: Int64 = 86_400_000
  /// Subscriptions tracked at most; past it the one refused longest ago is forgotten.
  static let maximumTracked = 10_000
  /// The statuses that count, with what they mean for the subscription.
  static let refusals: [Int: String] = [
    400: "the push service refuses this subscription's requests",
    403: "the subscription was made for another VAPID key",
    405: "the endpoint takes no pushes",
  ]
  /// The reasons Apple documents (its Web Push service answers like APNs, a JSON `reason`) that are about the one
  /// subscription; Apple's others are about the request this server made.
  static let subscriptionReasons: Set<String> = [
    "BadDeviceToken", "DeviceTokenNotForTopic", "BadPath", "MethodNotAllowed",
  ]

  /// Whether a refusal with `reason` (its JSON `reason`, nil without one) may be about the subscription: no
  /// reason, one Apple does not document (other push services' own), or one of ``subscriptionReasons``.
  static func countsAsRefusal(reason: String?) -> Bool {
    guard let reason, WebPushServiceWatch.documentedReasons.contains(reason) else { return true }
    return subscriptionReasons.contains(reason)
  }

  private struct Streak {
    var status: Int
    var count: Int
    var firstAt: Int64
    var lastAt: Int64
  }

  private var streaks: [String: Streak] = [:]

  /// Subscriptions with a row of refusals.
  var trackedCount: Int { streaks.count }

  /// The decision for the push to `token` answered with `response` at `now`: `decision` (`RetryPolicy.webPush`'s
  /// for that answer), or `.gone` when this refusal completes a row.
  mutating func decide(token: String, response: ProviderResponse, decision: PushDecision, now: Int64)
    -> PushDecision
  {
    switch decision {
    case .retry, .reauthenticate, .stopProvider:
      return decision
    case .delivered, .gone:
      streaks[token] = nil
      return decision
    case .giveUp:
      break
    }
    guard response.transportError == nil, let meaning = Self.refusals[response.status],
      Self.countsAsRefusal(reason: RetryPolicy.APNsError(body: response.body).reason)
    else {
      streaks[token] = nil
      return decision
    }
    var streak = streaks[token] ?? Streak(status: response.status, count: 0, firstAt: now, lastAt: now)
    if streak.status != response.status {
      streak = Streak(status: response.status, count: 0, firstAt: now, lastAt: now)
    }
    streak.count += 1
    streak.lastAt = max(streak.lastAt, now)
    guard streak.count >= Self.deleteAfterRefusals, streak.lastAt - streak.firstAt >= Self.deleteAfterMs
    else {
      remember(token, streak)
      return decision
    }
    streaks[token] = nil
    let hours = (streak.lastAt - streak.firstAt) / 3_600_000
    return .gone(
      reason: "\(streak.status) refused the same way on \(streak.count) pushes in a row over \(hours) h:"
        + " \(meaning)", refreshedBefore: nil)
  }

  private mutating func remember(_ token: String, _ streak: Streak) {
    if streaks[token] == nil, streaks.count >= Self.maximumTracked,
      let oldest = streaks.min(by: { $0.value.lastAt < $1.value.lastAt })?.key
    {
      streaks[oldest] = nil
    }
    streaks[token] = streak
  }
}
