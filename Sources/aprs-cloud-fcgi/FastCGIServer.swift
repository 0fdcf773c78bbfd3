import CFastCGI
import Logging

#if canImport(Glibc)
  import Glibc
#endif

/// The FastCGI loop: worker threads, each with its own `FCGX_Request`, database connection and
/// `APIHandler`, sharing one listening socket; a signal thread for a graceful stop.
///
/// Shutdown. SIGTERM, SIGINT and SIGUSR1 are blocked in every thread; the signal thread
/// `sigwait`s for them, writes one byte to a pipe that is never read, and calls
/// `FCGX_ShutdownPending()` (Debian's libfcgi 2.4.2 only checks that flag in its accept loop,
/// not in reads and writes, so requests in flight are unaffected). Workers wait for work in `poll(2)` on the listening socket and that pipe, so an
/// idle worker wakes at once and exits; a busy one finishes its request, comes back to `poll`,
/// sees the pipe and exits. Idle workers take turns on an `AcceptLock`, so one connection wakes one
/// worker, not all of them. The listening socket is non-blocking, so a worker that loses the
/// race for a connection gets EAGAIN instead of sleeping in `accept`. Nothing is done to the
/// listening socket itself: `shutdown(2)` would also wake `accept`, but an inherited socket is
/// shared with systemd (socket activation keeps it open across restarts), and shutting it down
/// would break the next start. Connections still queued when the workers exit are refused
/// when the process closes the socket (nginx answers those with its 502 page).
final class FastCGIServer {
  let socket: ListenSocket
  let logger: Logger
  private var workers: [Worker] = []
  private var wakePipe: [Int32] = [-1, -1]

  init(socket: ListenSocket, logger: Logger) {
    self.socket = socket
    self.logger = logger
  }

  /// The signals that stop the server gracefully. SIGUSR1 is Apache mod_fastcgi's graceful stop;
  /// left unblocked, libfcgi's own SIGUSR1 handler would stop accepting without waking anyone.
  static let stopSignals: [Int32] = [SIGTERM, SIGINT, SIGUSR1]

  /// Blocks the stop signals in the calling thread (and every thread it creates afterwards).
  static func blockStopSignals() {
    var set = sigset_t()
    sigemptyset(&set)
    for signal in stopSignals { sigaddset(&set, signal) }
    pthread_sigmask(SIG_BLOCK, &set, nil)
  }

  /// Starts `handlers.count` workers and the signal thread, and returns when every worker has
  /// stopped: true after a stop signal, false if the workers stopped on their own (a broken
  /// listening socket). Call `blockStopSignals()` before starting any thread.
  func run(handlers: [Responder]) throws(StartupError) -> Bool {
    guard pipe(&wakePipe) == 0 else {
      throw StartupError("cannot create the shutdown pipe: \(String(cString: strerror(errno)))")
    }
    for fd in wakePipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    let signals = SignalWatcher(wakeFd: wakePipe[1], logger: logger)
    guard startThread(signals, { $0.run() }) != nil else {
      throw StartupError("cannot start the signal thread")
    }
    var threads: [pthread_t] = []
    let acceptLock = AcceptLock()
    for (index, responder) in handlers.enumerated() {
      let worker = Worker(
        index: index, listenFd: socket.fd, wakeFd: wakePipe[0], responder: responder, logger: logger,
        acceptLock: acceptLock)
      guard let thread = startThread(worker, { $0.run() }) else {
        throw StartupError("cannot start worker thread \(index): \(String(cString: strerror(errno)))")
      }
      workers.append(worker)
      threads.append(thread)
    }
    for thread in threads { pthread_join(thread, nil) }
    var probe = pollfd(fd: wakePipe[0], events: Int16(POLLIN), revents: 0)
    return poll(&probe, 1, 0) == 1
  }
}

/// Waits for a stop signal and wakes the workers.
final class SignalWatcher: @unchecked Sendable {
  let wakeFd: Int32
  let logger: Logger

  init(wakeFd: Int32, logger: Logger) {
    self.wakeFd = wakeFd
    self.logger = logger
  }

  func run() {
    var set = sigset_t()
    sigemptyset(&set)
    for signal in FastCGIServer.stopSignals { sigaddset(&set, signal) }
    var stopping = false
    while true {
      var received: Int32 = 0
      guard sigwait(&set, &received) == 0 else { continue }
      let name =
        received == SIGTERM
        ? "TERM" : received == SIGINT ? "INT" : received == SIGUSR1 ? "USR1" : "\(received)"
      if stopping {
        logger.info("already stopping; waiting for requests in flight", ["signal": name])
        continue
      }
      stopping = true
      logger.info("stopping: finishing requests in flight", ["signal": name])
      var byte: UInt8 = 1
      _ = write(wakeFd, &byte, 1)
      // After the pipe, so a worker whose accept fails because of it finds the pipe set.
      FCGX_ShutdownPending()
    }
  }
}

/// One worker thread: waits for a connection or the shutdown pipe, accepts, serves, repeats.
final class Worker: @unchecked Sendable {
  let index: Int
  let listenFd: Int32
  let wakeFd: Int32
  let responder: Responder
  let logger: Logger
  let acceptLock: AcceptLock

  init(
    index: Int, listenFd: Int32, wakeFd: Int32, responder: Responder, logger: Logger, acceptLock: AcceptLock
  ) {
    self.acceptLock = acceptLock
    self.index = index
    self.listenFd = listenFd
    self.wakeFd = wakeFd
    self.responder = responder
    self.logger = logger
  }

  func run() {
    let request = UnsafeMutablePointer<FCGX_Request>.allocate(capacity: 1)
    defer { request.deallocate() }
    guard FCGX_InitRequest(request, listenFd, 0) == 0 else {
      logger.error("cannot initialise a FastCGI request", ["worker": String(index)])
      return
    }
    defer { FCGX_Free(request, 1) }
    while true {
      // Leader/followers: one idle worker at a time waits on the socket, so a connection wakes one
      // thread instead of every idle one. A stopping leader leaves the pipe readable, so each
      // follower in turn sees it and stops too.
      acceptLock.lock()
      let outcome = waitAndAccept(request)
      acceptLock.unlock()
      switch outcome {
      case .stop: return
      case .retry: continue
      case .accepted:
        var channel = FastCGIChannel(request: request)
        responder.serve(&channel)
        FCGX_Finish_r(request)
      }
    }
  }

  private enum AcceptOutcome {
    case accepted, retry, stop
  }

  /// Waits for a connection or the shutdown pipe and accepts.
  private func waitAndAccept(_ request: UnsafeMutablePointer<FCGX_Request>) -> AcceptOutcome {
    var fds = [
      pollfd(fd: wakeFd, events: Int16(POLLIN), revents: 0),
      pollfd(fd: listenFd, events: Int16(POLLIN), revents: 0),
    ]
    let ready = poll(&fds, 2, -1)
    if ready < 0 {
      if errno == EINTR { return .retry }
      logger.error("poll failed", ["worker": String(index), "error": String(cString: strerror(errno))])
      return .stop
    }
    if fds[0].revents != 0 { return .stop }
    if fds[1].revents & Int16(POLLNVAL | POLLERR) != 0 {
      logger.error("the listening socket failed; worker stops", ["worker": String(index)])
      return .stop
    }
    let accepted = FCGX_Accept_r(request)
    guard accepted < 0 else { return .accepted }
    if isStopping() { return .stop }
    let error = -accepted
    switch error {
    case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO, ECONNRESET:
      return .retry  // another process took it, or the client left
    case EMFILE, ENFILE, ENOBUFS, ENOMEM:
      logger.error("cannot accept; retrying", ["worker": String(index), "error": describe(error)])
      var pause = timespec(tv_sec: 0, tv_nsec: 50_000_000)
      nanosleep(&pause, nil)
      return .retry
    default:
      logger.error("accept failed; worker stops", ["worker": String(index), "error": describe(error)])
      return .stop
    }
  }

  private func isStopping() -> Bool {
    var probe = pollfd(fd: wakeFd, events: Int16(POLLIN), revents: 0)
    return poll(&probe, 1, 0) == 1
  }

  private func describe(_ error: Int32) -> String {
    error > 0 ? String(cString: strerror(error)) : "libfcgi error \(error)"
  }
}

/// Starts a pthread running `body(object)`; nil if the thread could not be created.
func startThread<Object: AnyObject & Sendable>(_ object: Object, _ body: @escaping @Sendable (Object) -> Void)
  -> pthread_t?
{
  let box = Unmanaged.passRetained(Box { body(object) }).toOpaque()
  var thread = pthread_t()
  let result = pthread_create(
    &thread, nil,
    { raw in
      let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
      box.run()
      return nil
    }, box)
  guard result == 0 else {
    Unmanaged<Box>.fromOpaque(box).release()
    return nil
  }
  return thread
}

/// What a new thread runs (handed over as its start argument).
private final class Box: @unchecked Sendable {
  let run: () -> Void
  init(_ run: @escaping () -> Void) { self.run = run }
}

/// The mutex idle workers take turns on before waiting for a connection (see `Worker.run`).
final class AcceptLock: @unchecked Sendable {
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

  init() { pthread_mutex_init(mutex, nil) }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  func lock() { pthread_mutex_lock(mutex) }
  func unlock() { pthread_mutex_unlock(mutex) }
}
