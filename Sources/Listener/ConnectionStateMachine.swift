import APRS
import Config
import Logging

/// The APRS-IS connection's logic, without sockets or clocks: events in, actions out (the shape of Hummingbird's
/// connection state machines). The driver (``ConnectionDriver``) does the I/O and feeds back what happened.
///
/// - idle → ``ConnectionEvent/start(now:)`` → connecting (DNS and TCP are the driver's) → awaitingBanner → on the
///   first line, the login line (`user … pass … vers aprs-cloud <version> filter …`) → awaitingLogresp → on
///   `# logresp … verified|unverified` → online. A `#` line containing `invalid` or `not allowed` before the logresp
///   is a refusal. Keepalives before the logresp are ignored.
/// - Watchdog: no line at all for ``ConnectionSettings/watchdogMs`` → close and reconnect; no logresp within
///   ``ConnectionSettings/loginTimeoutMs`` of connecting → the same.
/// - Reconnects come promptly after an outage, slowly after a refusal (jitter from the injected source):
///   - Outage: an established session ended (closed by the server ``ConnectionSettings/establishedMs`` or more
///     after its logresp, the watchdog, a read or write error) or connects fail. The retries follow
///     ``OutageBackoff``: 1, 2, 4 s, at most 4 s apart in the outage's first 3 minutes and 30 s apart until
///     10 minutes, then up to 5 min. Every outage starts over at 1 s, however recently the last one ended (a
///     logresp ends it), so the listener is on air within about 5 s of the server's return.
///   - Refusal: a `#` line refusing the login, or a session the server closes within
///     ``ConnectionSettings/establishedMs`` of its logresp (a duplicate login, a server that drops this client).
///     The retries follow ``ConnectionSettings/refusalBackoff`` (5 s doubling to 5 min), reset only when a
///     session stayed up for ``Backoff/stableMs`` (10 min). An unverified login is not a refusal: it stays up,
///     receive-only.
/// - Several servers: a fast rotation, so whichever answers first wins. Each attempt goes to the next server; a
///   failed connect, a server silent for ``ConnectionSettings/bannerTimeoutMs`` after connecting, or one without a
///   logresp within ``ConnectionSettings/loginTimeoutMs`` moves on to the next server at once, and only when each
///   failed in this round does the machine wait for the next outage delay.
/// - Filter: ``FilterManager`` decides; the login line carries the wanted filter, and every change of it on an
///   open connection is one `#filter` line (its answer checked), never a reconnect: the line is at most 510 bytes
///   at any number of stations. Only a `#filter` line APRS-IS lost (no answer within
///   ``ConnectionSettings/filterAnswerTimeoutMs``) or answered with another spec re-makes the connection, so that
///   the login line puts the filter in effect for sure.
struct ConnectionStateMachine: Sendable {
  let settings: ConnectionSettings
  /// Where the connection is, as logs, `/health` and tests name it (``phase`` holds its data).
  var state: ConnectionState { phase.state }
  private(set) var filter: FilterManager
  /// Retry delays of the outage under way (if any).
  private(set) var outage: OutageBackoff
  /// Retry delays after refused logins.
  private(set) var refusals: Backoff
  /// The current status (also sent in ``ConnectionAction/report(_:)`` when it changes).
  private(set) var status = ConnectionStatus()

  private let jitter: @Sendable () -> Double
  /// Where the connection is, with what belongs to that state (the server, when it connected, its last line).
  private var phase: Phase = .idle
  /// The server the next connect goes to, round robin over ``ConnectionSettings/servers``.
  private var serverIndex = 0
  /// The attempts that failed since a server last answered, across the states of one round of servers.
  private var failuresThisRound = 0
  private var reported: ConnectionStatus?

  /// The connection's states with their data: the times of a session live in the states that have one.
  private enum Phase {
    case idle
    case backingOff(until: Int64)
    case connecting(server: APRSISServer)
    case awaitingBanner(Session)
    case awaitingLogresp(Session)
    /// `since`: when the logresp came (monotonic ms).
    case online(Session, verified: Bool, since: Int64)
    case stopped

    var state: ConnectionState {
      switch self {
      case .idle: .idle
      case .backingOff(let until): .backingOff(until: until)
      case .connecting(let server): .connecting(server: server)
      case .awaitingBanner: .awaitingBanner
      case .awaitingLogresp: .awaitingLogresp
      case .online(_, let verified, _): .online(verified: verified)
      case .stopped: .stopped
      }
    }

    /// The open connection's session, nil when none is open.
    var session: Session? {
      switch self {
      case .awaitingBanner(let session), .awaitingLogresp(let session), .online(let session, _, _): session
      default: nil
      }
    }

    /// When the session logged in, nil before its logresp or without a session.
    var onlineSince: Int64? {
      if case .online(_, _, let since) = self { return since }
      return nil
    }

    /// The server of the connect under way or of the open session.
    var server: APRSISServer? {
      if case .connecting(let server) = self { return server }
      return session?.server
    }

    /// The same phase with the session's last line at `now`.
    func heard(at now: Int64) -> Phase {
      switch self {
      case .awaitingBanner(var session):
        session.lastLineAt = now
        return .awaitingBanner(session)
      case .awaitingLogresp(var session):
        session.lastLineAt = now
        return .awaitingLogresp(session)
      case .online(var session, let verified, let since):
        session.lastLineAt = now
        return .online(session, verified: verified, since: since)
      default: return self
      }
    }
  }

  /// One open connection to a server (monotonic ms).
  private struct Session {
    let server: APRSISServer
    /// When the TCP connection came up.
    let connectedAt: Int64
    /// When its last line (of any kind) arrived.
    var lastLineAt: Int64
  }

  /// A machine in state idle. `jitter` returns a random number in `[0, 1)` for each backoff delay.
  init(settings: ConnectionSettings, jitter: @escaping @Sendable () -> Double) {
    self.settings = settings
    self.jitter = jitter
    self.outage = settings.outageBackoff
    self.refusals = settings.refusalBackoff
    self.filter = FilterManager(login: settings.login)
    status.receiveOnly = settings.isReceiveOnly
    updateFilterStatus()
  }

  /// The earliest time the machine wants a ``ConnectionEvent/tick(now:)`` (nil: only events matter).
  var nextDeadline: Int64? {
    switch phase {
    case .idle, .stopped, .connecting: return nil
    case .backingOff(let until): return until
    case .awaitingBanner(let session) where settings.servers.count > 1:
      return min(
        session.lastLineAt + settings.watchdogMs, session.connectedAt + settings.loginTimeoutMs,
        session.connectedAt + settings.bannerTimeoutMs)
    case .awaitingBanner(let session), .awaitingLogresp(let session):
      return min(session.lastLineAt + settings.watchdogMs, session.connectedAt + settings.loginTimeoutMs)
    case .online(let session, _, _):
      var deadline = session.lastLineAt + settings.watchdogMs
      if let answer = filter.answerDeadline(timeoutMs: settings.filterAnswerTimeoutMs) {
        deadline = min(deadline, answer)
      }
      return deadline
    }
  }

  /// Handles one event and returns what to do, in order.
  mutating func handle(_ event: ConnectionEvent) -> [ConnectionAction] {
    var actions: [ConnectionAction] = []
    switch event {
    case .start(let now):
      if case .idle = phase { connect(now: now, &actions) }
    case .connected(let now, let address):
      guard case .connecting(let server) = phase else { break }
      phase = .awaitingBanner(Session(server: server, connectedAt: now, lastLineAt: now))
      status.address = address
      log(&actions, .info, "connected", ("server", server.description), ("address", address))
    case .connectFailed(let now, let reason):
      guard case .connecting(let server) = phase else { break }
      status.lastError = "cannot connect to \(server.description): \(reason)"
      log(&actions, .warn, "cannot connect to APRS-IS", ("server", server.description), ("error", reason))
      advanceServer()
      attemptFailed(now: now, &actions)
    case .lineReceived(let now):
      phase = phase.heard(at: now)
      if case .awaitingBanner = phase { sendLogin(now: now, &actions) }
    case .comment(let bytes, let now):
      phase = phase.heard(at: now)
      comment(bytes, now: now, &actions)
    case .tick(let now):
      tick(now: now, &actions)
    case .closed(let now, let reason):
      guard phase.session != nil else { break }
      if let since = phase.onlineSince, now - since < settings.establishedMs {
        endConnection(now: now, reason: reason, level: .warn, &actions, closeSocket: false)
        log(
          &actions, .warn,
          "the server closed the session right after its logresp: treated as a refused login",
          ("onlineMs", String(now - since)), ("establishedMs", String(settings.establishedMs)))
        retryLater(now: now, after: .refusal, &actions)
      } else if phase.onlineSince != nil {
        endConnection(now: now, reason: reason, level: .warn, &actions, closeSocket: false)
        outage.begin(now: now)
        retryLater(now: now, after: .outage, &actions)
      } else {
        endConnection(now: now, reason: reason, level: .warn, &actions, closeSocket: false)
        attemptFailed(now: now, &actions)
      }
    case .filterChanged(let line, let now):
      guard filter.setDesired(line) else { break }
      updateFilterStatus()
      log(
        &actions, .info, "filter changed", ("stations", String(status.filterStations)),
        ("bytes", String(status.filterBytes)), ("entries", String(status.filterEntries)),
        ("exactStations", String(status.filterExactStations)))
      reconcileFilter(now: now, &actions)
    case .stop(let now):
      if phase.session != nil {
        endConnection(
          now: now, reason: "stopping", level: .info, &actions, closeSocket: true, countsAsReconnect: false)
      }
      phase = .stopped
    }
    reportIfChanged(&actions)
    return actions
  }

  // MARK: Steps

  private mutating func advanceServer() {
    serverIndex = (serverIndex + 1) % max(1, settings.servers.count)
  }

  private mutating func connect(now: Int64, _ actions: inout [ConnectionAction]) {
    let list = settings.servers
    guard !list.isEmpty else {
      log(&actions, .error, "no APRS-IS server configured")
      phase = .backingOff(until: now + settings.refusalBackoff.maximumMs)
      return
    }
    let server = list[serverIndex % list.count]
    phase = .connecting(server: server)
    status.server = server.description
    status.address = nil
    actions.append(.connect(server: server))
  }

  private mutating func sendLogin(now: Int64, _ actions: inout [ConnectionAction]) {
    let spec = filter.loginFilter()
    let line = OutgoingLine.login(
      user: settings.login, passcode: settings.passcode, softwareName: settings.softwareName,
      softwareVersion: settings.softwareVersion, filter: spec)
    guard let session = phase.session else { return }
    phase = .awaitingLogresp(session)
    actions.append(.send(line))
    log(
      &actions, .info, "login sent", ("login", settings.login),
      ("filterStations", String(status.filterStations)), ("filterBytes", String(status.filterBytes)),
      ("bytes", String(line.count)))
  }

  private mutating func comment(_ bytes: [UInt8], now: Int64, _ actions: inout [ConnectionAction]) {
    switch phase {
    case .awaitingBanner:
      sendLogin(now: now, &actions)
    case .awaitingLogresp(let session):
      switch ServerComment.classify(bytes) {
      case .logresp(let login, let verified, let server):
        phase = .online(session, verified: verified, since: now)
        outage.end()
        failuresThisRound = 0
        filter.loggedIn()
        status.connected = true
        status.verified = verified
        status.receiveOnly = settings.isReceiveOnly || !verified
        status.lastError = nil
        var fields = [("login", login), ("verified", String(verified))]
        if let server { fields.append(("serverName", server)) }
        fields.append(("filterStations", String(status.filterStations)))
        actions.append(.log(LogEntry(.info, "logged in", fields.map { LogField($0.0, $0.1) })))
        if settings.isReceiveOnly {
          log(&actions, .warn, "receive-only: logged in with pass -1, messages are stored but never ACKed")
        } else if !verified {
          log(
            &actions, .warn,
            "login unverified: the passcode does not match the login; receive-only, messages are not ACKed",
            ("login", settings.login))
        }
        reconcileFilter(now: now, &actions)
      case .refusal(let text):
        endConnection(now: now, reason: "login refused: \(text)", level: .error, &actions, closeSocket: true)
        failuresThisRound = 0
        retryLater(now: now, after: .refusal, &actions)
      case .filterActive, .other:
        break
      }
    case .online:
      if case .filterActive(let spec) = ServerComment.classify(bytes) {
        switch filter.answer(spec: spec) {
        case .confirmed:
          log(
            &actions, .info, "filter active", ("stations", String(status.filterStations)),
            ("bytes", String(spec.utf8.count + 10)))
          reconcileFilter(now: now, &actions)
        case .mismatch(let expected, let received):
          log(
            &actions, .warn, "the filter answer does not match the #filter line sent; reconnecting",
            ("sent", expected), ("answer", received))
          filterReconnect(now: now, reason: "filter answer mismatch", &actions)
        case .unexpected(let spec):
          log(&actions, .debug, "filter answer without a #filter line waiting", ("spec", spec))
        }
      }
    default:
      break
    }
  }

  private mutating func tick(now: Int64, _ actions: inout [ConnectionAction]) {
    switch phase {
    case .backingOff(let until) where now >= until:
      connect(now: now, &actions)
    case .awaitingBanner(let session), .awaitingLogresp(let session):
      let reason: String
      if now - session.connectedAt >= settings.loginTimeoutMs {
        reason = "no logresp within \(settings.loginTimeoutMs) ms"
      } else if now - session.lastLineAt >= settings.watchdogMs {
        reason = "no line for \(settings.watchdogMs) ms"
      } else if state == .awaitingBanner, settings.servers.count > 1,
        now - session.connectedAt >= settings.bannerTimeoutMs
      {
        reason = "no banner within \(settings.bannerTimeoutMs) ms; trying the next server"
      } else {
        break
      }
      endConnection(now: now, reason: reason, level: .warn, &actions, closeSocket: true)
      attemptFailed(now: now, &actions)
    case .online(let session, _, _):
      if now - session.lastLineAt >= settings.watchdogMs {
        watchdog(now: now, &actions)
      } else if filter.answerOverdue(now: now, timeoutMs: settings.filterAnswerTimeoutMs) {
        log(
          &actions, .warn, "no answer to #filter; reconnecting with the filter in the login line",
          ("waitedMs", String(settings.filterAnswerTimeoutMs)))
        filterReconnect(now: now, reason: "no answer to #filter", &actions)
      }
    default:
      break
    }
  }

  /// The session went silent: an outage (the server froze or the path broke); the first retry comes promptly.
  private mutating func watchdog(now: Int64, _ actions: inout [ConnectionAction]) {
    endConnection(
      now: now, reason: "no line for \(settings.watchdogMs / 1000) s", level: .warn, &actions,
      closeSocket: true)
    outage.begin(now: now)
    retryLater(now: now, after: .outage, &actions)
  }

  /// An attempt that never reached a logresp failed (connect, banner, login timeout, closed early; the server
  /// index has moved on): the next server at once while some in this round have not been tried, else the next
  /// outage delay.
  private mutating func attemptFailed(now: Int64, _ actions: inout [ConnectionAction]) {
    outage.begin(now: now)
    failuresThisRound += 1
    if failuresThisRound < settings.servers.count {
      connect(now: now, &actions)
    } else {
      failuresThisRound = 0
      retryLater(now: now, after: .outage, &actions)
    }
  }

  private mutating func reconcileFilter(now: Int64, _ actions: inout [ConnectionAction]) {
    guard case .online = phase else { return }
    switch filter.reconcile(now: now) {
    case .none:
      break
    case .send(let line, _):
      actions.append(.send(line))
      log(
        &actions, .info, "filter update sent", ("stations", String(status.filterStations)),
        ("bytes", String(line.count)), ("entries", String(status.filterEntries)))
    }
  }

  /// Re-makes the connection at once because the `#filter` line in effect is unknown (lost, or answered with
  /// another spec); the new login line carries the wanted filter. Never for a change of the station set.
  private mutating func filterReconnect(now: Int64, reason: String, _ actions: inout [ConnectionAction]) {
    endConnection(now: now, reason: reason, level: .info, &actions, closeSocket: true)
    connect(now: now, &actions)
  }

  private mutating func endConnection(
    now: Int64, reason: String, level: LogLevel, _ actions: inout [ConnectionAction], closeSocket: Bool,
    countsAsReconnect: Bool = true
  ) {
    if closeSocket { actions.append(.close(reason: reason)) }
    let server = phase.server?.description ?? "?"
    let onlineSince = phase.onlineSince
    if let since = onlineSince, now - since >= refusals.stableMs { refusals.reset() }
    var fields = [LogField("reason", reason), LogField("server", server)]
    if let since = onlineSince { fields.append(LogField("onlineSeconds", String((now - since) / 1000))) }
    actions.append(.log(LogEntry(level, "disconnected", fields)))
    filter.disconnected()
    if countsAsReconnect { status.lastError = "\(server): \(reason)" }
    status.connected = false
    status.verified = false
    status.receiveOnly = settings.isReceiveOnly
    status.address = nil
    if countsAsReconnect { status.reconnects += 1 }
    advanceServer()
  }

  /// Why the machine waits before the next connect.
  private enum RetryCause {
    /// The servers are unreachable or went silent: ``outage``'s short delays.
    case outage
    /// A server refused the login: ``refusals``' long delays.
    case refusal
  }

  private mutating func retryLater(now: Int64, after cause: RetryCause, _ actions: inout [ConnectionAction]) {
    let delay: Int64
    switch cause {
    case .outage: delay = outage.nextDelay(now: now, unit: jitter())
    case .refusal: delay = refusals.nextDelay(unit: jitter())
    }
    phase = .backingOff(until: now + delay)
    status.server = nil
    var fields = [("delayMs", String(delay)), ("cause", cause == .outage ? "outage" : "refused")]
    if cause == .outage, let since = outage.since { fields.append(("outageMs", String(now - since))) }
    actions.append(.log(LogEntry(.info, "reconnecting later", fields.map { LogField($0.0, $0.1) })))
  }

  private mutating func updateFilterStatus() {
    let line = filter.desired
    status.filterStations = line.addressees.exactStations + line.addressees.prefixStations
    status.filterBytes = filter.desiredLineBytes
    status.filterEntries = line.entryCount
    status.filterExactStations = line.exactStationCount
    status.ownTransmissions = line.ownTransmissions
  }

  private mutating func reportIfChanged(_ actions: inout [ConnectionAction]) {
    status.state = state.name
    if status != reported {
      reported = status
      actions.append(.report(status))
    }
  }

  private func log(
    _ actions: inout [ConnectionAction], _ level: LogLevel, _ message: String, _ fields: (String, String)...
  ) {
    actions.append(.log(LogEntry(level, message, fields.map { LogField($0.0, $0.1) })))
  }
}
