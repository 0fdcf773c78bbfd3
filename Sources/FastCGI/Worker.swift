import CFastCGI
import Logging
import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// One worker thread: waits on the workers' epoll set for a new connection or a job, and does
/// everything a request needs on this thread (read, handler, answer, close) unless it has to wait:
/// a request that has not fully arrived goes to the keeper, and so does a parked one.
final class Worker: @unchecked Sendable {
  let index: Int
  let core: ServerCore
  let handle: Handler
  let resume: Resumer?
  private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
  /// How often a worker that does not watch the listening socket looks whether a connection is
  /// waiting there anyway while every accepting worker is busy (`ServerCore.idleAcceptors` is 0),
  /// in ms. While an accepting worker waits, the others sleep until a job, a stop or a help request.
  static let fallbackAcceptMs: Int32 = 50
  /// Connections a worker takes one after the other before it looks at its epoll set again.
  static let acceptRun = 16
  /// How long a worker waits for the first bytes of a connection it accepted before handing it to
  /// the keeper, in ms.
  static let arrivalWaitMs: Int32 = 2
  /// Monotonic ms of the last "cannot accept" line, so running out of descriptors logs once a second.
  private var lastAcceptComplaint: Int64 = 0

  init(index: Int, core: ServerCore, handle: @escaping Handler, resume: Resumer?) {
    self.index = index
    self.core = core
    self.handle = handle
    self.resume = resume
  }

  deinit { buffer.deallocate() }

  func run() {
    var event = epoll_event()
    while true {
      let accepting = index < core.acceptors
      if accepting { core.idleAcceptors.add(1, ordering: .sequentiallyConsistent) }
      let helping = !accepting && core.idleAcceptors.load(ordering: .sequentiallyConsistent) == 0
      let count = epoll_wait(
        accepting ? core.workerEpoll : core.servingEpoll, &event, 1, helping ? Self.fallbackAcceptMs : -1)
      if accepting, core.idleAcceptors.subtract(1, ordering: .sequentiallyConsistent).newValue == 0 {
        // The last accepting worker that waited goes to work: a serving worker watches for it.
        core.askForHelp()
      }
      if count < 0 {
        if errno == EINTR { continue }
        core.fail("epoll_wait failed; worker stops", fields: [("worker", String(index)), describe(errno)])
        return
      }
      if count == 0 {
        // The accepting workers may all be stuck in handlers (waiting for the database's write
        // lock): take a connection that has been waiting, if there is one.
        if !core.stopping.load(ordering: .relaxed) { acceptOne() }
        continue
      }
      switch event.data.u64 {
      case ServerCore.Tag.exit:
        return
      case ServerCore.Tag.listen:
        // Under load the next connection is usually waiting already: take it before going back
        // to sleep (a bounded run, so queued jobs and stops are seen).
        var runs = 0
        while acceptOne() && runs < Self.acceptRun && !core.stopping.load(ordering: .relaxed) { runs += 1 }
      case ServerCore.Tag.ready:
        if let job = core.takeJob() { perform(job) }
      case ServerCore.Tag.help:
        core.takeHelpRequest()
        if !core.stopping.load(ordering: .relaxed) { acceptOne(passingHelpOn: true) }
      default:
        break
      }
    }
  }

  // MARK: New connections

  /// Accepts one connection and serves it (or hands it on); false when there was none to accept. With
  /// `passingHelpOn` (a serving worker woken by a help request), a connection taken while every accepting worker is
  /// still busy asks the next serving worker to look too before this one serves it: more may be waiting, and the
  /// others may sleep without a timeout (they went to sleep while an accepting worker was idle). One that finds
  /// nothing asks nobody, so the chain ends with the queue.
  @discardableResult
  private func acceptOne(passingHelpOn: Bool = false) -> Bool {
    let fd = accept4(core.listenFd, nil, nil, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
    guard fd >= 0 else {
      let error = errno
      switch error {
      case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO, ECONNRESET:
        return false  // another worker or process took it, or the client left
      case EMFILE, ENFILE, ENOBUFS, ENOMEM:
        let now = monotonicMilliseconds()
        if now - lastAcceptComplaint >= 1000 {
          lastAcceptComplaint = now
          core.logger.log(
            .error, "cannot accept; retrying", fields: [("worker", String(index)), describe(error)])
        }
        var pause = timespec(tv_sec: 0, tv_nsec: 50_000_000)
        nanosleep(&pause, nil)
        return false
      default:
        core.fail("accept failed; the server stops", fields: [("worker", String(index)), describe(error)])
        return false
      }
    }
    guard core.admit(fd) else { return false }
    if passingHelpOn, core.idleAcceptors.load(ordering: .sequentiallyConsistent) == 0 { core.askForHelp() }
    let connection = Connection(id: core.newConnectionID(), fd: fd, bodyLimit: core.bodyLimit)
    readAndServe(connection)
    return true
  }

  /// Reads the connection's request while bytes are there; serves it when complete, or hands the
  /// connection to the keeper when the rest has yet to come.
  private func readAndServe(_ connection: Connection) {
    var waited = false
    while true {
      guard let event = connection.readEvent(into: buffer) else {
        // A worker can win the connection before nginx has written the request into it (it writes
        // right after connecting): a moment's wait here saves the trip through the keeper and the
        // ready queue. Once only, and briefly, so a client that dawdles costs a worker nothing.
        if !waited {
          waited = true
          var probe = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
          if poll(&probe, 1, Self.arrivalWaitMs) > 0 { continue }
        }
        core.toKeeper(.adopt(connection))
        return
      }
      switch core.progress(connection, event) {
      case .needMore:
        if connection.inputEnded { close(connection, reason: "the connection ended") }
        continue
      case .ready(let request):
        serve(connection, request)
        return
      case .aborted:
        continue
      case .closed(let reason):
        close(connection, reason: reason)
        return
      }
    }
  }

  // MARK: Requests and parked requests

  private func perform(_ job: ServerCore.Job) {
    switch job {
    case .request(let connection, let request):
      serve(connection, request)
    case .resume(let connection, let parked):
      guard let resume else {
        var writer = makeWriter(connection, startedAt: monotonicMicroseconds())
        writer.send(Response(status: 500, reason: "Internal Server Error"))
        finish(connection, writer)
        return
      }
      var writer = makeWriter(connection, startedAt: monotonicMicroseconds())
      resume(parked, &writer)
      finish(connection, writer)
    }
  }

  private func serve(_ connection: Connection, _ request: Request) {
    var writer = makeWriter(connection, startedAt: connection.startedAt)
    handle(request, &writer)
    finish(connection, writer)
  }

  private func makeWriter(_ connection: Connection, startedAt: Int64) -> ResponseWriter {
    let requestID = connection.parser.requestID
    let core = core
    return ResponseWriter(
      startedAt: startedAt, reserveParking: resume == nil ? nil : { core.reserveParking() },
      output: { bytes in
        // Written when the handler returns (as libfcgi did): whatever the handler does after
        // `send` (its log line, its metrics) is done before the client sees the answer.
        connection.pendingAnswer = Record.answer(bytes, requestID: requestID)
        return true
      })
  }

  /// After the handler or resumer: park the request, or make sure it was answered and end it.
  private func finish(_ connection: Connection, _ writer: ResponseWriter) {
    if let ticket = writer.parkedTicket {
      if connection.parkedAt == 0 { connection.parkedAt = monotonicMilliseconds() }
      connection.ticket = ticket
      connection.params = []
      connection.parser.releaseBuffers()
      core.toKeeper(.park(connection))
      return
    }
    if !writer.hasAnswered {
      core.logger.log(
        .error, "the handler sent no answer",
        fields: [("method", connection.method), ("path", connection.path)])
      var fallback = writer
      fallback.send(Response(status: 500, reason: "Internal Server Error"))
    }
    if let answer = connection.pendingAnswer {
      connection.pendingAnswer = nil
      connection.writeAll(answer, timeoutMs: ServerCore.writeTimeoutMs)
    }
    endAnswered(connection)
  }

  /// The answer is out: the next request on a kept connection, or a clean close.
  private func endAnswered(_ connection: Connection) {
    if connection.writeFailed {
      close(connection, reason: "the answer could not be written")
      return
    }
    if connection.parser.keepConnection && !connection.inputEnded {
      connection.resetForNextRequest()
      guard connection.parser.hasBufferedInput else {
        core.toKeeper(.adopt(connection))
        return
      }
      switch core.progress(connection, connection.parser.next()) {
      case .needMore, .aborted:
        core.toKeeper(.adopt(connection))
      case .ready(let request):
        serve(connection, request)
      case .closed(let reason):
        close(connection, reason: reason)
      }
      return
    }
    // What came after the request (the end of a refused body) is skipped, noting where it ends.
    if connection.parser.hasBufferedInput { _ = connection.parser.next() }
    // Once nginx has ended the body it sends nothing more on a connection it does not keep, so the
    // close is clean without a look; before that (a refused body still coming) the keeper reads on.
    if connection.inputEnded || connection.parser.stdinEnded {
      core.close(connection)
    } else {
      core.toKeeper(.drain(connection))
    }
  }

  private func close(_ connection: Connection, reason: String) {
    if core.logger.isEnabled(.debug) {
      core.logger.log(.debug, "connection closed", fields: [("reason", reason)])
    }
    core.close(connection)
  }

  private func describe(_ error: Int32) -> (String, String) {
    ("error", String(cString: strerror(error)))
  }
}
