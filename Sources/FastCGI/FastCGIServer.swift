import CFastCGI
import Logging
import Platform
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The FastCGI server: a few worker threads and one keeper thread over one listening socket,
/// speaking FastCGI records itself (non-blocking sockets, epoll); requests that must wait are
/// parked without a thread; a stop answers what is parked and lets requests in flight finish.
///
/// ## Why not libfcgi
///
/// libfcgi's `FCGX_Accept_r`/`FCGX_Finish_r` tie a request to a blocking thread from accept to
/// answer, and its 8 KB stream buffers (in and out, per request) would cost over 150 MB for 10,000
/// parked requests. It also aborted the whole process on a params record whose name and value
/// lengths summed past `INT_MAX`, and a client that sent half a header held every idle worker
/// behind its accept lock. So the records are read here (`RequestParser`, `ParamsDecoder`,
/// `Record`); libfcgi only still opens the listening socket (`ListenSocket`).
///
/// ## How a request flows through the threads
///
/// - **Workers** (`workers` of them, each with its own handler, so a handler may hold a
///   non-thread-safe database connection) wait in `epoll_wait`. As many as there are CPUs (at
///   least 2) share one set with the listening socket, the ready queue's eventfd and the exit
///   eventfd (all level-triggered; one event per wake); the others wait on the ready queue and the
///   exit only, and look at the listening socket every 50 ms in case the accepting ones are all
///   stuck in handlers (more threads taking connections than CPUs only preempt each other inside
///   SQLite's locks). A worker that wins a connection (`accept4`, non-blocking) reads at once:
///   nginx writes the whole request as soon as it connects, so usually the first `read` holds it
///   all (if not, the worker waits 2 ms once). It runs the handler, writes the answer with
///   FCGI_END_REQUEST in one `send`, closes the connection and, while connections are waiting,
///   takes the next one without sleeping; accept to close on one thread, no hand-off (this is the
///   fast path, the one the throughput benchmark measures).
/// - **The keeper** (one thread) owns every connection no worker is busy with, in an epoll set of
///   its own: a request that has not fully arrived when the worker's read finds nothing more
///   (`adopt`: read on as bytes come, 30 s of silence closes it), a kept connection between two
///   requests (`FCGI_KEEP_CONN`; 60 s idle), a parked request (`park`), and an answered
///   connection whose web server still sends something (`drain`: read and thrown away until it
///   closes, 2 s of silence or 10 s in all, so closing never resets a connection whose answer is
///   still in flight). A request that becomes complete there goes to the **ready queue** (a
///   locked FIFO with a semaphore eventfd in the workers' set): the next free worker serves it.
///   Connections move only through the keeper's inbox and the ready queue; each has one owner at
///   a time and nothing in it is locked.
/// - **Parking**: a handler that has nothing to answer yet calls `ResponseWriter.park` with a
///   ticket (a key, the version it waits to see passed, a deadline) and returns. The worker hands
///   the connection to the keeper and takes its next job. The keeper holds it in `ParkedSet` (by
///   key, deadlines in a heap) and in its epoll set, where the web server closing the connection
///   (its client went away) or aborting the request frees it at once. While anything is parked
///   the keeper asks the `WakeSource` every `pollIntervalMs` which keys changed; a parked request
///   whose key passed its version, or whose deadline came, goes back through the ready queue to
///   the worker's `Resumer`, which answers it (or parks it again). A parked request costs its
///   socket and a few hundred bytes; no thread, no buffer. Within `maxParked` in all, at most
///   `maxParkedPerKey` are held per key (one more and the key's oldest goes back, `displaced`) and
///   `maxParkedPerGroup` per ticket group (one more goes straight back, `groupFull`): the keeper
///   decides as it takes the request into its parked set (`ParkedSet.admit`).
///
/// ## Stopping
///
/// `stop()` (or a stop signal, once `stopOnSignals()` runs the signal thread) takes the
/// listening socket out of the workers' set (connections still in the backlog are refused when
/// the socket's owner closes it after `run` returns) and tells the keeper, which sends every
/// parked request back to a worker with reason `stopping` (they are answered at once, and parking
/// is refused from then on) and closes idle kept and draining connections. Requests in flight,
/// in a handler or still arriving, finish and are answered. When the last connection is closed
/// an exit eventfd wakes every thread and `run` returns. Nothing is done to the listening socket
/// itself: an inherited one is shared with systemd (socket activation keeps it open across
/// restarts).
public final class FastCGIServer: @unchecked Sendable {
  /// The socket the workers accept on.
  public let socket: ListenSocket
  /// The largest request body accepted, in bytes; a `CONTENT_LENGTH` over it is refused before
  /// the body is read (`RequestBodyError.tooLarge`).
  public let bodyLimit: Int
  let logger: Logger
  private let core: ServerCore
  private let started = Atomic<Bool>(false)

  /// Prepares a server on `socket` (it stays the caller's to close after `run`); `parking` says
  /// how many requests may be parked and what wakes them. Throws when the event descriptors
  /// cannot be created.
  public init(
    socket: ListenSocket, bodyLimit: Int, logger: Logger, parking: ParkingOptions = ParkingOptions()
  ) throws(StartupError) {
    self.socket = socket
    self.bodyLimit = bodyLimit
    self.logger = logger
    core = try ServerCore(listenFd: socket.fd, bodyLimit: bodyLimit, logger: logger, parking: parking)
  }

  /// Requests parked right now (with those a handler is about to park).
  public var parkedCount: Int { core.parkedCount.load(ordering: .relaxed) }

  /// The signals that stop the server gracefully. SIGUSR1 is Apache mod_fastcgi's graceful stop.
  /// The Swift runtime's crash handler sends SIGUSR1 too, to pause threads while it reports a
  /// crash; `StopSignals` receives stop signals in a way that lets its pause handler run (a
  /// `sigwait` took those for stop signals, and a crashed responder died only ~30 s later).
  public static let stopSignals: [Int32] = [SIGTERM, SIGINT, SIGUSR1]

  /// Blocks the stop signals in the calling thread (and every thread it creates afterwards).
  /// Call it before any thread exists, so only the signal thread receives them.
  public static func blockStopSignals() { StopSignals.block(stopSignals) }

  /// Starts the thread that waits for a stop signal (`stopSignals`) and calls `stop`. It runs
  /// until the process exits. Call `blockStopSignals()` before starting any thread.
  public func stopOnSignals() throws(StartupError) {
    do {
      try StopSignals.handle(Self.stopSignals) { [core] received in
        let name =
          received == SIGTERM
          ? "TERM" : received == SIGINT ? "INT" : received == SIGUSR1 ? "USR1" : "\(received)"
        core.beginStop(fields: [("signal", name)])
      }
    } catch {
      throw StartupError("cannot start the signal thread: \(error)")
    }
  }

  /// Stops the server gracefully, from any thread: parked requests are answered at once, requests
  /// in flight finish; `run` returns when every connection is closed. Later calls only log.
  public func stop() { core.beginStop(fields: []) }

  /// Starts one worker per handler (`handlers[i]` only ever runs on worker `i`, one request at a
  /// time, so it may hold a non-thread-safe database connection) and returns when the server has
  /// stopped: true after `stop()` or a stop signal, false if it stopped on its own (a broken
  /// listening socket). Handlers cannot park (`ParkOutcome.unsupported`).
  public func run(handlers: [Handler]) throws(StartupError) -> Bool {
    try start(handlers.map { ($0, nil) })
  }

  /// Like `run(handlers:)`, with a resumer per worker: handlers may park requests.
  public func run(workers: [WorkerHandlers]) throws(StartupError) -> Bool {
    try start(workers.map { ($0.handle, $0.resume) })
  }

  private func start(_ workers: [(Handler, Resumer?)]) throws(StartupError) -> Bool {
    guard !workers.isEmpty else { throw StartupError("a FastCGI server needs at least one worker") }
    guard started.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged
    else { throw StartupError("the FastCGI server runs only once") }
    core.parkingEnabled = workers.allSatisfy { $0.1 != nil }
    core.acceptors = min(workers.count, max(2, Self.cpuCount()))
    let keeper = try Keeper(core: core)
    var finished: [Latch] = []
    do {
      finished.append(try startThread(name: "fcgi-keeper") { keeper.run() })
      for (index, (handle, resume)) in workers.enumerated() {
        let worker = Worker(index: index, core: core, handle: handle, resume: resume)
        finished.append(try startThread(name: "fcgi-\(index)") { worker.run() })
      }
    } catch {
      // Threads already running leave with the stop.
      core.fail("cannot start the server's threads", fields: [("error", error.description)])
      for latch in finished { latch.wait() }
      throw StartupError("cannot start a worker thread: \(error)")
    }
    for latch in finished { latch.wait() }
    return !core.failed.load(ordering: .sequentiallyConsistent)
  }

  /// The CPUs online, at least 1.
  static func cpuCount() -> Int {
    max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
  }
}
