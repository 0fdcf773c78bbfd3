import CFastCGI
import Logging
import Platform
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// What the worker threads and the keeper thread share (see `FastCGIServer` for the whole flow):
/// the workers' epoll set, the ready queue (connections with work for a worker), the keeper's
/// inbox, and the counts a stop waits on. Connections only ever pass through the two queues.
final class ServerCore: @unchecked Sendable {
  /// Work for a worker.
  enum Job {
    /// A request that came in on a connection the keeper read.
    case request(Connection, Request)
    /// A parked request back from the keeper.
    case resume(Connection, ParkedRequest)
  }

  /// What a worker hands the keeper.
  enum KeeperCommand {
    /// Read the rest of the request (or a kept connection's next one).
    case adopt(Connection)
    /// Hold the parked request (its ticket is on the connection).
    case park(Connection)
    /// Read what the web server still sends until it closes, then close.
    case drain(Connection)
    /// The server is stopping.
    case stop
  }

  /// The tags of the descriptors in the epoll sets that are not connections (connection ids start
  /// at 16).
  enum Tag {
    static let listen: UInt64 = 1
    static let ready: UInt64 = 2
    static let exit: UInt64 = 3
    static let inbox: UInt64 = 4
    static let help: UInt64 = 5
    static let wake: UInt64 = 6
  }

  /// How long an answer may take to write (the web server stopped reading), in ms.
  static let writeTimeoutMs: Int64 = 30_000
  /// How long a connection may stay silent while its request is incomplete, in ms.
  static let readTimeoutMs: Int64 = 30_000
  /// How long a kept connection may wait for its next request, in ms.
  static let idleTimeoutMs: Int64 = 60_000
  /// Draining ends after this much silence, or this much time in all (ms).
  static let drainSilenceMs: Int64 = 2_000
  static let drainLimitMs: Int64 = 10_000

  let listenFd: Int32
  let bodyLimit: Int
  let logger: Logger
  let parking: ParkingOptions
  /// Whether handlers may park (a resumer for every worker).
  var parkingEnabled = false

  /// The first `acceptors` workers wait here: the listening socket, `readyEvent`, `exitEvent`.
  let workerEpoll: Int32
  /// The other workers wait here: `readyEvent`, `exitEvent` and `helpEvent` (and look at the
  /// listening socket every `Worker.fallbackAcceptMs` while no accepting worker waits for it).
  let servingEpoll: Int32
  /// Accepting workers waiting in `epoll_wait` right now. When the last of them goes to work
  /// (a count of 0), `helpEvent` wakes a serving worker, which then looks at the listening socket
  /// now and then until an accepting worker waits again; while one waits, the serving workers
  /// sleep without a timeout (an idle server wakes no thread).
  let idleAcceptors = Atomic<Int>(0)
  /// Made readable when the last idle accepting worker went to work (`askForHelp()`); a serving
  /// worker drains it.
  let helpEvent: Int32
  /// How many workers watch the listening socket (set by `run`): as many as there are CPUs (at
  /// least 2, at most every worker). More threads taking connections than CPUs to run them only
  /// makes them preempt each other inside SQLite's locks: measured on 2 CPUs, 4 accepting workers
  /// cost the responder about 7 µs more CPU per request than 2.
  var acceptors = 1
  /// A semaphore eventfd: one count per job in `ready`.
  let readyEvent: Int32
  /// Made readable (never drained) when the server is done: every thread leaves.
  let exitEvent: Int32
  /// Counts commands in `inbox`; the keeper drains it.
  let inboxEvent: Int32

  private let lock = Lock()
  private var ready: [Job?] = []
  private var readyHead = 0
  private var inbox: [KeeperCommand] = []

  /// Connections accepted and not closed yet.
  let live = Atomic<Int>(0)
  /// Requests parked, or reserved by a handler that is about to park.
  let parkedCount = Atomic<Int>(0)
  let stopping = Atomic<Bool>(false)
  private let finished = Atomic<Bool>(false)
  /// The workers stopped on their own (a broken listening socket), not because of `stop()`.
  let failed = Atomic<Bool>(false)
  private let nextID = Atomic<UInt64>(16)

  init(listenFd: Int32, bodyLimit: Int, logger: Logger, parking: ParkingOptions) throws(StartupError) {
    self.listenFd = listenFd
    self.bodyLimit = bodyLimit
    self.logger = logger
    self.parking = parking
    let flags = Int32(EFD_NONBLOCK | EFD_CLOEXEC)
    workerEpoll = epoll_create1(Int32(EPOLL_CLOEXEC))
    servingEpoll = epoll_create1(Int32(EPOLL_CLOEXEC))
    readyEvent = eventfd(0, flags | Int32(EFD_SEMAPHORE))
    exitEvent = eventfd(0, flags)
    inboxEvent = eventfd(0, flags)
    helpEvent = eventfd(0, flags)
    guard workerEpoll >= 0, servingEpoll >= 0, readyEvent >= 0, exitEvent >= 0, inboxEvent >= 0,
      helpEvent >= 0
    else {
      let reason = String(cString: strerror(errno))
      for fd in [workerEpoll, servingEpoll, readyEvent, exitEvent, inboxEvent, helpEvent] where fd >= 0 {
        Glibc.close(fd)
      }
      throw StartupError("cannot create the server's event descriptors: \(reason)")
    }
    guard Self.add(listenFd, tag: Tag.listen, to: workerEpoll),
      Self.add(readyEvent, tag: Tag.ready, to: workerEpoll),
      Self.add(exitEvent, tag: Tag.exit, to: workerEpoll),
      Self.add(readyEvent, tag: Tag.ready, to: servingEpoll),
      Self.add(exitEvent, tag: Tag.exit, to: servingEpoll),
      Self.add(helpEvent, tag: Tag.help, to: servingEpoll)
    else {
      let reason = String(cString: strerror(errno))
      for fd in [workerEpoll, servingEpoll, readyEvent, exitEvent, inboxEvent, helpEvent] { Glibc.close(fd) }
      throw StartupError("cannot watch the listening socket: \(reason)")
    }
  }

  deinit {
    for fd in [workerEpoll, servingEpoll, readyEvent, exitEvent, inboxEvent, helpEvent] { Glibc.close(fd) }
  }

  /// Wakes a serving worker to look at the listening socket: every accepting worker is busy.
  func askForHelp() {
    var one: UInt64 = 1
    _ = write(helpEvent, &one, 8)
  }

  /// Empties `helpEvent` (a serving worker that woke on it).
  func takeHelpRequest() {
    var count: UInt64 = 0
    _ = read(helpEvent, &count, 8)
  }

  /// Adds `fd` to `epoll`, level-triggered, for reading (and the peer's end of stream).
  @discardableResult
  static func add(_ fd: Int32, tag: UInt64, to epoll: Int32) -> Bool {
    var event = epoll_event()
    event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
    event.data.u64 = tag
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0
  }

  func newConnectionID() -> UInt64 { nextID.add(1, ordering: .relaxed).oldValue }

  // MARK: Queues

  /// Hands `job` to whichever worker is free.
  func enqueue(_ job: Job) {
    lock.withLock {
      ready.append(job)
    }
    signal(readyEvent)
  }

  /// The next job, if this worker wins the count it was woken for.
  func takeJob() -> Job? {
    var count: UInt64 = 0
    guard Glibc.read(readyEvent, &count, 8) == 8 else { return nil }
    return lock.withLock {
      guard readyHead < ready.count else { return nil }
      let job = ready[readyHead]
      ready[readyHead] = nil
      readyHead += 1
      if readyHead == ready.count {
        ready.removeAll(keepingCapacity: ready.capacity <= 4096)
        readyHead = 0
      } else if readyHead >= 1024 && readyHead * 2 >= ready.count {
        ready.removeFirst(readyHead)
        readyHead = 0
      }
      return job
    }
  }

  /// Hands `command` to the keeper thread.
  func toKeeper(_ command: KeeperCommand) {
    lock.withLock { inbox.append(command) }
    signal(inboxEvent)
  }

  /// Every command sent to the keeper since the last call (keeper thread only).
  func takeInbox() -> [KeeperCommand] {
    var count: UInt64 = 0
    _ = Glibc.read(inboxEvent, &count, 8)
    return lock.withLock {
      defer { inbox = [] }
      return inbox
    }
  }

  private func signal(_ fd: Int32) {
    var one: UInt64 = 1
    _ = Glibc.write(fd, &one, 8)
  }

  // MARK: Parking

  /// Reserves room for one parked request: false when parking is off, the server is stopping or
  /// `maxParked` requests are held.
  func reserveParking() -> Bool {
    guard parkingEnabled, !stopping.load(ordering: .sequentiallyConsistent) else { return false }
    let reserved = parkedCount.add(1, ordering: .sequentiallyConsistent).newValue
    guard reserved <= parking.maxParked else {
      parkedCount.subtract(1, ordering: .sequentiallyConsistent)
      return false
    }
    return true
  }

  /// Gives back the room of a request that left the parked set.
  func releaseParking() {
    parkedCount.subtract(1, ordering: .sequentiallyConsistent)
  }

  // MARK: Connections

  /// Counts a new connection; false (and the connection closed) when the server is stopping.
  func admit(_ fd: Int32) -> Bool {
    live.add(1, ordering: .sequentiallyConsistent)
    guard !stopping.load(ordering: .sequentiallyConsistent) else {
      closeDescriptor(fd)
      return false
    }
    return true
  }

  /// Closes the connection's socket; the last one closed after a stop ends the server.
  func close(_ connection: Connection) {
    closeDescriptor(connection.fd)
  }

  private func closeDescriptor(_ fd: Int32) {
    _ = Glibc.close(fd)
    let left = live.subtract(1, ordering: .sequentiallyConsistent).newValue
    if left == 0 && stopping.load(ordering: .sequentiallyConsistent) { finish() }
  }

  // MARK: Stopping

  /// The first call logs, stops accepting, tells the keeper and returns true; later ones log that
  /// a stop is under way and return false.
  @discardableResult
  func beginStop(fields: [(String, String)]) -> Bool {
    guard
      stopping.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged
    else {
      logger.log(.info, "already stopping; waiting for requests in flight", fields: fields)
      return false
    }
    logger.log(.info, "stopping: finishing requests in flight", fields: fields)
    // No new connections from here on: those still in the backlog are refused when the socket's
    // owner closes it.
    var unused = epoll_event()
    epoll_ctl(workerEpoll, EPOLL_CTL_DEL, listenFd, &unused)
    toKeeper(.stop)
    if live.load(ordering: .sequentiallyConsistent) == 0 { finish() }
    return true
  }

  /// The workers can no longer accept (a broken listening socket): stop, and report it.
  func fail(_ message: String, fields: [(String, String)]) {
    logger.log(.error, message, fields: fields)
    failed.store(true, ordering: .sequentiallyConsistent)
    beginStop(fields: [])
  }

  /// Every connection is closed after a stop: every thread leaves.
  private func finish() {
    guard
      finished.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged
    else { return }
    signal(exitEvent)
  }

  // MARK: Reading a request

  /// What the bytes read so far amount to, after logging a request that started and answering
  /// management records.
  enum Progress {
    case needMore
    case ready(Request)
    /// The web server aborted the request that was handed over.
    case aborted
    /// The connection ended (or broke the protocol): close it.
    case closed(reason: String)
  }

  /// Follows the parser from `event` to the next thing the owner must act on.
  func progress(_ connection: Connection, _ event: RequestParser.Event) -> Progress {
    var event = event
    while true {
      let replies = connection.parser.takeReplies()
      if !replies.isEmpty { connection.writeAll(replies, timeoutMs: 1000) }
      switch event {
      case .needMore:
        return .needMore
      case .started:
        connection.begin(connection.parser.takeParameters())
        if logger.isEnabled(.debug) {
          logger.log(
            .debug, "request started", fields: [("method", connection.method), ("path", connection.path)])
        }
        event = connection.inputEnded ? connection.parser.endOfInput() : connection.parser.next()
      case .ready(let body):
        return .ready(connection.request(body: body))
      case .aborted:
        return .aborted
      case .invalid(let reason):
        return .closed(reason: reason)
      case .ended:
        return .closed(reason: "the connection ended")
      }
    }
  }
}
