import APRS
import Store

/// Which APRS-IS port a connection is on.
public enum PortKind: String, Sendable, Equatable {
  /// The user-defined filter port (14580): the filter travels in the login line or a `#filter` line.
  case user
  /// The full feed (10152): everything arrives and the listener filters locally.
  case fullFeed
}

/// What ``FilterManager/reconcile(port:now:)`` asks the connection to do.
public enum FilterStep: Equatable, Sendable {
  /// The filter in effect is the one wanted (or an answer is still awaited).
  case none
  /// Send this `#filter` line and wait for its `# filter … active` answer.
  case sendLive(line: [UInt8], spec: String)
  /// The wanted filter cannot be set on this connection: reconnect (login line or other port).
  case reconnect(reason: String)
}

/// What an answer to `#filter` meant.
public enum FilterAnswer: Equatable, Sendable {
  /// It confirms the `#filter` line that was sent.
  case confirmed(spec: String)
  /// It echoes something else than what was sent: the filter in effect is unknown.
  case mismatch(expected: String, received: String)
  /// No `#filter` was waiting for an answer.
  case unexpected(spec: String)
}

/// The listener's APRS-IS filter: which stations it should hold, which one the connection has, and how to get from
/// one to the other (APRS-IS.md "Filters").
///
/// - The wanted filter is a ``FilterPlan`` of the live stations (plus `b/` entries with outgoing tracking).
/// - Up to what one `#filter` line holds (510 bytes) it is changed live on the open connection, and the
///   `# filter … active` answer is checked; no answer in time means the line was dropped.
/// - Beyond that, the connection is re-made with the filter in the login line.
/// - Beyond what a login line holds, the listener takes the full feed and filters locally.
/// - A set without stations still sends a filter, `g/LOGIN`, which passes nothing beyond what APRS-IS delivers to
///   the login call anyway, so a `#filter` line always has a spec to replace the previous one with.
///
/// Pure: no I/O, the caller passes the time.
public struct FilterManager: Sendable, Equatable {
  /// The login call (for the empty set's spec).
  public let login: String
  /// The filter wanted now.
  public private(set) var desired: FilterPlan
  /// The spec in effect on the current user-port connection (from its login line or a confirmed `#filter`); nil
  /// when not logged in on the user port.
  public private(set) var applied: String?
  /// The `#filter` spec sent and not yet confirmed, with the time it was sent.
  public private(set) var pendingSpec: String?
  /// When ``pendingSpec`` was sent (ms).
  public private(set) var pendingSince: Int64 = 0
  /// The spec put in the login line of the connection being made, until its logresp.
  private var loginSpec: String?

  /// A manager wanting no stations yet.
  public init(login: String) {
    self.login = login.uppercased()
    self.desired = FilterPlan(stations: [StationAddress]())
  }

  /// The plan for these live stations: `g/` entries for all, and `b/` entries too when `trackOutgoing` is on.
  /// Addresses that are not valid station addresses are left out.
  public static func plan(for stations: [LiveStation], trackOutgoing: Bool) -> FilterPlan {
    var addresses: [StationAddress] = []
    addresses.reserveCapacity(stations.count)
    for station in stations {
      if let address = try? StationAddress(parsing: station.address) { addresses.append(address) }
    }
    return FilterPlan(stations: addresses, tracking: trackOutgoing ? addresses : [])
  }

  /// The port the wanted filter needs.
  public var desiredPort: PortKind { desired.mode == .fullFeed ? .fullFeed : .user }

  /// The spec a plan is sent as (``FilterPlan/spec``, or `g/LOGIN` for an empty plan).
  public func effectiveSpec(_ plan: FilterPlan) -> String { plan.spec.isEmpty ? "g/" + login : plan.spec }

  /// Sets the wanted filter; false when it is the one already wanted.
  @discardableResult
  public mutating func setDesired(_ plan: FilterPlan) -> Bool {
    guard plan != desired else { return false }
    desired = plan
    return true
  }

  /// The filter for the login line of a new connection on `port` (nil: none, the full feed takes no filter),
  /// remembered until ``loggedIn()``.
  public mutating func loginFilter(port: PortKind) -> String? {
    applied = nil
    pendingSpec = nil
    guard port == .user, desired.mode != .fullFeed else {
      loginSpec = nil
      return nil
    }
    loginSpec = effectiveSpec(desired)
    return loginSpec
  }

  /// The logresp arrived: the login line's filter is in effect.
  public mutating func loggedIn() {
    applied = loginSpec
    pendingSpec = nil
  }

  /// The connection is gone: nothing is in effect any more.
  public mutating func disconnected() {
    applied = nil
    pendingSpec = nil
    loginSpec = nil
  }

  /// What to do so that the connection on `port` (logged in) carries the wanted filter.
  public mutating func reconcile(port: PortKind, now: Int64) -> FilterStep {
    guard pendingSpec == nil else { return .none }
    switch (port, desired.mode) {
    case (.fullFeed, .fullFeed):
      return .none
    case (.fullFeed, _):
      return .reconnect(reason: "the filter fits a login line again: leaving the full feed")
    case (.user, .fullFeed):
      return .reconnect(reason: "the filter is too long for a login line: switching to the full feed")
    case (.user, .live):
      let spec = effectiveSpec(desired)
      guard spec != applied else { return .none }
      pendingSpec = spec
      pendingSince = now
      return .sendLive(line: OutgoingLine.filter(spec), spec: spec)
    case (.user, .login):
      let spec = effectiveSpec(desired)
      guard spec != applied else { return .none }
      return .reconnect(
        reason: "the filter is too long for a #filter line: reconnecting with it in the login line")
    }
  }

  /// Checks a `# filter SPEC active` answer against the `#filter` line sent.
  public mutating func answer(spec: String) -> FilterAnswer {
    guard let pending = pendingSpec else { return .unexpected(spec: spec) }
    pendingSpec = nil
    guard spec == pending else {
      applied = nil
      return .mismatch(expected: pending, received: spec)
    }
    applied = spec
    return .confirmed(spec: spec)
  }

  /// True when a `#filter` line has waited for its answer for `timeoutMs` or longer: APRS-IS dropped it.
  public func answerOverdue(now: Int64, timeoutMs: Int64) -> Bool {
    pendingSpec != nil && now - pendingSince >= timeoutMs
  }

  /// When the `#filter` answer is due, if one is awaited.
  public func answerDeadline(timeoutMs: Int64) -> Int64? {
    pendingSpec == nil ? nil : pendingSince + timeoutMs
  }
}
