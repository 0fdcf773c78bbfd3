/// The browsers' own Web Push services, which every station's subscriptions of those browsers share: their
/// requests are trusted by ``DeliverySlots`` (the reserved share, the normal timeout, no group cap), so no flood
/// of endpoints elsewhere delays a push to them. From the endpoints the browsers hand out (`PushSubscription.endpoint`):
/// Chrome and Edge's FCM, Firefox's Mozilla push service, Safari's Apple push service, and Windows' WNS.
enum KnownPushServices {
  /// Host names, and the parent domains whose every sub-domain is the service (`.notify.windows.com`).
  static let hosts: Set<String> = [
    "fcm.googleapis.com", "updates.push.services.mozilla.com", "push.services.mozilla.com",
    "web.push.apple.com",
  ]
  static let domains = [".notify.windows.com", ".push.apple.com"]

  /// Whether `host` (lower case, no port) is one of them.
  static func contains(_ host: String) -> Bool {
    let host = host.lowercased()
    return hosts.contains(host) || domains.contains { host.hasSuffix($0) }
  }
}
