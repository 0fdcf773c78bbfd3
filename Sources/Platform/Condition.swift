#if canImport(Glibc)
  import Glibc
#endif

/// A mutex with a condition variable on the monotonic clock: the blocking primitive threads wait on for a queue,
/// a stop request or a wake-up (wall-clock jumps never shorten or stretch a wait).
///
/// ```swift
/// condition.locked {
///   while !ready && monotonicMilliseconds() < deadline { condition.wait(until: deadline) }
/// }
/// ```
public final class Condition: @unchecked Sendable {
  private let lock = Lock()
  private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

  /// A new condition with its own, unlocked mutex.
  public init() {
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(condition, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  deinit {
    pthread_cond_destroy(condition)
    condition.deallocate()
  }

  /// Runs `body` holding the mutex, and returns its result.
  public func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    try lock.withLock(body)
  }

  /// Waits (the mutex held by the caller, inside ``locked(_:)``) until signalled or the monotonic time
  /// `deadline` (ms, as ``monotonicMilliseconds()``) passed. Returns false on timeout. Spurious wake-ups happen:
  /// re-check the condition.
  @discardableResult
  public func wait(until deadline: Int64) -> Bool {
    var time = timespec()
    time.tv_sec = Int(deadline / 1000)
    time.tv_nsec = Int(deadline % 1000) * 1_000_000
    return pthread_cond_timedwait(condition, lock.mutex, &time) == 0
  }

  /// Wakes every waiter (call holding the mutex or not).
  public func broadcast() { pthread_cond_broadcast(condition) }
}
