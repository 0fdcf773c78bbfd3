/// Notices a provider whose every push fails the same way, not because of its token: pure.
///
/// One push refused for a reason of its own (a malformed field in one message) is given up and
/// logged. But when every push to a provider is refused the same way (the same status and
/// provider code, `400 INVALID_ARGUMENT`, `400 BadTopic`, `401` even with a fresh access token)
/// for `windowMs`, with at least `minimumFailures` pushes to at least two devices and not one push
/// accepted or one token answered for in between, the configuration is wrong: the provider is
/// stopped loudly (`/health` degraded, with the reason) instead of refusing forever in silence.
///
/// Transient answers (no answer, 429, 5xx) neither count nor clear: an outage is not a
/// misconfiguration, and pushes during one are retried anyway.
struct FailureWatch {
  /// How long the same failure must last, ms.
  let windowMs: Int64
  /// Failures needed within that time.
  let minimumFailures: Int
  /// Distinct devices they must have gone to (one device's own problem is not the provider's).
  static let minimumDevices = 2

  private var kind: String?
  private var since: Int64 = 0
  private var failures = 0
  private var devices: Set<String> = []

  init(windowMs: Int64, minimumFailures: Int = 5) {
    self.windowMs = windowMs
    self.minimumFailures = minimumFailures
  }

  /// A push was accepted, or the provider answered about its token: the provider works.
  mutating func succeeded() {
    kind = nil
    failures = 0
    devices = []
  }

  /// A push to `token` failed as `kind` (`RetryPolicy.failureKind`) at `now`, `detail` being the
  /// provider's reason. Returns the reason to stop the provider once the same failure lasted long
  /// enough, else nil.
  mutating func failed(kind: String, token: String, detail: String, now: Int64) -> String? {
    if kind != self.kind {
      self.kind = kind
      since = now
      failures = 0
      devices = []
    }
    failures += 1
    if devices.count < Self.minimumDevices { devices.insert(token) }
    guard failures >= minimumFailures, devices.count >= Self.minimumDevices, now - since >= windowMs else {
      return nil
    }
    let minutes = max(1, (now - since) / 60_000)
    return
      "every push failed with \(kind) for \(minutes) min (\(failures) pushes, none accepted): \(detail); "
      + "fix the configuration and restart"
  }
}
