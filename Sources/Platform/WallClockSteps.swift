/// Finds steps of the wall clock by comparing it with the monotonic clock between two readings: when the wall
/// clock moved more than ``toleranceMs`` further (or less far) than the monotonic one, it was stepped (NTP
/// correcting it, `date -s`, a resumed VM) by the difference. Slewing (NTP's gradual correction, at most 0.5 ms a
/// second) stays far below the tolerance.
///
/// What keeps wall-clock times in the database (the send schedule, the outbox) uses it to move the times of what
/// is in flight by the step, so that the durations they stand for stay what they were: a backward step does not
/// hold a send's next copy for the size of the step, a forward one does not expire it (nor drop a push as too
/// old) early.
public struct WallClockSteps: Sendable, Equatable {
  /// The smallest difference taken for a step (ms).
  public var toleranceMs: Int64
  private var last: (wall: Int64, monotonic: Int64)?

  public init(toleranceMs: Int64 = 2_000) {
    self.toleranceMs = toleranceMs
  }

  /// The step since the previous reading (ms, positive forward), 0 when none (and at the first reading).
  public mutating func observe(wallMs: Int64, monotonicMs: Int64) -> Int64 {
    defer { last = (wallMs, monotonicMs) }
    guard let last else { return 0 }
    let step = (wallMs - last.wall) - (monotonicMs - last.monotonic)
    return abs(step) > toleranceMs ? step : 0
  }

  public static func == (lhs: WallClockSteps, rhs: WallClockSteps) -> Bool {
    lhs.toleranceMs == rhs.toleranceMs && lhs.last?.wall == rhs.last?.wall
      && lhs.last?.monotonic == rhs.last?.monotonic
  }
}
