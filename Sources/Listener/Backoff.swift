/// Reconnect delays: a first step that doubles up to a maximum, each delay spread by a random jitter so that many
/// clients of one restarted server do not return at the same moment. Reset after a stable connection.
struct Backoff: Sendable, Equatable {
  /// The first delay (ms).
  var initialMs: Int64
  /// The largest delay (ms); the jittered delay never exceeds it.
  var maximumMs: Int64
  /// A connection that stayed up this long resets the delay to ``initialMs`` (ms).
  var stableMs: Int64
  /// The relative spread: a step `d` becomes a delay in `[d·(1 − jitter), d·(1 + jitter)]` (capped).
  var jitter: Double
  /// The step the next delay is drawn around.
  private(set) var nextStepMs: Int64

  init(
    initialMs: Int64 = 5_000, maximumMs: Int64 = 300_000, stableMs: Int64 = 600_000, jitter: Double = 0.2
  ) {
    self.initialMs = max(1, initialMs)
    self.maximumMs = max(self.initialMs, maximumMs)
    self.stableMs = stableMs
    self.jitter = min(max(jitter, 0), 0.9)
    self.nextStepMs = self.initialMs
  }

  /// The next delay for a random `unit` in `[0, 1)`; the step then doubles (up to ``maximumMs``).
  mutating func nextDelay(unit: Double) -> Int64 {
    let unit = min(max(unit, 0), 1)
    let factor = 1 - jitter + 2 * jitter * unit
    let delay = min(maximumMs, max(1, Int64((Double(nextStepMs) * factor).rounded())))
    nextStepMs = min(maximumMs, nextStepMs * 2)
    return delay
  }

  /// Back to ``initialMs``.
  mutating func reset() { nextStepMs = initialMs }

  /// The bounds of the delay drawn from a step (tests, documentation).
  func bounds(step: Int64) -> ClosedRange<Int64> {
    let low = Int64((Double(step) * (1 - jitter)).rounded())
    let high = min(maximumMs, Int64((Double(step) * (1 + jitter)).rounded()))
    return min(low, high)...high
  }
}
