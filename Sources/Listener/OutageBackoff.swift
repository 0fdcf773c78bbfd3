/// Retry delays while APRS-IS is unreachable (an outage): short while the outage is young, so the listener is back
/// on air within a few seconds of the server's return, longer only once the outage has lasted.
///
/// An outage begins when an established session ends (the server closed it, the watchdog found it silent, a read
/// or write failed) or when the first connect after the start fails; it ends at the next logresp. Each retry's
/// step doubles from ``firstMs`` (1, 2, 4 s …) but never exceeds the cap of the outage's age: ``freshCapMs`` (4 s)
/// during its first ``freshMs`` (3 min), ``youngCapMs`` (30 s) until ``youngMs`` (10 min), then ``maximumMs``
/// (5 min). A delay is the step spread by ``jitter`` and is never above the cap: the retries during the first
/// 3 minutes come at most 4 s apart (so the listener is on air within about 5 s of the server's return), then at
/// most 30 s apart until 10 minutes. Every outage starts over at ``firstMs``, however recently the last one ended.
///
/// Servers that refuse the login use the long ``Backoff`` instead (see ``ConnectionStateMachine``).
struct OutageBackoff: Sendable, Equatable {
  /// The first step (ms).
  var firstMs: Int64
  /// The cap during the outage's first ``freshMs`` (ms).
  var freshCapMs: Int64
  /// How long an outage is fresh (ms).
  var freshMs: Int64
  /// The cap from ``freshMs`` to ``youngMs`` (ms).
  var youngCapMs: Int64
  /// How long an outage is young (ms); after it, the cap is ``maximumMs``.
  var youngMs: Int64
  /// The cap of an old outage (ms).
  var maximumMs: Int64
  /// The relative spread of a delay around its step (as ``Backoff/jitter``).
  var jitter: Double
  /// When the current outage began (monotonic ms); nil: none.
  private(set) var since: Int64?
  /// The step the next delay is drawn around.
  private(set) var nextStepMs: Int64

  /// Delays with the defaults above, each bound lowered to `maximumMs` when it is smaller (tests configure
  /// `[aprsis] maxReconnectDelay` of a second or less) and the first step to `firstAtMostMs`.
  init(
    firstAtMostMs: Int64 = 1_000, maximumMs: Int64 = 300_000, freshCapMs: Int64 = 4_000,
    freshMs: Int64 = 180_000, youngCapMs: Int64 = 30_000, youngMs: Int64 = 600_000, jitter: Double = 0.2
  ) {
    self.maximumMs = max(1, maximumMs)
    self.firstMs = max(1, min(1_000, firstAtMostMs, self.maximumMs))
    self.freshCapMs = max(self.firstMs, min(freshCapMs, self.maximumMs))
    self.youngCapMs = max(self.freshCapMs, min(youngCapMs, self.maximumMs))
    self.freshMs = max(0, freshMs)
    self.youngMs = max(self.freshMs, youngMs)
    self.jitter = min(max(jitter, 0), 0.9)
    self.nextStepMs = self.firstMs
  }

  /// Whether an outage is under way.
  var isActive: Bool { since != nil }

  /// Starts an outage at `now` unless one is under way.
  mutating func begin(now: Int64) {
    guard since == nil else { return }
    since = now
    nextStepMs = firstMs
  }

  /// The outage is over (a login): the next one starts at ``firstMs``.
  mutating func end() {
    since = nil
    nextStepMs = firstMs
  }

  /// The largest delay at `now`, by the age of the outage.
  func cap(now: Int64) -> Int64 {
    let age = now - (since ?? now)
    if age < freshMs { return freshCapMs }
    if age < youngMs { return youngCapMs }
    return maximumMs
  }

  /// The next delay at `now` for a random `unit` in `[0, 1)` (an outage begins if none is under way); the step then
  /// doubles.
  mutating func nextDelay(now: Int64, unit: Double) -> Int64 {
    begin(now: now)
    let cap = cap(now: now)
    let step = min(nextStepMs, cap)
    let unit = min(max(unit, 0), 1)
    let factor = 1 - jitter + 2 * jitter * unit
    let delay = min(cap, max(1, Int64((Double(step) * factor).rounded())))
    nextStepMs = min(maximumMs, step * 2)
    return delay
  }
}
