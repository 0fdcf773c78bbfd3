import APRS
import Logging
import Platform
import Store

/// The sender thread: the thin shell around ``SendScheduler`` for messages sent through `/v1/send`.
///
/// It watches the database as the registration watcher does (`PRAGMA data_version`, looked at when woken: the
/// responder's ``CompanionFiles/ListenerWake/sends`` after a `/v1/send` commit, or the login's state changed; and every
/// ``pollMs`` anyway), and on a change, when the login's state changed, or when the
/// next copy or expiry is due, it reads the due sends (``Database/dueSends(now:canTransmit:limit:)``), lets the
/// scheduler decide, records every decision in ONE write transaction (copies counted with their next due time,
/// schedules, expiries re-stamped with a `sendFailed` push) and only then hands the copies' lines to the
/// connection: a transmission is recorded before it is written, so a crash can lose a copy but never cause a
/// burst, and after a restart the schedule resumes from the database. The line goes out on the listener's
/// verified login; with none up, copies wait (expiries do not).
///
/// Every copy passes the one ``TransmitBudget`` (`[send] transmitBudgetPerMinute`, on the monotonic clock): past
/// it the due copies wait their turn, the one due first going first, and their schedules move by the wait (none
/// is dropped, none loses a copy). While copies wait the budget is "full": ``budgetFull`` says so to the status
/// the listener publishes (`/health`), and each copy that waited is counted (`/metrics`).
final class OutboundSender: @unchecked Sendable {
  /// Sends read per query.
  static let batchLimit = 500

  let database: Database
  let scheduler: SendScheduler
  /// How often the database is looked at without a wake, and the longest wait (ms).
  let pollMs: Int64
  let logger: Logger
  /// Whether a verified login is up now (copies can be written).
  private let canTransmit: @Sendable () -> Bool
  /// Hands recorded copies to the connection.
  private let transmit: @Sendable ([[UInt8]]) -> Void
  /// Wakes the push sender: these stations got a `sendFailed` push.
  private let pushesQueued: @Sendable ([String]) -> Void
  private let clock: EpochClock
  /// The clock of the budget's window (monotonic ms).
  private let monotonic: @Sendable () -> Int64
  /// Told when the budget becomes full (copies wait) or has room again.
  private let budgetChanged: @Sendable (Bool) -> Void
  private var budget: TransmitBudget
  /// The sends whose due copy the budget holds back.
  private var waiting: Set<Int64> = []
  private var version: Int64?
  /// Whether the budget holds the copies the previous listener recorded in the last minute.
  private var seeded = false
  private var wasTransmitting = false
  private var nextEvent: Int64?
  /// Whether copies wait for the budget now (as last told through `budgetChanged`).
  private(set) var budgetFull = false
  /// Steps of the wall clock (the schedule's times are wall-clock times): the sends in flight move with them; nil
  /// follows none (tests that move ``clock`` by hand).
  private var steps: WallClockSteps?
  /// The newest send at the previous look (the sends there before a step found now).
  private var newestSendID: Int64 = 0
  /// The limits a net's renewal is sent under (the station's sends per minute and in flight, everyone's per
  /// minute: `[send]`); nil renews nothing.
  let renewalLimits: SendLimits?

  init(
    database: Database, scheduler: SendScheduler, pollMs: Int64, logger: Logger,
    canTransmit: @escaping @Sendable () -> Bool, transmit: @escaping @Sendable ([[UInt8]]) -> Void,
    pushesQueued: @escaping @Sendable ([String]) -> Void = { _ in },
    budget: TransmitBudget = TransmitBudget(perMinute: 60),
    budgetChanged: @escaping @Sendable (Bool) -> Void = { _ in },
    clock: @escaping EpochClock = epochMilliseconds,
    monotonic: @escaping @Sendable () -> Int64 = monotonicMilliseconds, followsClockSteps: Bool = false,
    renewalLimits: SendLimits? = nil
  ) {
    steps = followsClockSteps ? WallClockSteps() : nil
    self.renewalLimits = renewalLimits
    self.database = database
    self.scheduler = scheduler
    self.pollMs = pollMs
    self.logger = logger
    self.canTransmit = canTransmit
    self.transmit = transmit
    self.pushesQueued = pushesQueued
    self.budget = budget
    self.budgetChanged = budgetChanged
    self.clock = clock
    self.monotonic = monotonic
  }

  /// Runs until `wake` is stopped; looks again when it is signalled.
  func run(wake: WakeSignal) {
    var failing = false
    repeat {
      do throws(StoreError) {
        try check()
        failing = false
      } catch {
        if !failing { logger.warn("sender: cannot read the sends; retrying", ["error": error.description]) }
        failing = true
      }
      var wait = pollMs
      if let nextEvent { wait = min(wait, max(1, nextEvent - clock())) }
      if wake.wait(timeoutMs: wait) == .stopped { return }
    } while true
  }

  /// Looks at the database when something may have changed (another connection committed, the login's state
  /// changed, the next event is due) and handles what is due.
  func check() throws(StoreError) {
    if !seeded { try seedBudget() }
    try followWallClockSteps()
    let now = clock()
    let transmitting = canTransmit()
    let dataVersion = try database.dataVersion()
    let due = nextEvent.map { now >= $0 } ?? false
    guard dataVersion != version || transmitting != wasTransmitting || due else { return }
    version = dataVersion
    wasTransmitting = transmitting
    if transmitting { try renewNets(now: now) }
    try pass(now: now, canTransmit: transmitting)
    let after = clock()
    var next = try database.nextSendEvent(now: after, canTransmit: transmitting)
    if transmitting, renewalLimits != nil,
      let renewal = try database.nextNetRenewal(activeSince: after - Database.netActiveWindowMs)
    {
      next = min(next ?? renewal, renewal)
    }
    if waiting.isEmpty {
      nextEvent = next
    } else {
      // Due copies wait for the budget: look again when it has room (sooner for an event still to come).
      let room = after + budget.waitMs(now: monotonic())
      nextEvent = next.map { $0 > after ? min($0, room) : room } ?? room
    }
  }

  /// Renews the nets' memberships due at `now` whose station was active in the last day
  /// (``Database/netActiveWindowMs``): each renewal a send of the station (the service's silent join), transmitted
  /// by the pass that follows.
  private func renewNets(now: Int64) throws(StoreError) {
    guard let limits = renewalLimits else { return }
    for renewal in try database.dueNetRenewals(now: now, activeSince: now - Database.netActiveWindowMs) {
      let creation = try database.renewNet(renewal, limits: limits, now: now)
      let room = renewal.rule.room
      switch creation {
      case .created?:
        logger.info("net membership renewed", ["station": renewal.station, "room": room.description])
      case nil:
        break
      case let refused?:
        logger.warn(
          "net renewal waits for the send limits",
          ["station": renewal.station, "room": room.description, "refusal": "\(refused)"])
      }
    }
  }

  /// A step of the wall clock since the last look moves every send in flight by as much (their copies stay 31 s
  /// apart, their expiry as far away: `Database.shiftPendingSends`). Sends made after the step were stamped by
  /// it; those made between the previous look and the step (within `pollMs`) move wrongly, by the step.
  private func followWallClockSteps() throws(StoreError) {
    guard steps != nil else { return }
    let step = steps!.observe(wallMs: clock(), monotonicMs: monotonic())
    if step != 0 {
      let moved = try database.shiftPendingSends(byMs: step, throughID: newestSendID)
      logger.warn(
        "the wall clock stepped: the sends in flight keep their schedule",
        ["stepMs": String(step), "sends": String(moved)])
      nextEvent = nextEvent.map { $0 + step }
    }
    newestSendID = try database.newestSendID()
  }

  /// Puts the copies recorded in the last minute (by a listener before this one) into the budget, each at its
  /// age on the monotonic clock, so a restart does not open a fresh minute.
  private func seedBudget() throws(StoreError) {
    let now = clock()
    let mono = monotonic()
    for at in try database.recentTransmissions(since: now - budget.windowMs + 1) where at <= now {
      budget.spend(1, now: mono - (now - at))
    }
    seeded = true
  }

  /// One pass at `now`: every due send decided, recorded, and its copy handed over. Returns the copies written.
  @discardableResult
  func pass(now: Int64, canTransmit: Bool) throws(StoreError) -> Int {
    var written = 0
    var stillWaiting: Set<Int64> = []
    // Each round changes every row it read but the ones waiting for the budget (see SendScheduler.plan), and a
    // round that leaves any waiting is the last, so rounds end; bounded all the same.
    for _ in 0..<100 {
      let sends = try database.dueSends(now: now, canTransmit: canTransmit, limit: Self.batchLimit)
      guard !sends.isEmpty else { break }
      let allowance = budget.available(now: monotonic())
      let plan = scheduler.plan(
        sends, now: now, canTransmit: canTransmit, allowance: allowance, waiting: waiting)
      let (recorded, finished) = try database.recordSendSchedule(plan.changes, now: now)
      // Recorded (and on disk): now the lines may go out.
      let lines = recorded.compactMap { plan.lines[$0] }
      if !lines.isEmpty {
        budget.spend(lines.count, now: monotonic())
        transmit(lines)
      }
      written += lines.count
      stillWaiting.formUnion(plan.waiting)
      log(
        sends, recorded: Set(recorded), finished: finished,
        newlyWaiting: plan.waiting.filter { !waiting.contains($0) })
      let failed = finished.filter { $0.state == .rejected || $0.state == .expired }.map(\.station)
      if !failed.isEmpty { pushesQueued(Array(Set(failed)).sorted()) }
      if sends.count < Self.batchLimit || !plan.waiting.isEmpty { break }
    }
    // Rows not read this pass (gone, answered, cancelled) stop waiting; so do those written.
    waiting = stillWaiting
    if budgetFull != !waiting.isEmpty {
      budgetFull = !waiting.isEmpty
      if budgetFull {
        logger.warn(
          "sender: the transmit budget is spent; due copies wait their turn",
          ["budgetPerMinute": String(budget.perMinute), "waiting": String(waiting.count)])
      } else {
        logger.info("sender: the transmit budget has room again")
      }
      budgetChanged(budgetFull)
    }
    return written
  }

  private func log(
    _ sends: [InFlightSend], recorded: Set<Int64>, finished: [FinishedSend], newlyWaiting: [Int64]
  ) {
    let newly = Set(newlyWaiting)
    for send in sends where newly.contains(send.id) {
      logger.debug(
        "message copy waits for the transmit budget",
        [
          "station": send.station, "to": send.addressee, "msgno": send.msgno ?? "-",
          "copy": String(send.transmissions + 1),
        ])
    }
    for send in sends where recorded.contains(send.id) {
      let what = send.kind == .bulletin ? "bulletin" : "message"
      logger.info(
        send.transmissions == 0 ? "\(what) sent" : "\(what) sent again",
        [
          "station": send.station, "to": send.addressee, "msgno": send.msgno ?? "-",
          "copy": String(send.transmissions + 1),
        ])
    }
    for done in finished {
      logger.info(
        done.kind == .bulletin
          ? "bulletin \(done.state.rawValue): its schedule is over"
          : "message \(done.state.rawValue): no answer after the last copy",
        ["station": done.station, "to": done.addressee, "msgno": done.msgno ?? "-"])
    }
  }
}
