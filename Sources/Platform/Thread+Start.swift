#if canImport(Glibc)
  import Glibc
#endif

/// Why a thread could not be started: `pthread_create`'s error code (`EAGAIN`: out of threads or memory).
public struct ThreadStartError: Error, CustomStringConvertible {
  /// The name the thread was to have.
  public let name: String
  /// The error number `pthread_create` returned.
  public let code: Int32

  /// `cannot start thread NAME: REASON`.
  public var description: String { "cannot start thread \(name): \(String(cString: strerror(code)))" }
}

/// Starts a detached thread named `name` (as `ps -L` and debuggers show it; cut to 15 bytes) running `body`.
///
/// Returns a latch that is set when `body` has returned and the closure with everything it captured has been
/// released, so waiting for it is waiting for the thread to be done with its objects. The thread inherits the
/// calling thread's signal mask (see ``StopSignals/block(_:)``).
public func startThread(name: String, _ body: @escaping @Sendable () -> Void) throws(ThreadStartError)
  -> Latch
{
  let done = Latch()
  let start = Unmanaged.passRetained(ThreadStart(name: name, body: body, done: done)).toOpaque()
  var attributes = pthread_attr_t()
  pthread_attr_init(&attributes)
  pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
  defer { pthread_attr_destroy(&attributes) }
  var thread = pthread_t()
  let result = pthread_create(
    &thread, &attributes,
    { raw in
      let done: Latch
      do {
        let start = Unmanaged<ThreadStart>.fromOpaque(raw!).takeRetainedValue()
        done = start.done
        nameCallingThread(start.name)
        start.body()
      }
      done.set()
      return nil
    }, start)
  guard result == 0 else {
    Unmanaged<ThreadStart>.fromOpaque(start).release()
    throw ThreadStartError(name: name, code: result)
  }
  return done
}

/// Names the calling thread, best effort: what `pthread_setname_np` does on Linux (which Swift's Glibc module does
/// not export), a write to `/proc/thread-self/comm`; the kernel keeps the first 15 bytes.
private func nameCallingThread(_ name: String) {
  let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
  guard fd >= 0 else { return }
  let bytes = Array(name.utf8.prefix(15))
  _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
  close(fd)
}

/// What a new thread runs (handed over as its start argument).
private final class ThreadStart: @unchecked Sendable {
  let name: String
  let body: @Sendable () -> Void
  let done: Latch

  init(name: String, body: @escaping @Sendable () -> Void, done: Latch) {
    self.name = name
    self.body = body
    self.done = done
  }
}
