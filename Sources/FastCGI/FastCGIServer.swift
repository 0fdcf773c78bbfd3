import CFastCGI
import Logging
import Platform
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The FastCGI loop: worker threads, each with its own `FCGX_Request` and handler, sharing one
/// listening socket; a stop that lets requests in flight finish.
///
/// ## How a request flows through the threads today
///
/// One thread per worker, nothing else (no event loop, no task pool); the handler runs on the
/// worker that accepted the connection, and that worker does nothing else until the answer is
/// written:
///
/// 1. An idle worker takes the accept lock (idle workers take turns: one connection wakes one
///    thread, not all of them) and `poll(2)`s the listening socket and the stop pipe.
/// 2. When the socket is readable, it calls `FCGX_Accept_r`, which accepts the connection (the
///    listening socket is non-blocking: losing the race to another worker or process is EAGAIN)
///    and then, still on this thread and still holding the lock, reads FCGI_BEGIN_REQUEST and
///    every FCGI_PARAMS record (blocking; on a unix socket libfcgi first waits up to 2 s for the
///    first byte and drops a connection that sends none). A malformed record makes libfcgi close
///    the connection and go back to accept (EAGAIN here: the worker returns to `poll`). While a
///    client dawdles over its params, this worker and, through the lock, every idle one wait
///    for it: a client that sends half a header and nothing more stops all accepting until it
///    goes away. The socket is meant for nginx only (mode 0660, or loopback), which sends its
///    records as soon as it connects.
/// 3. The worker releases the lock and runs `Exchange.serve`: it reads the body from FCGI_STDIN
///    (blocking; after the `CONTENT_LENGTH` check against `bodyLimit`), calls the worker's
///    handler, which answers through `ResponseWriter` (buffered in libfcgi's stdout stream).
/// 4. `FCGX_Finish_r` flushes stdout, sends FCGI_END_REQUEST, shuts the connection down for
///    writing and, before closing it, reads and throws away whatever the client still sends
///    (until it closes, or 2 s of silence). nginx runs with `fastcgi_keep_conn off`; a kept
///    connection would only be read again by this worker's next `FCGX_Accept_r`, after a new
///    connection wakes it. Back to 1.
///
/// So a request occupies one worker thread from the moment its connection is accepted until its
/// answer is written, including everything the handler waits for (the database's write lock).
/// `workers` requests at a time, then new connections queue in the listen backlog (1024). A
/// long-poll request parked in the handler would hold its worker for as long as it is parked;
/// the long-poll work has to take parked requests off the workers (answer them later from
/// another thread) instead of blocking in the handler.
///
/// ## Stopping
///
/// `stop()` (or a stop signal, once `stopOnSignals()` runs the signal thread) writes one byte to
/// a pipe that is never read; a signal also calls `FCGX_ShutdownPending()` (Debian's libfcgi
/// 2.4.2 only checks that flag in its accept loop, not in reads and writes, so requests in
/// flight are unaffected; the flag is process-wide, so `stop()` leaves it alone). Workers wait
/// for work in `poll(2)` on the listening socket and that pipe, so an idle worker wakes at once
/// and exits; a busy one finishes its request, comes back to `poll`, sees the pipe and exits. A stopping leader leaves the pipe
/// readable, so each follower waiting for the accept lock in turn sees it and stops too.
/// Nothing is done to the listening socket itself: `shutdown(2)` would also wake `accept`, but an
/// inherited socket is shared with systemd (socket activation keeps it open across restarts),
/// and shutting it down would break the next start. Connections still queued when the workers
/// exit are refused when the owner closes the socket (nginx answers those with its 502 page).
public final class FastCGIServer: @unchecked Sendable {
  /// The socket the workers accept on.
  public let socket: ListenSocket
  /// The largest request body accepted, in bytes; a `CONTENT_LENGTH` over it is refused before
  /// the body is read (`RequestBodyError.tooLarge`).
  public let bodyLimit: Int
  let logger: Logger
  /// Made readable (never drained) by a stop: idle workers poll it beside the listening socket.
  private let wakePipe: WakePipe
  private let stopping = Atomic<Bool>(false)

  /// Prepares a server on `socket` (it stays the caller's to close after `run`).
  /// Throws when the stop pipe cannot be created.
  public init(socket: ListenSocket, bodyLimit: Int, logger: Logger) throws(StartupError) {
    guard let wakePipe = WakePipe() else {
      throw StartupError("cannot create the shutdown pipe: \(String(cString: strerror(errno)))")
    }
    self.socket = socket
    self.bodyLimit = bodyLimit
    self.logger = logger
    self.wakePipe = wakePipe
  }

  /// The signals that stop the server gracefully. SIGUSR1 is Apache mod_fastcgi's graceful stop;
  /// left unblocked, libfcgi's own SIGUSR1 handler would stop accepting without waking anyone.
  /// Observed: when the process crashes, the Swift runtime's crash reporter sends SIGUSR1 too
  /// (every 2 s); the signal thread takes those for stop signals, logs "stopping", and the
  /// report and the exit come only about 30 s later.
  public static let stopSignals: [Int32] = [SIGTERM, SIGINT, SIGUSR1]

  /// Blocks the stop signals in the calling thread (and every thread it creates afterwards).
  /// Call it before any thread exists, so only the signal thread receives them.
  public static func blockStopSignals() { StopSignals.block(stopSignals) }

  /// Starts the thread that waits for a stop signal (`stopSignals`) and calls `stop`. It runs
  /// until the process exits. Call `blockStopSignals()` before starting any thread.
  public func stopOnSignals() throws(StartupError) {
    do {
      try StopSignals.handle(Self.stopSignals) { [self] received in
        let name =
          received == SIGTERM
          ? "TERM" : received == SIGINT ? "INT" : received == SIGUSR1 ? "USR1" : "\(received)"
        if beginStop(fields: [("signal", name)]) {
          // After the pipe, so a worker whose accept fails because of it finds the pipe set. The
          // flag is process-wide: once set, every failed accept reports -9999 instead of its errno.
          FCGX_ShutdownPending()
        }
      }
    } catch {
      throw StartupError("cannot start the signal thread: \(error)")
    }
  }

  /// Stops the server gracefully, from any thread: idle workers exit at once, busy ones after
  /// their request; `run` returns when all have. Later calls only log. Unlike a stop signal it
  /// leaves libfcgi's process-wide shutdown flag alone, so other servers in the process go on.
  public func stop() { beginStop(fields: []) }

  /// The first call logs, wakes the workers and returns true; later ones log that a stop is
  /// under way and return false.
  @discardableResult
  func beginStop(fields: [(String, String)]) -> Bool {
    guard stopping.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    else {
      logger.log(.info, "already stopping; waiting for requests in flight", fields: fields)
      return false
    }
    logger.log(.info, "stopping: finishing requests in flight", fields: fields)
    wakePipe.wake()
    return true
  }

  /// Starts one worker per handler (`handlers[i]` only ever runs on worker `i`, one request at a
  /// time, so it may hold a non-thread-safe database connection) and returns when every worker
  /// has stopped: true after `stop()` or a stop signal, false if the workers stopped on their own
  /// (a broken listening socket).
  public func run(handlers: [Handler]) throws(StartupError) -> Bool {
    let initialised = FCGX_Init()
    guard initialised == 0 else { throw StartupError("cannot initialise libfcgi: error \(initialised)") }
    var finished: [Latch] = []
    let acceptLock = Lock()
    for (index, handler) in handlers.enumerated() {
      let worker = Worker(
        index: index, listenFd: socket.fd, wakeFd: wakePipe.readDescriptor, bodyLimit: bodyLimit,
        handler: handler, logger: logger, acceptLock: acceptLock)
      do {
        finished.append(try startThread(name: "fcgi-\(index)") { worker.run() })
      } catch {
        throw StartupError("cannot start worker thread \(index): \(error)")
      }
    }
    for latch in finished { latch.wait() }
    var probe = pollfd(fd: wakePipe.readDescriptor, events: Int16(POLLIN), revents: 0)
    return poll(&probe, 1, 0) == 1
  }
}

/// One worker thread: waits for a connection or the shutdown pipe, accepts, serves, repeats.
final class Worker: @unchecked Sendable {
  let index: Int
  let listenFd: Int32
  let wakeFd: Int32
  let bodyLimit: Int
  let handler: Handler
  let logger: Logger
  let acceptLock: Lock

  init(
    index: Int, listenFd: Int32, wakeFd: Int32, bodyLimit: Int, handler: @escaping Handler, logger: Logger,
    acceptLock: Lock
  ) {
    self.acceptLock = acceptLock
    self.index = index
    self.listenFd = listenFd
    self.wakeFd = wakeFd
    self.bodyLimit = bodyLimit
    self.handler = handler
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
        Exchange.serve(&channel, bodyLimit: bodyLimit, logger: logger, handler: handler)
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
