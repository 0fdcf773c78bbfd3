import Logging
import Platform
import Store

/// `ackPolicy:"device"` (docs/protocol.md "Station settings"): sends the ACKs of messages that a device of their station
/// pulled. The pull marks them in the transaction that reads them (`Database.sync`, in the responder); this worker
/// notices the commit through `PRAGMA data_version` (looked at when the responder's ``CompanionFiles/ListenerWake/deviceAcks``
/// or a change of the login's state wakes it, and every `pollMs` anyway, as the registration watcher does) and,
/// while ACKs may be sent, takes the marked ones in one transaction (``Database/takePulledDeviceAcks(now:minIntervalMs:limit:)``:
/// the 30 s rule applied, the rows marked handed on) and hands the lines to the connection after that commit.
/// While ACKs cannot be sent (no verified login yet) the marked ones wait in the database.
final class DeviceAckWorker: @unchecked Sendable {
  /// ACKs taken per transaction.
  static let batchLimit = 500

  let database: Database
  let pollMs: Int64
  let ackIntervalMs: Int64
  let counters: ListenerCounters
  let logger: Logger
  let clock: EpochClock
  /// The 30 s rule's clock (the writer's: the listener passes `steadyEpochMilliseconds`); nil: ``clock``.
  let ackClock: EpochClock?
  /// The `data_version` of the last take; nil before the first.
  private var version: Int64?
  /// The last take filled its limit: take again without waiting for a commit.
  private var more = false

  init(
    database: Database, pollMs: Int64, ackIntervalMs: Int64, counters: ListenerCounters, logger: Logger,
    clock: @escaping EpochClock = epochMilliseconds, ackClock: EpochClock? = nil
  ) {
    self.ackClock = ackClock
    self.database = database
    self.pollMs = pollMs
    self.ackIntervalMs = ackIntervalMs
    self.counters = counters
    self.logger = logger
    self.clock = clock
  }

  /// One poll: the ACK lines to send now (their rows are marked in a committed transaction), or none when nothing
  /// was committed since the last take or ACKs cannot be sent (`canTransmit` false: they wait).
  func check(canTransmit: Bool) throws(StoreError) -> [[UInt8]] {
    let dataVersion = try database.dataVersion()
    guard canTransmit, more || dataVersion != version else { return [] }
    let taken = try database.takePulledDeviceAcks(
      now: clock(), ackClockNow: ackClock?(), minIntervalMs: ackIntervalMs, limit: Self.batchLimit)
    version = dataVersion
    more = taken.lines.count + taken.suppressed + taken.stale == Self.batchLimit
    counters.add(counters.acksSuppressed, taken.suppressed)
    if taken.stale > 0 {
      logger.info(
        "device ACKs dropped: pulled longer ago than the pull window", ["count": String(taken.stale)])
    }
    return taken.lines.map { Array($0.utf8) }
  }

  /// Looks on every wake and every `pollMs` until `wake` is stopped, handing each look's lines to `deliver`.
  func run(wake: WakeSignal, canTransmit: () -> Bool, deliver: ([[UInt8]]) -> Void) {
    var failing = false
    while wake.wait(timeoutMs: more ? 0 : pollMs) != .stopped {
      do throws(StoreError) {
        let lines = try check(canTransmit: canTransmit())
        if !lines.isEmpty { deliver(lines) }
        failing = false
      } catch {
        if !failing {
          logger.warn("cannot read pulled messages' ACKs; retrying", ["error": error.description])
        }
        failing = true
      }
    }
  }
}
