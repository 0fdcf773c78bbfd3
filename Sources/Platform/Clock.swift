import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Monotonic milliseconds: timers, deadlines, watchdogs, backoff (never jumps with the wall clock; the origin is
/// arbitrary, so only differences mean anything).
public func monotonicMilliseconds() -> Int64 {
  clockMicroseconds(CLOCK_MONOTONIC) / 1000
}

/// Monotonic microseconds: request timings and other short durations.
public func monotonicMicroseconds() -> Int64 {
  clockMicroseconds(CLOCK_MONOTONIC)
}

/// Wall-clock epoch milliseconds (since 1970-01-01 UTC): stored timestamps, lease times, log lines.
public func epochMilliseconds() -> Int64 {
  clockMicroseconds(CLOCK_REALTIME) / 1000
}

/// Any POSIX clock in microseconds: `CLOCK_MONOTONIC`, `CLOCK_REALTIME`, or CPU time so far of this process
/// (`CLOCK_PROCESS_CPUTIME_ID`) or of the calling thread (`CLOCK_THREAD_CPUTIME_ID`).
public func clockMicroseconds(_ clock: clockid_t) -> Int64 {
  var now = timespec()
  clock_gettime(clock, &now)
  return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
}

/// The clock pure code is given instead of reading one: it returns epoch milliseconds. Production passes
/// ``epochMilliseconds()``; tests pass a closure over a time they move by hand.
public typealias EpochClock = @Sendable () -> Int64

/// The durations' clock of this process, in epoch-like milliseconds: the wall clock read once (at the first use,
/// or raised by ``raiseSteadyClock(toAtLeast:)`` at start), then advanced by the monotonic clock only. A step of
/// the wall clock (NTP correcting it by an hour, an operator's `date -s`) moves ``epochMilliseconds()`` and never
/// this one, so every window measured on it (dedup, the 30 s ACK rule, the send schedule, the push coalescing
/// window) lasts what it says. It stamps nothing shown to people: stamps stay on the wall clock.
///
/// Values of it are stored (dedup expiries, ACK send times, the send schedule, outbox times) and compared by the
/// next process, whose clock starts from the wall clock again: the listener raises its clock at start to the
/// newest such value in the database, so a backward step while it was down cannot make them lie in its future.
public func steadyEpochMilliseconds() -> Int64 {
  monotonicMilliseconds() + steadyOffset.load(ordering: .relaxed)
}

/// Moves this process's ``steadyEpochMilliseconds()`` forward so that it reads at least `floor` now (never back).
public func raiseSteadyClock(toAtLeast floor: Int64) {
  var current = steadyOffset.load(ordering: .relaxed)
  while monotonicMilliseconds() + current < floor {
    let wanted = floor - monotonicMilliseconds()
    let (exchanged, original) = steadyOffset.compareExchange(
      expected: current, desired: wanted, ordering: .relaxed)
    if exchanged { return }
    current = original
  }
}

/// ``steadyEpochMilliseconds()`` minus ``monotonicMilliseconds()``: fixed at the first use.
private let steadyOffset = Atomic<Int64>(epochMilliseconds() - monotonicMilliseconds())

/// A durations' clock as a value, for pure code and tests: epoch-like ms from an anchor (a wall-clock reading,
/// raised to a floor) advanced by monotonic readings only (what ``steadyEpochMilliseconds()`` is per process).
public struct SteadyClock: Sendable, Equatable {
  /// The clock's reading minus the monotonic reading.
  public let offsetMs: Int64

  /// Anchored at a wall-clock reading `epochMs` taken at monotonic `monotonicMs`, raised to `floorMs` if later.
  public init(epochMs: Int64, monotonicMs: Int64, floorMs: Int64 = .min) {
    offsetMs = max(epochMs, floorMs) - monotonicMs
  }

  /// The reading at monotonic `monotonicMs`.
  public func now(monotonicMs: Int64) -> Int64 { monotonicMs + offsetMs }
}
