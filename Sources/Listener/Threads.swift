#if canImport(Glibc)
  import Glibc
#endif

/// Monotonic milliseconds (timers: watchdog, backoff, intervals).
public func monotonicMilliseconds() -> Int64 {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

/// Wall-clock epoch milliseconds (stored timestamps, lease times, published times).
public func epochMilliseconds() -> Int64 {
  var now = timespec()
  clock_gettime(CLOCK_REALTIME, &now)
  return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

/// A pthread mutex with a condition variable on the monotonic clock: the one blocking primitive the listener's
/// threads wait on (queue, stop, wake-ups).
final class Condition: @unchecked Sendable {
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

  init() {
    pthread_mutex_init(mutex, nil)
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(condition, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  deinit {
    pthread_cond_destroy(condition)
    pthread_mutex_destroy(mutex)
    condition.deallocate()
    mutex.deallocate()
  }

  /// Runs `body` holding the mutex.
  func locked<T>(_ body: () throws -> T) rethrows -> T {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body()
  }

  /// Waits (the mutex held by the caller, inside ``locked(_:)``) until signalled or the monotonic time `deadline`
  /// (ms) passed. Returns false on timeout. Spurious wake-ups happen: re-check the condition.
  @discardableResult
  func wait(until deadline: Int64) -> Bool {
    var time = timespec()
    time.tv_sec = Int(deadline / 1000)
    time.tv_nsec = Int(deadline % 1000) * 1_000_000
    return pthread_cond_timedwait(condition, mutex, &time) == 0
  }

  /// Wakes every waiter (call holding the mutex or not).
  func broadcast() { pthread_cond_broadcast(condition) }
}

/// A flag that is set once, and can be waited for with a deadline (a thread's end, the stop request).
final class Latch: @unchecked Sendable {
  private let condition = Condition()
  private var isSet = false

  /// Sets it and wakes the waiters.
  func set() {
    condition.locked {
      isSet = true
      condition.broadcast()
    }
  }

  /// Whether it is set.
  var value: Bool { condition.locked { isSet } }

  /// Waits until it is set or `timeoutMs` passed; returns whether it is set.
  @discardableResult
  func wait(timeoutMs: Int64) -> Bool {
    let deadline = monotonicMilliseconds() + timeoutMs
    return condition.locked {
      while !isSet {
        if monotonicMilliseconds() >= deadline { return false }
        condition.wait(until: deadline)
      }
      return true
    }
  }
}

/// Starts a detached thread running `body`; the returned latch is set when `body` returns. Nil when the thread
/// could not be created.
func startThread(name: String, _ body: @escaping @Sendable () -> Void) -> Latch? {
  let done = Latch()
  let box = Unmanaged.passRetained(
    ThreadBody {
      body()
      done.set()
    }
  ).toOpaque()
  var attributes = pthread_attr_t()
  pthread_attr_init(&attributes)
  pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
  defer { pthread_attr_destroy(&attributes) }
  var thread = pthread_t()
  let result = pthread_create(
    &thread, &attributes,
    { raw in
      let body = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
      body.run()
      return nil
    }, box)
  guard result == 0 else {
    Unmanaged<ThreadBody>.fromOpaque(box).release()
    return nil
  }
  return done
}

/// What a new thread runs (handed over as its start argument).
private final class ThreadBody: @unchecked Sendable {
  let run: @Sendable () -> Void
  init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

/// A pipe that wakes a thread sleeping in `poll(2)`: any thread calls ``wake()``, the sleeper polls
/// ``readDescriptor`` and calls ``drain()``.
final class WakePipe: @unchecked Sendable {
  let readDescriptor: Int32
  let writeDescriptor: Int32

  init?() {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return nil }
    for fd in fds {
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }
    readDescriptor = fds[0]
    writeDescriptor = fds[1]
  }

  deinit {
    close(readDescriptor)
    close(writeDescriptor)
  }

  /// Makes the read end readable (never blocks: a full pipe is already readable).
  func wake() {
    var byte: UInt8 = 1
    _ = write(writeDescriptor, &byte, 1)
  }

  /// Empties the pipe.
  func drain() {
    var buffer = [UInt8](repeating: 0, count: 64)
    while buffer.withUnsafeMutableBytes({ read(readDescriptor, $0.baseAddress, $0.count) }) > 0 {}
  }
}

/// Stop signals for daemons: blocked in every thread (call before starting any), received by one thread.
public enum StopSignals {
  /// SIGTERM and SIGINT.
  public static let all: [Int32] = [SIGTERM, SIGINT]

  /// Blocks the signals in the calling thread and every thread it starts afterwards.
  public static func block() {
    var set = sigset_t()
    sigemptyset(&set)
    for signal in all { sigaddset(&set, signal) }
    pthread_sigmask(SIG_BLOCK, &set, nil)
  }

  /// Starts a thread that waits for the signals (`sigwait`) and calls `handler` with each; false when the thread
  /// could not be started. Call ``block()`` first.
  public static func handle(_ handler: @escaping @Sendable (Int32) -> Void) -> Bool {
    startThread(name: "signals") {
      var set = sigset_t()
      sigemptyset(&set)
      for signal in all { sigaddset(&set, signal) }
      while true {
        var received: Int32 = 0
        guard sigwait(&set, &received) == 0 else { continue }
        handler(received)
      }
    } != nil
  }
}
