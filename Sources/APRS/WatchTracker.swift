/// What is known of one watched call for one subscription, kept between packets (the store persists it, so a
/// restart neither forgets a silence nor reports it twice). Times are epoch ms: silences last hours and span
/// restarts, so they cannot be on a process's monotonic clock.
public struct WatchState: Hashable, Sendable {
  /// When the call was last heard, or when the watch began if it has not been heard since (ms).
  public var lastHeardAt: Int64
  /// Whether the silence since ``lastHeardAt`` was already reported.
  public var silenceReported: Bool
  /// The last Mic-E report's emergency flag.
  public var micEEmergency: Bool
  /// The last status report's emergency flag.
  public var statusEmergency: Bool

  /// A watch that begins at `now` (ms): silent from then on, no emergency.
  public init(
    startingAt now: Int64, silenceReported: Bool = false, micEEmergency: Bool = false,
    statusEmergency: Bool = false
  ) {
    self.lastHeardAt = now
    self.silenceReported = silenceReported
    self.micEEmergency = micEEmergency
    self.statusEmergency = statusEmergency
  }

  /// Whether the station is in an emergency now.
  public var inEmergency: Bool { micEEmergency || statusEmergency }
}

/// What a watch reports (each one push).
public enum WatchEvent: Hashable, Sendable {
  /// Heard again after `silence` ms (at least `heardAfter`).
  case heard(StationReport, silenceMs: Int64)
  /// Silent for `silenceMs` (at least `silentFor`): reported once per silence.
  case silent(silenceMs: Int64)
  /// Went from no emergency to an emergency.
  case emergency(StationReport)
}

/// The watch rules as a pure state machine: the state goes in with a packet or a clock tick, the next state and
/// the events to push come out (DESIGN.md: data in the states, decisions returned).
///
/// - heard: a packet from the call after at least `heardAfter` s without one (counted from the last packet, or
///   from the watch's start) is one `heard` event; any packet ends a silence.
/// - silent: once the call has been silent `silentFor` s, one `silent` event, and no other until it is heard
///   and falls silent again.
/// - emergency: one `emergency` event each time the station goes from no emergency to an emergency (Mic-E code
///   000 or a status with `EMERGENCY`); a Mic-E packet sets the Mic-E flag, a status the status flag, others
///   neither. A clock step backwards never reports anything (a negative silence is none).
public enum WatchTracker {
  /// A packet from the watched call at `now` (ms).
  public static func heard(
    _ report: StationReport, rule: WatchRule, state: WatchState, now: Int64
  ) -> (WatchState, [WatchEvent]) {
    var next = state
    var events: [WatchEvent] = []
    let silence = now - state.lastHeardAt
    if let heardAfter = rule.heardAfter, silence >= Int64(heardAfter) * 1000 {
      events.append(.heard(report, silenceMs: silence))
    }
    if now > state.lastHeardAt { next.lastHeardAt = now }
    next.silenceReported = false
    switch report.kind {
    case .micE: next.micEEmergency = report.emergency
    case .status: next.statusEmergency = report.emergency
    case .position, .other: break
    }
    if rule.emergency, next.inEmergency, !state.inEmergency { events.append(.emergency(report)) }
    return (next, events)
  }

  /// The clock at `now` (ms): reports a silence that has lasted `silentFor`.
  public static func tick(rule: WatchRule, state: WatchState, now: Int64) -> (WatchState, [WatchEvent]) {
    guard let silentFor = rule.silentFor, !state.silenceReported else { return (state, []) }
    let silence = now - state.lastHeardAt
    guard silence >= Int64(silentFor) * 1000 else { return (state, []) }
    var next = state
    next.silenceReported = true
    return (next, [.silent(silenceMs: silence)])
  }

  /// When ``tick(rule:state:now:)`` would next report (ms), nil when it never will: what a caller sleeps until.
  public static func nextTick(rule: WatchRule, state: WatchState) -> Int64? {
    guard let silentFor = rule.silentFor, !state.silenceReported else { return nil }
    return state.lastHeardAt + Int64(silentFor) * 1000
  }
}
