import APRS
import Config
import Logging

/// The connection's settings: servers, login, timings.
struct ConnectionSettings: Sendable, Equatable {
  /// User-filter port servers, tried in turn (a fast rotation: see ``ConnectionStateMachine``).
  var servers: [APRSISServer]
  /// The login name: the operator's service call, or a generated receive-only name.
  var login: String
  /// The passcode; -1 logs in unverified (receive-only).
  var passcode: Int
  /// `vers` name and version.
  var softwareName = ListenerVersion.softwareName
  var softwareVersion = ListenerVersion.current
  /// No line for this long: the link is dead (ms).
  var watchdogMs: Int64 = 60_000
  /// No logresp this long after connecting: give up on this connection (ms). aprsc itself waits 30 s.
  var loginTimeoutMs: Int64 = 30_000
  /// A `#filter` line without its `active` answer after this long was lost (ms).
  var filterAnswerTimeoutMs: Int64 = 15_000
  /// With several servers configured, one whose banner has not come this long after connecting is left for the
  /// next one (ms); aprsc sends its banner at once. With one server, only ``loginTimeoutMs`` applies.
  var bannerTimeoutMs: Int64 = 5_000
  /// A session that the server closes sooner than this after its logresp counts as a refused login (the long
  /// ``refusalBackoff``), not as an outage (ms). A watchdog close is always an outage.
  var establishedMs: Int64 = 30_000
  /// Retry delays while the servers are unreachable: 1, 2, 4 s … (see ``OutageBackoff``).
  var outageBackoff = OutageBackoff()
  /// Retry delays after a refused login or a session closed right after its logresp: 5 s doubling to 5 min.
  var refusalBackoff = Backoff()

  /// Settings; see the properties.
  init(
    servers: [APRSISServer], login: String, passcode: Int, watchdogMs: Int64 = 60_000,
    outageBackoff: OutageBackoff = OutageBackoff(), refusalBackoff: Backoff = Backoff()
  ) {
    self.servers = servers
    self.login = login
    self.passcode = passcode
    self.watchdogMs = watchdogMs
    self.outageBackoff = outageBackoff
    self.refusalBackoff = refusalBackoff
  }

  /// Logged in with pass -1 by configuration: never transmits.
  var isReceiveOnly: Bool { passcode < 0 }
}

/// Where the connection is.
enum ConnectionState: Equatable, Sendable {
  /// Not started.
  case idle
  /// Waiting before the next connect (monotonic ms).
  case backingOff(until: Int64)
  /// A connect to this server is under way (DNS, TCP).
  case connecting(server: APRSISServer)
  /// Connected; the server speaks first.
  case awaitingBanner
  /// The login line was sent; waiting for `# logresp`.
  case awaitingLogresp
  /// Logged in: lines flow.
  case online(verified: Bool)
  /// Stopped for good.
  case stopped

  /// A one-word name for logs and /health.
  var name: String {
    switch self {
    case .idle: "idle"
    case .backingOff: "backingOff"
    case .connecting: "connecting"
    case .awaitingBanner: "awaitingBanner"
    case .awaitingLogresp: "awaitingLogresp"
    case .online: "online"
    case .stopped: "stopped"
    }
  }
}

/// What happened, as the connection's driver tells the state machine. Times are monotonic ms.
enum ConnectionEvent: Equatable, Sendable {
  /// Start connecting.
  case start(now: Int64)
  /// The TCP connection asked for by ``ConnectionAction/connect(server:)`` is up.
  case connected(now: Int64, address: String)
  /// It could not be made (every address of the server failed).
  case connectFailed(now: Int64, reason: String)
  /// A packet line arrived (anything but a `#` line).
  case lineReceived(now: Int64)
  /// A `#` line arrived (its bytes without the line ending).
  case comment([UInt8], now: Int64)
  /// Time passed.
  case tick(now: Int64)
  /// The connection ended without being asked to (closed by the server, a read or write error).
  case closed(now: Int64, reason: String)
  /// The wanted filter changed.
  case filterChanged(FilterLine, now: Int64)
  /// Stop for good.
  case stop(now: Int64)
}

/// One field of a log line.
struct LogField: Equatable, Sendable {
  var key: String
  var value: String
  init(_ key: String, _ value: String) {
    self.key = key
    self.value = value
  }
}

/// A log line the state machine asks for.
struct LogEntry: Equatable, Sendable {
  var level: LogLevel
  var message: String
  var fields: [LogField]
  init(_ level: LogLevel, _ message: String, _ fields: [LogField] = []) {
    self.level = level
    self.message = message
    self.fields = fields
  }
}

/// What the state machine asks the driver to do, in order.
enum ConnectionAction: Equatable, Sendable {
  /// Look the server up afresh, try each address in turn, then report ``ConnectionEvent/connected(now:address:)``
  /// or ``ConnectionEvent/connectFailed(now:reason:)``.
  case connect(server: APRSISServer)
  /// Write these bytes (a login or `#filter` line).
  case send([UInt8])
  /// Close the connection (and drop whatever waits to be sent on it). No ``ConnectionEvent/closed(now:reason:)``
  /// follows.
  case close(reason: String)
  /// The status changed: publish it.
  case report(ConnectionStatus)
  /// Log this.
  case log(LogEntry)
}

/// The connection's state as published (/health, meta table).
struct ConnectionStatus: Equatable, Sendable {
  /// ``ConnectionState/name``.
  var state: String = "idle"
  /// Logged in.
  var connected = false
  /// Logged in verified.
  var verified = false
  /// Nothing sent will get through: receive-only by configuration, or an unverified login.
  var receiveOnly = true
  /// The server of the current connection (`HOST:PORT`), while connecting or connected.
  var server: String?
  /// The address actually connected to.
  var address: String?
  /// Registered stations the wanted filter covers (its `g/` part).
  var filterStations = 0
  /// Length of the wanted filter's `#filter` line, CR LF included (at most 510).
  var filterBytes = 0
  /// Entries on that line (exact stations and prefixes, both parts).
  var filterEntries = 0
  /// Stations matched by an exact entry rather than a prefix (both parts).
  var filterExactStations = 0
  /// The stations whose own transmissions the wanted filter follows, and those it had no room for.
  var ownTransmissions = OwnTransmissionPlan.none
  /// Connections that ended (and were re-made or are being re-made).
  var reconnects = 0
  /// Why the last attempt to connect failed or the last connection ended (with the server), until the next
  /// login: what an operator needs when the listener is not online.
  var lastError: String?

  init() {}

  /// ACKs may be sent: logged in, verified, and not receive-only.
  var canTransmit: Bool { connected && verified && !receiveOnly }
}
