/// What the three forward channels (ntfy, webhook, email) share besides their slots (``SlotPool``): at most
/// `[forward] perMinute` forwards started per minute, every station and kind together, and the services that
/// asked this whole server to wait (ntfy limits per client address, docs/api.md "Forwarding (email, ntfy,
/// webhooks)").
final class ForwardBudget {
  /// `[forward] perMinute`.
  let perMinute: Int
  /// Start times within the last minute (epoch ms).
  private var starts: [Int64] = []
  /// Services (by ``ForwardChannel/origin(of:)``) that asked this whole server to wait, and until when (epoch ms).
  var serviceHolds: [String: Int64] = [:]

  init(perMinute: Int) {
    self.perMinute = perMinute
  }

  /// Forgets the starts older than a minute before `now`.
  func age(now: Int64) {
    starts.removeAll { $0 <= now - 60_000 }
  }

  /// When the rate lets the next forward start, nil when it may start now.
  func rateWait() -> Int64? {
    starts.count >= perMinute ? (starts.first ?? 0) + 60_000 : nil
  }

  /// A forward started at `now`.
  func started(now: Int64) {
    starts.append(now)
  }
}
