#if canImport(Glibc)
  import Glibc
#endif

/// Stop signals for daemons and long-running commands: blocked in every thread (call ``block(_:)`` in `main`
/// before starting any thread, so each one inherits the mask), then received synchronously by one thread with
/// `sigwait`, never by an asynchronous handler.
public enum StopSignals {
  /// SIGTERM (systemd, `kill`) and SIGINT (Ctrl-C).
  public static let all: [Int32] = [SIGTERM, SIGINT]

  /// The set of `signals`, for `sigwait`, `sigtimedwait`, masks and `posix_spawn` attributes.
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

  /// Waits in the calling thread until one of `signals` (blocked beforehand) arrives; returns it.
  public static func wait(_ signals: [Int32] = all) -> Int32 {
    var set = set(of: signals)
    while true {
      var received: Int32 = 0
      if sigwait(&set, &received) == 0 { return received }
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
