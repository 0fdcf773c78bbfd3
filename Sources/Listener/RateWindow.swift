/// A rate over a sliding window from samples of a growing total: lines per second over the last minute.
struct RateWindow: Sendable {
  /// The window (ms).
  let windowMs: Int64
  private var samples: [(time: Int64, total: Int)] = []

  init(windowMs: Int64 = 60_000) { self.windowMs = windowMs }

  /// Records `total` at `now` (ms, non-decreasing) and returns the rate per second since the oldest sample still
  /// inside the window (0 with a single sample).
  mutating func record(now: Int64, total: Int) -> Double {
    samples.append((now, total))
    // Keep one sample at or before the window's start so the rate spans the whole window.
    while samples.count > 2 && samples[1].time <= now - windowMs { samples.removeFirst() }
    guard let first = samples.first, now > first.time else { return 0 }
    return Double(max(0, total - first.total)) * 1000 / Double(now - first.time)
  }
}
