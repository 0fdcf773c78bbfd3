/// The listener's one transmit budget for sent messages (`[send] transmitBudgetPerMinute`): at most ``perMinute``
/// lines (first copies and retries together, over every station) in any ``windowMs``, so that no use of
/// `/v1/send` can get the operator's APRS-IS login blocked for flooding (docs/design.md "Who may do what"). Pure: the
/// caller passes the time (monotonic ms), and spends a line for each copy it writes. Past the budget, copies wait
/// (``SendScheduler/plan(_:now:canTransmit:allowance:waiting:)``); nothing is dropped.
///
/// A sliding window: the times of the lines written in the last ``windowMs`` are kept, oldest first, and a line
/// fits when fewer than ``perMinute`` of them are younger than ``windowMs``.
struct TransmitBudget: Sendable, Equatable {
  /// The window (ms): a minute.
  static let minuteMs: Int64 = 60_000

  /// Lines allowed in any window (at least 1).
  let perMinute: Int
  /// The window, ms.
  let windowMs: Int64
  /// When the lines of the current window were written, oldest first (at most ``perMinute``).
  private(set) var spentAt: [Int64] = []

  init(perMinute: Int, windowMs: Int64 = TransmitBudget.minuteMs) {
    self.perMinute = max(1, perMinute)
    self.windowMs = max(1, windowMs)
  }

  /// Forgets the lines older than the window at `now`.
  private mutating func expire(now: Int64) {
    let cut = spentAt.firstIndex { now - $0 < windowMs } ?? spentAt.count
    if cut > 0 { spentAt.removeFirst(cut) }
  }

  /// How many lines may go out at `now`.
  mutating func available(now: Int64) -> Int {
    expire(now: now)
    return perMinute - spentAt.count
  }

  /// Whether no line may go out at `now`.
  mutating func isFull(now: Int64) -> Bool { available(now: now) <= 0 }

  /// Records `count` lines written at `now` (the caller wrote at most ``available(now:)``).
  mutating func spend(_ count: Int, now: Int64) {
    guard count > 0 else { return }
    expire(now: now)
    spentAt += repeatElement(now, count: count)
    if spentAt.count > perMinute { spentAt.removeFirst(spentAt.count - perMinute) }
  }

  /// How long from `now` until a line fits again (ms): 0 when one fits now.
  mutating func waitMs(now: Int64) -> Int64 {
    guard isFull(now: now), let oldest = spentAt.first else { return 0 }
    return max(1, oldest + windowMs - now)
  }
}
