import Config

/// Notices a Web Push service that refuses every push the same way: pure.
///
/// Web Push talks to many independent push services, so one refusing is not this server's configuration fault
/// and the provider is never stopped for it (`FailureWatch` is for FCM and APNs). But when every push to one
/// service (by host: `web.push.apple.com`, `fcm.googleapis.com`, …) is refused with the same status and reason
/// (`403 BadJwtToken`) at least ``minimumFailures`` times in a row, with not one accepted in between, the
/// operator should know: Apple's service does exactly that for a VAPID contact on a local name. The watch
/// then yields a warning (shown in `/health` as degraded, still 200) naming the service, the refusal and the
/// VAPID contact, until a push to that service is accepted again.
///
/// `/health` is public and a push service is any host a subscriber names, so the warning holds nothing the
/// service chose: the host (a name `WebPushEndpoint` accepted), the status, and a reason only when it is one of
/// ``documentedReasons``; at most ``maximumNamedServices`` services are named. The answer itself is logged (the
/// engine's `push refused` line, `bodyForLog`).
struct WebPushServiceWatch {
  /// Refusals in a row that make a warning.
  static let minimumFailures = 3
  /// Services the warning names; the others are counted.
  static let maximumNamedServices = 3
  /// The reasons a refusal is named by in the warning: those Apple documents for APNs, which its Web Push service
  /// answers with (`{"reason":"BadJwtToken"}`). Any other reason is left out (the status alone).
  static let documentedReasons: Set<String> = [
    "BadCollapseId", "BadDeviceToken", "BadExpirationDate", "BadMessageId", "BadPriority", "BadTopic",
    "DeviceTokenNotForTopic", "DuplicateHeaders", "IdleTimeout", "InvalidPushType", "MissingDeviceToken",
    "MissingTopic", "PayloadEmpty", "TopicDisallowed", "BadCertificate", "BadCertificateEnvironment",
    "ExpiredProviderToken", "Forbidden", "InvalidProviderToken", "MissingProviderToken", "BadPath",
    "MethodNotAllowed", "ExpiredToken", "Unregistered", "PayloadTooLarge", "TooManyProviderTokenUpdates",
    "TooManyRequests", "InternalServerError", "ServiceUnavailable", "Shutdown", "BadJwtToken",
  ]

  /// The VAPID contact (`[messaging.webpush] subject`) the warning names.
  let subject: String

  private struct Streak {
    var kind: String
    var count: Int
  }

  private var streaks: [String: Streak] = [:]

  init(subject: String) { self.subject = subject }

  /// A push to `host` was accepted (or its subscription was answered for, 404/410): the service works.
  mutating func succeeded(host: String) {
    streaks[host] = nil
  }

  /// A push to `host` was refused as `kind` (`RetryPolicy.failureKind`: `403 BadJwtToken`), kept as
  /// ``fixedKind(_:)`` makes it.
  mutating func refused(host: String, kind given: String) {
    let kind = Self.fixedKind(given)
    if var streak = streaks[host], streak.kind == kind {
      streak.count += 1
      streaks[host] = streak
    } else {
      streaks[host] = Streak(kind: kind, count: 1)
    }
  }

  /// `kind` as the warning may name it: the status (three digits), then the reason only when it is one of
  /// ``documentedReasons``; `refused` for anything else.
  static func fixedKind(_ kind: String) -> String {
    let parts = kind.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
    guard let status = parts.first, status.utf8.count == 3,
      status.utf8.allSatisfy({ (0x30...0x39).contains($0) })
    else { return "refused" }
    guard parts.count == 2, documentedReasons.contains(String(parts[1])) else { return String(status) }
    return "\(status) \(parts[1])"
  }

  /// The warning for every service that refused every push the same way lately, nil when none did.
  var warning: String? {
    let refusing = streaks.filter { $0.value.count >= Self.minimumFailures }.sorted { $0.key < $1.key }
    guard !refusing.isEmpty else { return nil }
    let services = refusing.prefix(Self.maximumNamedServices).map {
      "\($0.key) refuses every push with \($0.value.kind) (\($0.value.count) in a row)"
    }
    var text = services.joined(separator: "; ")
    if refusing.count > Self.maximumNamedServices {
      text += "; and \(refusing.count - Self.maximumNamedServices) more push services refuse every push"
    }
    text += "; check the VAPID contact [messaging.webpush] subject = \(subject)"
    if refusing.contains(where: { $0.value.kind.hasSuffix("BadJwtToken") }),
      let host = PushConfig.WebPush.localContactHost(subject)
    {
      text +=
        " (\(host) is a local name, which Apple's push service refuses: use a real mailto: or https:// contact)"
    }
    return text
  }
}
