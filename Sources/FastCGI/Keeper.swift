import CFastCGI
import Logging
import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// The keeper thread: owns every connection no worker is busy with (requests still coming in, kept
/// connections between requests, parked requests, answered connections being drained) in an epoll
/// set of its own, with their deadlines, and the parked set with its `WakeSource`. It never runs a
/// handler: a request that is complete, or a parked one that is due, goes to the ready queue.
///
/// Everything here belongs to this one thread, so nothing is locked; connections arrive through
/// the inbox and leave through the ready queue (or are closed here).
final class Keeper: @unchecked Sendable {
  let core: ServerCore
  private let epoll: Int32
  private var owned: [UInt64: Connection] = [:]
  private var parked = ParkedSet()
  /// `ParkingOptions`' per-key and per-group caps.
  private let caps: ParkedSet.Caps
  /// Deadlines of connections being read or drained (stale entries are skipped).
  private var timers = DeadlineHeap()
  /// The smallest `seen` of the requests parked since the source was last asked.
  private var recheckFrom: Int64?
  private var nextPoll: Int64 = 0
  /// When the source was last asked (monotonic ms): wakes closer together than the poll interval are one ask.
  private var lastPoll: Int64 = .min / 2
  private var stopping = false
  private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
  /// A parked connection that sends more than this (instead of nothing, or an abort) is closed.
  static let parkedInputLimit = 65_536

  init(core: ServerCore) throws(StartupError) {
    self.core = core
    caps = ParkedSet.Caps(perKey: core.parking.maxParkedPerKey, perGroup: core.parking.maxParkedPerGroup)
    epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
    guard epoll >= 0, ServerCore.add(core.inboxEvent, tag: ServerCore.Tag.inbox, to: epoll),
      ServerCore.add(core.exitEvent, tag: ServerCore.Tag.exit, to: epoll)
    else {
      throw StartupError("cannot create the keeper's epoll set: \(String(cString: strerror(errno)))")
    }
    if let fd = core.parking.source?.wakeDescriptor, !ServerCore.add(fd, tag: ServerCore.Tag.wake, to: epoll)
    {
      throw StartupError("cannot watch the long-poll wake socket: \(String(cString: strerror(errno)))")
    }
  }

  deinit {
    buffer.deallocate()
    Glibc.close(epoll)
  }

  func run() {
    var events = [epoll_event](repeating: epoll_event(), count: 256)
    while true {
      let count = epoll_wait(epoll, &events, Int32(events.count), timeout())
      if count < 0 && errno != EINTR {
        core.fail("the keeper's epoll_wait failed", fields: [("error", String(cString: strerror(errno)))])
      }
      var leave = false
      for index in 0..<max(0, Int(count)) {
        switch events[index].data.u64 {
        case ServerCore.Tag.exit: leave = true
        case ServerCore.Tag.inbox: takeInbox()
        case ServerCore.Tag.wake:
          core.parking.source?.drainWakes()
          // At once, but no more often than the poll interval: a burst of commits (every request's rate-limit
          // write wakes it) is one look, as with the plain poll.
          nextPoll = min(nextPoll, lastPoll + core.parking.pollIntervalMs)
        case let id: readable(id)
        }
      }
      if leave {
        for connection in owned.values { core.close(connection) }
        owned = [:]
        return
      }
      let now = monotonicMilliseconds()
      fireTimers(now)
      for id in parked.expired(now: now) { resume(id, .timedOut, now: now) }
      pollSource(now)
    }
  }

  /// Milliseconds until the next deadline or poll, -1 for none.
  private func timeout() -> Int32 {
    var next: Int64?
    if let first = timers.first { next = first.deadline }
    if let deadline = parked.nextWake(tickMs: core.parking.deadlineTickMs) {
      next = min(next ?? deadline, deadline)
    }
    if !parked.isEmpty, core.parking.source != nil { next = min(next ?? nextPoll, nextPoll) }
    guard let next else { return -1 }
    return Int32(clamping: max(0, next - monotonicMilliseconds()))
  }

  // MARK: The inbox

  private func takeInbox() {
    let now = monotonicMilliseconds()
    for command in core.takeInbox() {
      switch command {
      case .adopt(let connection):
        connection.role = .reading
        let idle = isIdle(connection)
        if stopping && idle {
          core.close(connection)
          continue
        }
        guard hold(connection) else { continue }
        setDeadline(connection, now + (idle ? ServerCore.idleTimeoutMs : ServerCore.readTimeoutMs))
      case .park(let connection):
        guard let ticket = connection.ticket else {
          core.close(connection)
          continue
        }
        if stopping || connection.inputEnded {
          // Nobody is there to answer (end of stream means the web server closed it), or the stop
          // answers every parked request now.
          core.releaseParking()
          if stopping {
            dispatch(connection, ticket: ticket, reason: .stopping, now: now)
          } else {
            close(connection, reason: "the client went away")
          }
          continue
        }
        connection.role = .parked
        connection.deadline = 0
        guard hold(connection) else {
          core.releaseParking()
          continue
        }
        admit(connection, ticket: ticket, now: now)
      case .drain(let connection):
        connection.role = .draining
        connection.drainUntil = now + ServerCore.drainLimitMs
        guard hold(connection) else { continue }
        setDeadline(connection, now + ServerCore.drainSilenceMs)
      case .stop:
        stopping = true
        for id in parked.removeAll() { resume(id, .stopping, now: now, released: false) }
        for connection in Array(owned.values) where isIdle(connection) {
          release(connection)
          core.close(connection)
        }
      }
    }
  }

  private func isIdle(_ connection: Connection) -> Bool {
    connection.role == .reading && connection.parser.phase == .awaitingBegin
      && !connection.parser.hasBufferedInput && connection.requestsServed > 0
  }

  /// Takes `connection` into the epoll set and the table; false (and the connection closed) when
  /// it cannot be watched.
  @discardableResult
  private func hold(_ connection: Connection) -> Bool {
    owned[connection.id] = connection
    guard ServerCore.add(connection.fd, tag: connection.id, to: epoll) else {
      owned[connection.id] = nil
      close(connection, reason: "cannot watch the connection: \(String(cString: strerror(errno)))")
      return false
    }
    return true
  }

  /// Lets go of `connection` (it goes to a worker, or is closed next).
  private func release(_ connection: Connection) {
    owned[connection.id] = nil
    var unused = epoll_event()
    epoll_ctl(epoll, EPOLL_CTL_DEL, connection.fd, &unused)
  }

  private func setDeadline(_ connection: Connection, _ deadline: Int64) {
    connection.deadline = deadline
    timers.insert(deadline: deadline, id: connection.id)
  }

  private func close(_ connection: Connection, reason: String) {
    if core.logger.isEnabled(.debug) {
      core.logger.log(.debug, "connection closed", fields: [("reason", reason)])
    }
    core.close(connection)
  }

  // MARK: Connections

  private func readable(_ id: UInt64) {
    guard let connection = owned[id] else { return }
    switch connection.role {
    case .reading: readRequest(connection)
    case .parked: watchParked(connection)
    case .draining: drain(connection)
    }
  }

  private func readRequest(_ connection: Connection) {
    guard let event = connection.readEvent(into: buffer) else { return }
    switch core.progress(connection, event) {
    case .needMore, .aborted:
      setDeadline(connection, monotonicMilliseconds() + ServerCore.readTimeoutMs)
    case .ready(let request):
      release(connection)
      core.enqueue(.request(connection, request))
    case .closed(let reason):
      release(connection)
      close(connection, reason: reason)
    }
  }

  /// A parked connection is readable: the web server closed it (the client went away), aborted the
  /// request, or sent something it should not have.
  private func watchParked(_ connection: Connection) {
    let count = connection.read(into: buffer)
    if count > 0 {
      let event = connection.parser.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
      if event == .aborted {
        unpark(connection, reason: "the web server aborted the request")
      } else if connection.parser.hasBufferedInput && count >= Self.parkedInputLimit {
        unpark(connection, reason: "a parked connection sent more than it should")
      }
      return
    }
    if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
    connection.inputEnded = true
    unpark(connection, reason: "the client went away")
  }

  private func unpark(_ connection: Connection, reason: String) {
    parked.remove(connection.id)
    core.releaseParking()
    release(connection)
    close(connection, reason: reason)
  }

  private func drain(_ connection: Connection) {
    let count = connection.read(into: buffer)
    if count > 0 {
      // The parser skips it all, noting the end of the request's body: once that is in and nothing
      // more waits, the connection can close cleanly.
      _ = connection.parser.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
      connection.parser.releaseBuffers()
      if connection.parser.stdinEnded && connection.hasNothingUnread() {
        release(connection)
        core.close(connection)
        return
      }
      let now = monotonicMilliseconds()
      setDeadline(connection, min(connection.drainUntil, now + ServerCore.drainSilenceMs))
      return
    }
    if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
    release(connection)
    core.close(connection)
  }

  private func fireTimers(_ now: Int64) {
    while let first = timers.first, first.deadline <= now {
      _ = timers.pop()
      guard let connection = owned[first.id], connection.deadline == first.deadline,
        connection.role != .parked
      else { continue }
      release(connection)
      close(
        connection,
        reason: connection.role == .draining ? "draining ended" : "no request within the read timeout")
    }
  }

  // MARK: Parked requests

  /// Asks the wake source, while anything is parked, what changed; wakes what waits for it.
  private func pollSource(_ now: Int64) {
    guard !parked.isEmpty, let source = core.parking.source, now >= nextPoll else { return }
    lastPoll = now
    // A source that says when to look is asked again on its wake (or a new request's recheck), else at its
    // fallback; one without is asked every poll interval.
    nextPoll = now + (source.wakeDescriptor == nil ? core.parking.pollIntervalMs : source.fallbackPollMs)
    let changes = source.changes(recheckFrom: recheckFrom)
    recheckFrom = nil
    for (key, newest) in changes {
      for id in parked.wake(key: key, newest: newest) { resume(id, .woken, now: now) }
    }
  }

  /// Puts a request that was just held into the parked set under the per-key and per-group caps:
  /// the key's oldest request gives way to it, or it goes straight back to a worker
  /// (`ParkReason.displaced`, `.groupFull`).
  private func admit(_ connection: Connection, ticket: ParkTicket, now: Int64) {
    let entry = ParkedSet.Entry(
      key: ticket.key, group: ticket.group, after: ticket.after, deadline: ticket.deadline,
      parkedAt: connection.parkedAt, lane: ticket.lane)
    switch parked.admit(entry, id: connection.id, caps: caps, firstPark: !connection.wasHeld) {
    case .parked(let displacing):
      connection.wasHeld = true
      recheckFrom = min(recheckFrom ?? ticket.seen, ticket.seen)
      nextPoll = min(nextPoll, now + core.parking.pollIntervalMs)
      if let displacing {
        if core.logger.isEnabled(.debug) {
          core.logger.log(.debug, "parked request displaced by a newer one", fields: [("key", ticket.key)])
        }
        resume(displacing, .displaced, now: now)
      }
    case .displaced:
      resume(connection, ticket: ticket, .displaced, now: now)
    case .groupFull:
      if core.logger.isEnabled(.debug) {
        core.logger.log(.debug, "not parked: its group is full", fields: [("group", ticket.group ?? "")])
      }
      resume(connection, ticket: ticket, .groupFull, now: now)
    }
  }

  /// Sends a parked request (already out of `parked`) back to a worker.
  private func resume(_ id: UInt64, _ reason: ParkReason, now: Int64, released: Bool = false) {
    guard let connection = owned[id], let ticket = connection.ticket else { return }
    resume(connection, ticket: ticket, reason, now: now, released: released)
  }

  private func resume(
    _ connection: Connection, ticket: ParkTicket, _ reason: ParkReason, now: Int64, released: Bool = false
  ) {
    if !released { core.releaseParking() }
    release(connection)
    dispatch(connection, ticket: ticket, reason: reason, now: now)
  }

  private func dispatch(_ connection: Connection, ticket: ParkTicket, reason: ParkReason, now: Int64) {
    let request = ParkedRequest(
      ticket: ticket, reason: reason, method: connection.method, path: connection.path,
      remoteAddress: connection.remoteAddress, parkedMilliseconds: now - connection.parkedAt)
    connection.ticket = nil
    core.enqueue(.resume(connection, request))
  }
}
