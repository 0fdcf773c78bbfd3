import APRS

/// What ``FilterManager/reconcile(now:)`` asks the connection to do.
enum FilterStep: Equatable, Sendable {
  /// The filter in effect is the one wanted (or an answer is still awaited).
  case none
  /// Send this `#filter` line and wait for its `# filter … active` answer.
  case send(line: [UInt8], spec: String)
}

/// What an answer to `#filter` meant.
enum FilterAnswer: Equatable, Sendable {
  /// It confirms the `#filter` line that was sent.
  case confirmed(spec: String)
  /// It echoes something else than what was sent (nor aprsc's 255-byte quote of it): the filter in effect is
  /// unknown.
  case mismatch(expected: String, received: String)
  /// No `#filter` was waiting for an answer.
  case unexpected(spec: String)
}

/// The listener's APRS-IS filter: the one line it wants, the one the connection has, and how to get from one to
/// the other (docs/design.md "The filter at any scale").
///
/// - The wanted filter is a ``FilterLine`` (``FilterPlanner/plan(maximumLineLength:)``): at most 510 bytes with
///   CR LF at any number of stations, so it always goes out as one `#filter` line on the open connection, and a
///   change of the station set never needs a reconnect. A new connection carries it in its login line.
/// - A `#filter` line's `# filter … active` answer is checked; no answer in time means the line was lost.
/// - A set without stations still sends a filter, `g/LOGIN`, which passes nothing beyond what APRS-IS delivers to
///   the login call anyway, so a `#filter` line always has a spec to replace the previous one with.
///
/// Pure: no I/O, the caller passes the time.
struct FilterManager: Sendable, Equatable {
  /// The login call (for the empty set's spec).
  let login: String
  /// The filter wanted now.
  private(set) var desired = FilterLine.empty
  /// The spec in effect on the current connection (from its login line or a confirmed `#filter`); nil when not
  /// logged in.
  private(set) var applied: String?
  /// The `#filter` spec sent and not yet confirmed.
  private(set) var pendingSpec: String?
  /// When ``pendingSpec`` was sent (ms).
  private(set) var pendingSince: Int64 = 0
  /// The spec put in the login line of the connection being made, until its logresp.
  private var loginSpec: String?

  /// A manager wanting no stations yet.
  init(login: String) {
    self.login = login.uppercased()
  }

  /// The spec a line is sent as: its ``FilterLine/spec``, or `g/LOGIN` for a line without entries.
  func effectiveSpec(_ line: FilterLine) -> String {
    line.entryCount == 0 ? "g/" + login : line.spec
  }

  /// The length of the `#filter` line actually sent for the wanted filter, CR LF included.
  var desiredLineBytes: Int { effectiveSpec(desired).utf8.count + 10 }

  /// Sets the wanted filter; false when it is the one already wanted.
  @discardableResult
  mutating func setDesired(_ line: FilterLine) -> Bool {
    guard line != desired else { return false }
    desired = line
    return true
  }

  /// The filter for the login line of a new connection, remembered until ``loggedIn()``.
  mutating func loginFilter() -> String {
    applied = nil
    pendingSpec = nil
    let spec = effectiveSpec(desired)
    loginSpec = spec
    return spec
  }

  /// The logresp arrived: the login line's filter is in effect.
  mutating func loggedIn() {
    applied = loginSpec
    pendingSpec = nil
  }

  /// The connection is gone: nothing is in effect any more.
  mutating func disconnected() {
    applied = nil
    pendingSpec = nil
    loginSpec = nil
  }

  /// What to do so that the connection (logged in) carries the wanted filter: at most one `#filter` line
  /// waits for its answer at a time, and a line is sent only when the wanted spec differs from the one in effect.
  mutating func reconcile(now: Int64) -> FilterStep {
    guard pendingSpec == nil else { return .none }
    let spec = effectiveSpec(desired)
    guard spec != applied else { return .none }
    pendingSpec = spec
    pendingSince = now
    return .send(line: OutgoingLine.filter(spec), spec: spec)
  }

  /// Checks a `# filter SPEC active` answer against the `#filter` line sent. aprsc quotes at most the first 255
  /// bytes of a spec (``quotedAnswer(for:)``): an answer that is exactly that cut confirms the whole line, and
  /// ``applied`` is then the spec sent, not the cut.
  mutating func answer(spec: String) -> FilterAnswer {
    guard let pending = pendingSpec else { return .unexpected(spec: spec) }
    pendingSpec = nil
    guard Self.answerConfirms(spec, sent: pending) else {
      applied = nil
      return .mismatch(expected: pending, received: spec)
    }
    applied = pending
    return .confirmed(spec: pending)
  }

  /// True when a `#filter` line has waited for its answer for `timeoutMs` or longer: APRS-IS lost it.
  func answerOverdue(now: Int64, timeoutMs: Int64) -> Bool {
    pendingSpec != nil && now - pendingSince >= timeoutMs
  }

  /// When the `#filter` answer is due, if one is awaited.
  func answerDeadline(timeoutMs: Int64) -> Int64? {
    pendingSpec == nil ? nil : pendingSince + timeoutMs
  }
}
