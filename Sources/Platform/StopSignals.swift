import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Stop signals for daemons and long-running commands: blocked in every thread (call ``block(_:)`` in `main`
/// before starting any thread, so each one inherits the mask), then taken by one thread in ``wait(_:)``.
///
/// That thread does not `sigwait`: it unblocks them only inside `sigsuspend`, where a handler that merely
/// records the signal runs, and acts on it after `sigsuspend` returns. The difference matters when the process
/// crashes: the Swift runtime's crash handler pauses every other thread by sending it SIGUSR1 (SIGUSR2 or
/// SIGPROF where that is blocked) with its own handler swapped in. `sigwait` would take that pause request
/// for a stop signal (the responder stops on SIGUSR1, Apache mod_fastcgi's graceful stop), the thread would
/// never pause, and the crash report and the exit came only after the handler's 15 × 2 s of waiting; with
/// `sigsuspend` its handler runs and the crashed process is gone at once, to be restarted.
public enum StopSignals {
  /// Bit `signal - 1` for each signal that arrived and was not yet returned by ``wait(_:)``.
  private static let arrived = Atomic<UInt64>(0)

  /// The handler ``wait(_:)`` installs: async-signal-safe (one lock-free atomic operation).
  private static let record: @convention(c) (Int32) -> Void = { signal in
    guard signal > 0 && signal <= 64 else { return }
    StopSignals.arrived.bitwiseOr(UInt64(1) << UInt64(signal - 1), ordering: .sequentiallyConsistent)
  }

  /// SIGTERM (systemd, `kill`) and SIGINT (Ctrl-C).
  public static let all: [Int32] = [SIGTERM, SIGINT]

  /// The set of `signals`, for `sigtimedwait`, masks and `posix_spawn` attributes.
  public static func set(of signals: [Int32]) -> sigset_t {
    var set = sigset_t()
    sigemptyset(&set)
    for signal in signals { sigaddset(&set, signal) }
    return set
  }

  /// Blocks `signals` in the calling thread and every thread it starts afterwards.
  public static func block(_ signals: [Int32] = all) {
    var set = set(of: signals)
    pthread_sigmask(SIG_BLOCK, &set, nil)
  }

  /// Waits in the calling thread until one of `signals` (blocked beforehand in every thread) arrives; returns
  /// it. Installs a recording handler for each of `signals` (process-wide, so call it from one thread only);
  /// the signals are unblocked only while this thread sleeps in `sigsuspend`, so no other thread ever runs it.
  public static func wait(_ signals: [Int32] = all) -> Int32 {
    _ = arrived.load(ordering: .sequentiallyConsistent)  // the global exists before a handler can touch it
    var action = sigaction()
    action.__sigaction_handler.sa_handler = record
    sigfillset(&action.sa_mask)
    action.sa_flags = 0
    for signal in signals { sigaction(signal, &action, nil) }
    var sleeping = sigset_t()
    pthread_sigmask(SIG_BLOCK, nil, &sleeping)
    for signal in signals { sigdelset(&sleeping, signal) }
    while true {
      // The signals are blocked here: one that arrives now stays pending until `sigsuspend`.
      let bits = arrived.load(ordering: .sequentiallyConsistent)
      if let signal = signals.first(where: { $0 > 0 && $0 <= 64 && bits & (UInt64(1) << UInt64($0 - 1)) != 0 }
      ) {
        arrived.bitwiseAnd(~(UInt64(1) << UInt64(signal - 1)), ordering: .sequentiallyConsistent)
        return signal
      }
      sigsuspend(&sleeping)
    }
  }

  /// Starts a thread named `signals` that waits for `signals` (blocked beforehand with ``block(_:)``) and calls
  /// `handler` with each one, for as long as the process lives.
  public static func handle(
    _ signals: [Int32] = all, _ handler: @escaping @Sendable (Int32) -> Void
  ) throws(ThreadStartError) {
    _ = try startThread(name: "signals") {
      while true { handler(wait(signals)) }
    }
  }

  /// Ignores SIGPIPE for the whole process, so a peer that goes away costs an `EPIPE` from `write`, not the
  /// process. Call it first thing in `main`.
  public static func ignoreBrokenPipes() {
    signal(SIGPIPE, SIG_IGN)
  }
}
