import APRS
import Config
import Logging
import Platform
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The connection thread: the thin I/O shell around ``ConnectionStateMachine``.
///
/// It only reads the socket, cuts lines, hands `#` lines to the state machine and pushes packet lines into the
/// bounded ``LineQueue`` (a full queue drops and counts, it never waits), and writes what must be written: login
/// and `#filter` lines, and ACK lines the writer hands over after their commit. The socket is non-blocking and
/// `poll(2)` waits on it and on a wake-up pipe, so a write never holds up reading: outgoing bytes wait in a small
/// buffer that is emptied when the socket takes them.
///
/// ACKs survive a reconnect: once a verified login happened, ACKs that are due (their messages committed) wait
/// while the link is down, with those that were not completely written when it dropped, and go out right after
/// the next verified login, if the 30 s rule still allows it: an identical ACK line written less than
/// ``ackIntervalMs`` before is dropped as suppressed (APRS-IS would drop it as a duplicate). Login and `#filter`
/// lines are never kept across connections. ACKs are dropped and counted before the first verified login, after
/// an unverified one, beyond ``maximumAckBytes`` waiting, and at the stop.
final class ConnectionDriver: @unchecked Sendable {
  /// The most ACK bytes waiting to be written; more are dropped (aprsc itself buffers about 8 KB).
  static let maximumAckBytes = 8192
  /// Bytes read per `read(2)`.
  static let readChunk = 65_536

  private var machine: ConnectionStateMachine
  private let queue: LineQueue
  private let counters: ListenerCounters
  private let shared: SharedState
  private let logger: Logger
  private let connectTimeoutMs: Int64
  /// The least time between two identical ACK lines on the wire (ms): APRS-IS drops a repeat within 30 s.
  let ackIntervalMs: Int64
  private let onStatusChange: @Sendable () -> Void
  let wake: WakePipe

  private let stopFlag = Atomic<Bool>(false)
  private let inbox = Mutex(Inbox())
  /// Lines of messages sent through `/v1/send` (``OutboundSender``), already recorded as transmitted.
  private let pendingTransmissions = Mutex<[[UInt8]]>([])

  // Owned by the connection thread.
  private var socket: TCPSocket?
  private var splitter = LineSplitter()
  /// Lines waiting for the socket: login and `#filter` lines (`.control`), ACKs, and copies of sent messages.
  private var outgoing: [(bytes: [UInt8], kind: OutgoingKind)] = []
  private var outgoingOffset = 0
  /// Logged in verified on the current connection: ACKs may be written now.
  private var transmitting = false
  /// When each ACK line was last written completely (monotonic ms), for the 30 s rule on the wire; entries older
  /// than the interval are pruned once per interval.
  private var lastWritten: [[UInt8]: Int64] = [:]
  private var nextPruneAt: Int64 = 0
  private var readBuffer: UnsafeMutableRawBufferPointer
  /// Grows with every connection dropped: lines read on one connection are never handled as another's.
  private var generation = 0
  private var lastDropLog: Int64 = 0
  private var dropsLogged = 0

  /// What other threads hand to the connection thread.
  private struct Inbox {
    var filter: FilterLine?
    /// ACK lines due, oldest first, waiting to be written (now, or after the next verified login).
    var acks: [[UInt8]] = []
    var ackBytes = 0
    /// ACKs are kept: from a verified login on, through reconnects, until a login turns out unverified.
    var acceptsAcks = false

    /// Appends `lines` up to ``maximumAckBytes`` in all; returns how many did not fit.
    mutating func append(_ lines: some Sequence<[UInt8]>) -> Int {
      var dropped = 0
      for line in lines {
        if ackBytes + line.count > ConnectionDriver.maximumAckBytes {
          dropped += 1
        } else {
          acks.append(line)
          ackBytes += line.count
        }
      }
      return dropped
    }

    /// Empties the list; returns what it held.
    mutating func takeAll() -> [[UInt8]] {
      defer {
        acks.removeAll()
        ackBytes = 0
      }
      return acks
    }
  }

  init(
    machine: ConnectionStateMachine, queue: LineQueue, counters: ListenerCounters, shared: SharedState,
    logger: Logger, connectTimeoutMs: Int64, ackIntervalMs: Int64 = 30_000, wake: WakePipe,
    onStatusChange: @escaping @Sendable () -> Void
  ) {
    self.machine = machine
    self.queue = queue
    self.counters = counters
    self.shared = shared
    self.logger = logger
    self.connectTimeoutMs = connectTimeoutMs
    self.ackIntervalMs = ackIntervalMs
    self.wake = wake
    self.onStatusChange = onStatusChange
    self.readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readChunk, alignment: 16)
  }

  deinit { readBuffer.deallocate() }

  // MARK: Called from other threads

  /// Asks the thread to close the connection and return.
  func stop() {
    stopFlag.store(true, ordering: .sequentiallyConsistent)
    wake.wake()
  }

  private var stopping: Bool { stopFlag.load(ordering: .sequentiallyConsistent) }

  /// A new wanted filter line (from the registration watcher); only the newest one counts.
  func submit(filter: FilterLine) {
    inbox.withLock { $0.filter = filter }
    wake.wake()
  }

  /// Whether ACKs handed over now are kept (written now, or after the next verified login): true from the first
  /// verified login on, also while the link is down; false before it, after an unverified login and for a
  /// receive-only login. The writer plans ACKs only while this holds.
  var acceptsAcks: Bool { inbox.withLock { $0.acceptsAcks } }

  /// ACK lines whose messages are committed. Dropped (and counted) when ACKs are not kept now (see
  /// ``acceptsAcks``) or too many wait already.
  func submit(acks: [[UInt8]]) {
    guard !acks.isEmpty else { return }
    let dropped = inbox.withLock { inbox -> Int in
      guard inbox.acceptsAcks else { return acks.count }
      return inbox.append(acks)
    }
    if dropped > 0 {
      counters.add(counters.acksDropped, dropped)
      logger.warn(
        "ACKs dropped: no verified login to send them on, or too many waiting", ["count": String(dropped)])
    }
    if dropped < acks.count { wake.wake() }
  }

  /// Copies of messages sent through `/v1/send`, recorded as transmitted: written after what waits now, on the
  /// current verified login only. With none up they are dropped and logged (the schedule's next copy follows).
  func submit(transmissions lines: [[UInt8]]) {
    guard !lines.isEmpty else { return }
    pendingTransmissions.withLock { $0 += lines }
    wake.wake()
  }

  // MARK: The thread

  /// The longest sleep of the connection thread (ms): every timer of the connection is a deadline of the state
  /// machine (``ConnectionStateMachine/nextDeadline``), so this is a safety net only.
  static let idleWaitMs: Int64 = 60_000

  func run() {
    perform(machine.handle(.start(now: monotonicMilliseconds())))
    while !stopping {
      let now = monotonicMilliseconds()
      // Asleep until a line, a wake (ACKs, copies, a filter, the stop) or the state machine's next deadline (the
      // watchdog, the login and filter timeouts, the end of a backoff); ``idleWaitMs`` at most.
      var timeout = Self.idleWaitMs
      if let deadline = machine.nextDeadline { timeout = min(Self.idleWaitMs, max(0, deadline - now)) }
      var fds = [pollfd(fd: wake.readDescriptor, events: Int16(POLLIN), revents: 0)]
      if let socket {
        var events = Int16(POLLIN)
        if !outgoing.isEmpty { events |= Int16(POLLOUT) }
        fds.append(pollfd(fd: socket.descriptor, events: events, revents: 0))
      }
      let ready = poll(&fds, nfds_t(fds.count), Int32(timeout))
      if ready < 0 && errno != EINTR {
        logger.error("poll failed", ["error": TCPSocket.errnoText()])
      }
      if fds[0].revents != 0 { wake.drain() }
      if stopping { break }
      if let filter = inbox.withLock({ inbox -> FilterLine? in
        defer { inbox.filter = nil }
        return inbox.filter
      }) {
        perform(machine.handle(.filterChanged(filter, now: monotonicMilliseconds())))
      }
      if fds.count > 1, socket != nil {
        let revents = fds[1].revents
        if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { readAvailable() }
      }
      takeAcks()
      takeTransmissions()
      flush()
      perform(machine.handle(.tick(now: monotonicMilliseconds())))
    }
    perform(machine.handle(.stop(now: monotonicMilliseconds())))
    dropConnection()
    let left = inbox.withLock { inbox -> Int in
      inbox.acceptsAcks = false
      return inbox.takeAll().count
    }
    counters.add(counters.acksDropped, left)
  }

  // MARK: Actions

  private func perform(_ actions: [ConnectionAction]) {
    for action in actions {
      switch action {
      case .connect(let server):
        connect(server)
      case .send(let bytes):
        // Login and #filter lines go before any ACK still waiting (after a partly written one).
        let position = outgoingOffset > 0 ? 1 : 0
        outgoing.insert((bytes, .control), at: min(position, outgoing.count))
        flush()
      case .close:
        dropConnection()
      case .report(let status):
        reportAckState(status)
        shared.setStatus(status)
        onStatusChange()
      case .log(let entry):
        logger.log(entry.level, entry.message, fields: entry.fields.map { ($0.key, $0.value) })
      }
    }
  }

  private func connect(_ server: APRSISServer) {
    let result = TCPSocket.connect(
      host: server.host, port: server.port, timeoutMs: connectTimeoutMs, wake: wake,
      shouldStop: { [unowned self] in self.stopping })
    switch result {
    case .success(let connected):
      socket = connected
      splitter.reset()
      perform(machine.handle(.connected(now: monotonicMilliseconds(), address: connected.address)))
    case .failure(let failure):
      perform(machine.handle(.connectFailed(now: monotonicMilliseconds(), reason: failure.description)))
    }
  }

  /// Closes the socket and forgets the login and `#filter` lines that were to be written on it. ACKs not
  /// completely written go back to the front of the inbox: they wait for the next verified login.
  private func dropConnection() {
    generation += 1
    socket?.close()
    socket = nil
    splitter.reset()
    transmitting = false
    let unsent = outgoing.filter { $0.kind == .ack }.map(\.bytes)
    outgoing.removeAll()
    outgoingOffset = 0
    guard !unsent.isEmpty else { return }
    let dropped = inbox.withLock { inbox -> Int in
      guard inbox.acceptsAcks else { return unsent.count }
      let newer = inbox.takeAll()
      return inbox.append(unsent + newer)
    }
    counters.add(counters.acksDropped, dropped)
  }

  /// Follows the login state for ACKs: a verified login lets them through (and keeps them from then on); a login
  /// that cannot transmit (unverified, receive-only) drops those waiting; between connections nothing changes.
  private func reportAckState(_ status: ConnectionStatus) {
    transmitting = status.canTransmit
    if status.canTransmit {
      inbox.withLock { $0.acceptsAcks = true }
    } else if status.connected {
      let dropped = inbox.withLock { inbox -> Int in
        inbox.acceptsAcks = false
        return inbox.takeAll().count
      }
      if dropped > 0 {
        counters.add(counters.acksDropped, dropped)
        logger.warn("ACKs dropped: the login is not verified", ["count": String(dropped)])
      }
    }
  }

  /// The connection ended by itself (closed by the server, an I/O error).
  private func lost(_ reason: String) {
    dropConnection()
    perform(machine.handle(.closed(now: monotonicMilliseconds(), reason: reason)))
  }

  // MARK: Reading

  private func readAvailable() {
    // A bounded number of reads per wake-up, so writes and timers get their turn under a flood.
    for _ in 0..<16 {
      guard let socket else { return }
      switch socket.read(into: readBuffer) {
      case .wouldBlock:
        return
      case .closed:
        lost("the server closed the connection")
        return
      case .failed(let reason):
        lost(reason)
        return
      case .data(let count):
        var pieces: [LineSplitter.Piece] = []
        splitter.feed(UnsafeRawBufferPointer(rebasing: readBuffer[0..<count])) { pieces.append($0) }
        guard !pieces.isEmpty else { continue }
        handle(pieces)
        if count < readBuffer.count { return }
      }
    }
  }

  private func handle(_ pieces: [LineSplitter.Piece]) {
    let now = monotonicMilliseconds()
    counters.add(counters.linesRead, pieces.count)
    counters.lastLineAt.store(epochMilliseconds(), ordering: .relaxed)
    var packets = 0
    var dropped = 0
    let connection = generation
    for piece in pieces {
      // A comment may have ended the connection (and a new one may be up): the rest belonged to the old one.
      guard socket != nil, generation == connection else { break }
      switch piece {
      case .tooLong(let length):
        counters.add(counters.tooLong, 1)
        packets += 1
        logger.debug("line too long, skipped", ["bytes": String(length)])
      case .line(let bytes):
        if bytes.first == 0x23 {  // "#"
          counters.add(counters.comments, 1)
          perform(machine.handle(.comment(bytes, now: now)))
        } else {
          packets += 1
          if !queue.push(bytes) { dropped += 1 }
        }
      }
    }
    if packets > 0, generation == connection { perform(machine.handle(.lineReceived(now: now))) }
    if dropped > 0 {
      counters.add(counters.drops, dropped)
      dropsLogged += dropped
      if now - lastDropLog >= 10_000 {
        logger.warn(
          "the writer's queue is full: lines dropped",
          ["dropped": String(dropsLogged), "queue": String(queue.capacity)])
        lastDropLog = now
        dropsLogged = 0
      }
    }
  }

  // MARK: Writing

  /// Moves the waiting ACKs to the socket's buffer once it is empty and the login verified; an ACK line written
  /// less than ``ackIntervalMs`` ago is dropped as suppressed (the 30 s rule on the wire).
  private func takeAcks() {
    guard socket != nil, transmitting, outgoing.isEmpty else { return }
    let acks = inbox.withLock { $0.takeAll() }
    guard !acks.isEmpty else { return }
    let now = monotonicMilliseconds()
    if now >= nextPruneAt {
      lastWritten = lastWritten.filter { now - $0.value < ackIntervalMs }
      nextPruneAt = now + ackIntervalMs
    }
    var suppressed = 0
    var taken = Set<[UInt8]>()
    for line in acks {
      if let written = lastWritten[line], now - written < ackIntervalMs {
        suppressed += 1
      } else if taken.insert(line).inserted {
        outgoing.append((line, .ack))
      } else {
        suppressed += 1
      }
    }
    counters.add(counters.acksSuppressed, suppressed)
  }

  /// Moves the copies of sent messages to the socket's buffer while a verified login is up; drops them otherwise.
  private func takeTransmissions() {
    let lines = pendingTransmissions.withLock { lines -> [[UInt8]] in
      defer { lines.removeAll() }
      return lines
    }
    guard !lines.isEmpty else { return }
    guard socket != nil, transmitting else {
      logger.warn("sent messages not written: no verified login up", ["lines": String(lines.count)])
      return
    }
    for line in lines { outgoing.append((line, .copy)) }
  }

  private func flush() {
    while let socket, let first = outgoing.first {
      let result = first.bytes.withUnsafeBytes { buffer in
        socket.write(UnsafeRawBufferPointer(rebasing: buffer[outgoingOffset...]))
      }
      switch result {
      case .failure(let failure):
        lost("write failed: \(failure)")
        return
      case .success(let written):
        if written == 0 { return }
        outgoingOffset += written
        if outgoingOffset == first.bytes.count {
          outgoing.removeFirst()
          outgoingOffset = 0
          if first.kind != .control { routeLocally(first.bytes) }
          if first.kind == .ack {
            lastWritten[first.bytes] = monotonicMilliseconds()
            counters.add(counters.acksSent, 1)
            if logger.isEnabled(.debug) {
              logger.debug("ACK sent", ["line": String(decoding: first.bytes.dropLast(2), as: UTF8.self)])
            }
          }
        }
      }
    }
  }

  /// Hands a written ACK or message copy to the writer as a ``LineOrigin/transmitted`` line (without its CR LF):
  /// aprsc never sends a client its own packets back, so a station registered here hears it only this way.
  private func routeLocally(_ line: [UInt8]) {
    var bytes = line
    while let last = bytes.last, last == 0x0D || last == 0x0A { bytes.removeLast() }
    if !queue.push(bytes, origin: .transmitted) {
      counters.add(counters.drops, 1)
      dropsLogged += 1
    }
  }
}

/// What a line waiting for the socket is.
private enum OutgoingKind {
  /// A login or `#filter` line.
  case control
  /// An ACK for a stored message.
  case ack
  /// A copy of a `/v1/send` message.
  case copy
}
