import Logging
import Platform
import Store

/// The sender thread: the thin shell around ``SendScheduler`` for messages sent through `/v1/send`.
///
/// It watches the database as the registration watcher does (`PRAGMA data_version`, every ``pollMs``: a new
/// send from the responder is one more commit), and on a change, when the login's state changed, or when the
/// next copy or expiry is due, it reads the due sends (``Database/dueSends(now:canTransmit:limit:)``), lets the
/// scheduler decide, records every decision in ONE write transaction (copies counted with their next due time,
/// schedules, expiries re-stamped with a `sendFailed` push) and only then hands the copies' lines to the
/// connection: a transmission is recorded before it is written, so a crash can lose a copy but never cause a
/// burst, and after a restart the schedule resumes from the database. The line goes out on the listener's
/// verified login; with none up, copies wait (expiries do not).
final class OutboundSender: @unchecked Sendable {
  /// Sends read per query.
  static let batchLimit = 500

  let database: Database
  let scheduler: SendScheduler
  /// How often the database is looked at, and the longest wait (ms).
  let pollMs: Int64
  let logger: Logger
  /// Whether a verified login is up now (copies can be written).
  private let canTransmit: @Sendable () -> Bool
  /// Hands recorded copies to the connection.
  private let transmit: @Sendable ([[UInt8]]) -> Void
  /// Wakes the push sender: these stations got a `sendFailed` push.
  private let pushesQueued: @Sendable ([String]) -> Void
  private let clock: EpochClock
  private var version: Int64?
  private var wasTransmitting = false
  private var nextEvent: Int64?

  init(
    database: Database, scheduler: SendScheduler, pollMs: Int64, logger: Logger,
    canTransmit: @escaping @Sendable () -> Bool, transmit: @escaping @Sendable ([[UInt8]]) -> Void,
    pushesQueued: @escaping @Sendable ([String]) -> Void = { _ in },
    clock: @escaping EpochClock = epochMilliseconds
  ) {
    self.database = database
    self.scheduler = scheduler
    self.pollMs = pollMs
    self.logger = logger
    self.canTransmit = canTransmit
    self.transmit = transmit
    self.pushesQueued = pushesQueued
    self.clock = clock
  }

  /// Runs until `stopped` is set.
  func run(stopped: Latch) {
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
      if stopped.wait(timeoutMs: wait) { return }
    } while true
  }

  /// Looks at the database when something may have changed (another connection committed, the login's state
  /// changed, the next event is due) and handles what is due.
  func check() throws(StoreError) {
    let now = clock()
    let transmitting = canTransmit()
    let dataVersion = try database.dataVersion()
    let due = nextEvent.map { now >= $0 } ?? false
    guard dataVersion != version || transmitting != wasTransmitting || due else { return }
    version = dataVersion
    wasTransmitting = transmitting
    try pass(now: now, canTransmit: transmitting)
    nextEvent = try database.nextSendEvent(now: clock(), canTransmit: transmitting)
  }

  /// One pass at `now`: every due send decided, recorded, and its copy handed over. Returns the copies written.
  @discardableResult
  func pass(now: Int64, canTransmit: Bool) throws(StoreError) -> Int {
    var written = 0
    // Each round changes every row it read (see SendScheduler.plan), so rounds end; bounded all the same.
    for _ in 0..<100 {
      let sends = try database.dueSends(now: now, canTransmit: canTransmit, limit: Self.batchLimit)
      guard !sends.isEmpty else { break }
      let plan = scheduler.plan(sends, now: now, canTransmit: canTransmit)
      let (recorded, finished) = try database.recordSendSchedule(plan.changes, now: now)
      // Recorded (and on disk): now the lines may go out.
      let lines = recorded.compactMap { plan.lines[$0] }
      if !lines.isEmpty { transmit(lines) }
      written += lines.count
      log(sends, recorded: Set(recorded), finished: finished)
      let failed = finished.filter { $0.state != .acked }.map(\.station)
      if !failed.isEmpty { pushesQueued(Array(Set(failed)).sorted()) }
      if sends.count < Self.batchLimit { break }
    }
    return written
  }

  private func log(_ sends: [InFlightSend], recorded: Set<Int64>, finished: [FinishedSend]) {
    for send in sends where recorded.contains(send.id) {
      logger.info(
        send.transmissions == 0 ? "message sent" : "message sent again",
        [
          "station": send.station, "to": send.addressee, "msgno": send.msgno,
          "copy": String(send.transmissions + 1),
        ])
    }
    for done in finished {
      logger.info(
        "message \(done.state.rawValue): no answer after the last copy",
        ["station": done.station, "to": done.addressee, "msgno": done.msgno])
    }
  }
}
