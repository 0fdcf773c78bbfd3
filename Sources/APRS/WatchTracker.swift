/// What is known of one watched call for one subscription, kept between packets (the store persists it, so a
/// restart neither forgets a silence nor reports it twice). Times are epoch ms: silences last hours and span
/// restarts, so they cannot be on a process's monotonic clock.
public struct WatchState: Hashable, Sendable {
  /// When the call was last heard, or when the watch began if it has not been heard since (ms).
  public var lastHeardAt: Int64
  /// Whether the silence since ``lastHeardAt`` was already reported.
  public var silenceReported: Bool
  /// When the call last reported an emergency (ms), nil when it has not, or a Mic-E report of another code has
  /// ended it since: a new emergency is one reported at least ``WatchTracker/emergencyWindowMs`` after it.
  public var emergencyAt: Int64?

  /// A watch that begins at `now` (ms): silent from then on, no emergency.
  public init(startingAt now: Int64, silenceReported: Bool = false, emergencyAt: Int64? = nil) {
    self.lastHeardAt = now
    self.silenceReported = silenceReported
    self.emergencyAt = emergencyAt
  }
}

/// What a watch reports (each one push).
public enum WatchEvent: Hashable, Sendable {
  /// Heard again after `silence` ms (at least `heardAfter`).
  case heard(StationReport, silenceMs: Int64)
  /// Silent for `silenceMs` (at least `silentFor`): reported once per silence.
  case silent(silenceMs: Int64)
  /// Reported an emergency (``StationReport/emergencyIn`` says where) after none for
  /// ``WatchTracker/emergencyWindowMs``.
  case emergency(StationReport)
}

/// The watch rules as a pure state machine: the state goes in with a packet or a clock tick, the next state and
/// the events to push come out (docs/design.md: data in the states, decisions returned).
///
/// - heard: a packet from the call after at least `heardAfter` s without one (counted from the last packet, or
///   from the watch's start) is one `heard` event; any packet ends a silence.
/// - silent: once the call has been silent `silentFor` s, one `silent` event, and no other until it is heard
///   and falls silent again.
/// - emergency: a packet that reports an emergency anywhere (``StationReport/emergencyIn``: the Mic-E code 000,
///   or `EMERGENCY` in a position comment, status, object, item or message) is one `emergency` event, unless the
///   call reported one less than ``emergencyWindowMs`` before: a repeat within the window (a tracker beaconing
///   `EMERGENCY` every minute, or sending it in its status and its positions alike) is the same emergency, and
///   each repeat extends the window. A Mic-E report with another message code ends the emergency (the code is the
///   tracker's state), so the next one is new at once. Xastir likewise alarms once per station in 30 minutes
///   (`src/db.c`); the window here is the 2 h that subscription entries repeat within.
///
/// A clock step backwards never reports anything (a negative silence is none, a repeat stays in its window).
public enum WatchTracker {
  /// How long after an emergency report another one is the same emergency (ms): 2 h, the window in which a
  /// repeated bulletin or alert is one entry.
  public static let emergencyWindowMs: Int64 = 2 * 3_600_000

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
    if report.emergency {
      let repeated = state.emergencyAt.map { now - $0 < emergencyWindowMs } ?? false
      if rule.emergency, !repeated { events.append(.emergency(report)) }
      next.emergencyAt = max(now, state.emergencyAt ?? now)
    } else if report.kind == .micE {
      next.emergencyAt = nil
    }
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
