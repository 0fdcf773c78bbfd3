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
