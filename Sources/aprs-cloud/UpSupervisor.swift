/// The pure part of `aprs-cloud up`: which children run, when a dead one comes back, how the stack
/// stops.
///
/// It performs no I/O and reads no clock: the shell (`UpRunner`) feeds it events with the current
/// monotonic time in seconds and carries out the actions it returns (spawn, signal, log, exit), so
/// every decision is testable with made-up times.
struct UpSupervisor {
  /// When a dead child is started again. A child that ran at least `crashLoopWindow` seconds is
  /// restarted at once: a listener that crashed after running a while must be back on APRS-IS within
  /// about a second, because senders give up after a few tries. Only a crash loop (deaths within
  /// `crashLoopWindow` of starting) backs off: `initialDelay`, doubled after each further quick death up
  /// to `maximumDelay`. After SIGTERM a child has `stopTimeout` seconds before SIGKILL.
  struct Policy: Equatable, Sendable {
    var initialDelay = 0.5
    var maximumDelay = 10.0
    var crashLoopWindow = 5.0
    var stopTimeout = 5.0
  }

  /// Where one child is in its life.
  enum ChildState: Equatable, Sendable {
    /// Not started yet, or removed from the schedule by a shutdown before it could start again.
    case idle
    /// The spawn action went out; the shell has not yet reported the pid.
    case spawning
    /// Alive since `since`.
    case running(pid: Int32, since: Double)
    /// Dead; to be started again at `until`.
    case backingOff(until: Double)
    /// SIGTERM sent; SIGKILL (to its whole process group) at `deadline` if it is still alive.
    case stopping(pid: Int32, deadline: Double)
    /// SIGKILL sent; waiting to reap it.
    case killed(pid: Int32)
    /// Gone for good (after a shutdown).
    case stopped
  }

  /// What the shell must do.
  enum Action: Equatable, Sendable {
    /// Start child number `child` (an index into `names`) and report back with `spawned` or
    /// `spawnFailed`.
    case spawn(child: Int)
    /// Send `signal` to the process `pid`, or to its whole process group when `group` is true.
    case signal(pid: Int32, signal: Signal, group: Bool)
    /// Write a line for the operator.
    case log(String)
    /// Every child is gone after a shutdown: exit with this status.
    case exit(Int32)
  }

  /// The two signals the supervisor sends.
  enum Signal: Equatable, Sendable {
    case terminate
    case kill
  }

  /// The children's names, in start order (they are also their identities).
  let names: [String]
  let policy: Policy
  private(set) var states: [ChildState]
  /// Quick deaths in a row per child (each within `crashLoopWindow` of its start), for the backoff.
  private(set) var failures: [Int]
  /// Set once a shutdown began: nothing starts again.
  private(set) var shuttingDown = false
  private var exitSent = false

  init(names: [String], policy: Policy = Policy()) {
    self.names = names
    self.policy = policy
    states = Array(repeating: .idle, count: names.count)
    failures = Array(repeating: 0, count: names.count)
  }

  /// Starts every child, in order.
  mutating func start(now: Double) -> [Action] {
    guard !shuttingDown else { return [] }
    var actions: [Action] = []
    for index in names.indices where states[index] == .idle {
      states[index] = .spawning
      actions.append(.spawn(child: index))
    }
    return actions
  }

  /// The shell started child `child` as process `pid`.
  mutating func spawned(child: Int, pid: Int32, now: Double) -> [Action] {
    if shuttingDown {
      // A shutdown arrived between the spawn action and its result: stop it at once.
      states[child] = .stopping(pid: pid, deadline: now + policy.stopTimeout)
      return [.signal(pid: pid, signal: .terminate, group: false)]
    }
    states[child] = .running(pid: pid, since: now)
    return []
  }

  /// The shell could not start child `child` (no such file, …): treated like an immediate death.
  mutating func spawnFailed(child: Int, reason: String, now: Double) -> [Action] {
    guard !shuttingDown else {
      states[child] = .stopped
      return finishIfAllStopped()
    }
    return scheduleRestart(child: child, now: now, ranFor: 0, what: "could not be started (\(reason))")
  }

  /// A process was reaped with the raw `waitpid` status. Pids that are not children are ignored.
  mutating func exited(pid: Int32, status: Int32, now: Double) -> [Action] {
    guard let child = index(of: pid) else { return [] }
    let how = UpExitStatus(raw: status).description
    // Whatever is left of its process group (nginx's workers after a crash of the master) goes too.
    var actions: [Action] = [.signal(pid: pid, signal: .kill, group: true)]
    switch states[child] {
    case .running(_, let since):
      if shuttingDown {
        states[child] = .stopped
        actions.append(.log("\(names[child]) exited (\(how))"))
      } else {
        actions += scheduleRestart(child: child, now: now, ranFor: now - since, what: "exited (\(how))")
      }
    case .stopping, .killed:
      states[child] = .stopped
      actions.append(.log("\(names[child]) stopped (\(how))"))
    default:
      break
    }
    return actions + finishIfAllStopped()
  }

  /// Ctrl-C or SIGTERM: SIGTERM to every live child, cancel pending restarts.
  mutating func shutdown(now: Double) -> [Action] {
    guard !shuttingDown else { return [] }
    shuttingDown = true
    var actions: [Action] = []
    for index in names.indices {
      switch states[index] {
      case .running(let pid, _):
        states[index] = .stopping(pid: pid, deadline: now + policy.stopTimeout)
        actions.append(.signal(pid: pid, signal: .terminate, group: false))
      case .idle, .backingOff:
        states[index] = .stopped
      case .spawning, .stopping, .killed, .stopped:
        break
      }
    }
    return actions + finishIfAllStopped()
  }

  /// Time passed: restarts that are due, SIGKILLs whose deadline passed.
  mutating func tick(now: Double) -> [Action] {
    var actions: [Action] = []
    for index in names.indices {
      switch states[index] {
      case .backingOff(let until) where until <= now && !shuttingDown:
        states[index] = .spawning
        actions.append(.log("starting \(names[index]) again"))
        actions.append(.spawn(child: index))
      case .stopping(let pid, let deadline) where deadline <= now:
        states[index] = .killed(pid: pid)
        actions.append(
          .log("\(names[index]) did not stop within \(format(policy.stopTimeout)) s; killing it"))
        actions.append(.signal(pid: pid, signal: .kill, group: true))
      default:
        break
      }
    }
    return actions
  }

  /// The earliest time `tick` has something to do, or nil when it has nothing pending.
  var nextDeadline: Double? {
    states.compactMap { state -> Double? in
      switch state {
      case .backingOff(let until): shuttingDown ? nil : until
      case .stopping(_, let deadline): deadline
      default: nil
      }
    }.min()
  }

  /// The pid of child `child` while it is alive.
  func pid(of child: Int) -> Int32? {
    switch states[child] {
    case .running(let pid, _), .stopping(let pid, _), .killed(let pid): pid
    default: nil
    }
  }

  /// The restart delay after `failures` deaths in a row (1 for the first).
  func delay(afterFailures failures: Int) -> Double {
    var delay = policy.initialDelay
    var count = 1
    while count < failures && delay < policy.maximumDelay {
      delay *= 2
      count += 1
    }
    return min(delay, policy.maximumDelay)
  }

  private func index(of pid: Int32) -> Int? {
    names.indices.first { self.pid(of: $0) == pid }
  }

  private mutating func scheduleRestart(child: Int, now: Double, ranFor: Double, what: String) -> [Action] {
    if ranFor >= policy.crashLoopWindow {
      failures[child] = 0
      states[child] = .spawning
      return [.log("\(names[child]) \(what); restarting now"), .spawn(child: child)]
    }
    failures[child] += 1
    let delay = delay(afterFailures: failures[child])
    states[child] = .backingOff(until: now + delay)
    return [.log("\(names[child]) \(what); restarting in \(format(delay)) s")]
  }

  private mutating func finishIfAllStopped() -> [Action] {
    guard shuttingDown, !exitSent, states.allSatisfy({ $0 == .stopped }) else { return [] }
    exitSent = true
    return [.exit(0)]
  }

  private func format(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
  }
}

/// A `waitpid` status, decoded (the `WIFEXITED` family are C macros Swift cannot import).
enum UpExitStatus: Equatable, CustomStringConvertible {
  case exited(Int32)
  case signaled(Int32)

  init(raw: Int32) {
    let signal = raw & 0x7F
    self = signal == 0 ? .exited((raw >> 8) & 0xFF) : .signaled(signal)
  }

  var description: String {
    switch self {
    case .exited(let code): "status \(code)"
    case .signaled(let signal): "signal \(signal)"
    }
  }
}
