import Logging
import Platform
import Store

/// The housekeeping thread: renews the listener lease, publishes the listener's state to `meta` (periodically and
/// soon after each status change), and prunes expired bookkeeping now and then. At the end it publishes the final
/// state and releases the lease so a successor need not wait.
final class Housekeeper: @unchecked Sendable {
  static let pruneIntervalMs: Int64 = 3_600_000
  static let receiptRetentionMs: Int64 = 7 * 86_400_000
  /// The least time between two publishes caused by status changes (a connect makes several in a row).
  static let minimumPublishGapMs: Int64 = 100

  let database: Database
  let holder: String
  let leaseTtlMs: Int64
  let publishIntervalMs: Int64
  let login: String
  let counters: ListenerCounters
  let shared: SharedState
  let logger: Logger
  let startedAt: Int64
  /// Stations and push tokens not heard within this window are deleted by the hourly prune.
  let stationExpiryMs: Int64
  /// Who checkpoints the write-ahead log: the hourly maintenance (`.truncate`), or Litestream when
  /// `[replication]` is on (`.leaveToReplication`).
  let checkpointPolicy: CheckpointPolicy
  /// Where a lease that cannot be renewed is reported (the beacon), nil for none.
  let health: ListenerHealth?
  private let condition = Condition()
  private var publishRequested = false
  private var stopRequested = false
  private var rate = RateWindow()
  /// The last hour minute by minute, and the totals it last counted from (lines, stored, ACKs).
  private var history = ActivityHistory()
  private var historyTotals: (lines: Int, stored: Int, acks: Int) = (0, 0, 0)

  init(
    database: Database, holder: String, leaseTtlMs: Int64, publishIntervalMs: Int64, login: String,
    counters: ListenerCounters, shared: SharedState, logger: Logger, startedAt: Int64, stationExpiryMs: Int64,
    checkpointPolicy: CheckpointPolicy = .truncate, health: ListenerHealth? = nil
  ) {
    self.database = database
    self.holder = holder
    self.leaseTtlMs = leaseTtlMs
    self.publishIntervalMs = publishIntervalMs
    self.login = login
    self.counters = counters
    self.shared = shared
    self.logger = logger
    self.startedAt = startedAt
    self.stationExpiryMs = stationExpiryMs
    self.checkpointPolicy = checkpointPolicy
    self.health = health
  }

  /// Asks for a publish soon (a status change).
  func requestPublish() {
    condition.locked {
      publishRequested = true
      condition.broadcast()
    }
  }

  /// Asks the thread to finish: final publish, lease released.
  func stop() {
    condition.locked {
      stopRequested = true
      condition.broadcast()
    }
  }

  /// How early a renewal or a periodic publish may run so that it shares a wake-up with the other (ms): the two
  /// cadences (a third of the lease, the publish interval) meet every few seconds, a few ms apart, and an idle
  /// listener wakes once for both.
  var coalesceMs: Int64 { max(0, min(1_000, publishIntervalMs / 4, leaseTtlMs / 12)) }

  /// Runs until stopped. Calls `leaseLost` (once) when another listener took the lease.
  func run(leaseLost: () -> Void) {
    var nextRenew = monotonicMilliseconds() + leaseTtlMs / 3
    var nextPublish = monotonicMilliseconds()
    var nextPrune = monotonicMilliseconds() + 60_000
    var lastPublish: Int64 = 0
    var leaseFailing = false
    var lost = false
    while true {
      let (stop, requested) = condition.locked { () -> (Bool, Bool) in
        let deadline = min(nextRenew, nextPublish, nextPrune)
        while !stopRequested && !publishRequested && monotonicMilliseconds() < deadline {
          condition.wait(until: deadline)
        }
        let requested = publishRequested
        publishRequested = false
        return (stopRequested, requested)
      }
      if stop { break }
      var now = monotonicMilliseconds()
      if now + coalesceMs >= nextRenew {
        do throws(StoreError) {
          guard try database.acquireLease(holder: holder, now: epochMilliseconds(), ttlMs: leaseTtlMs) else {
            let other = (try? database.lease())?.holder ?? "?"
            logger.error("the listener lease was taken by another listener; stopping", ["holder": other])
            lost = true
            break
          }
          if leaseFailing { health?.lease(nil) }
          leaseFailing = false
        } catch {
          health?.lease(error.storageFault?.description ?? error.description)
          if !leaseFailing {
            logger.warn("cannot renew the listener lease; retrying", ["error": error.description])
          }
          leaseFailing = true
        }
        if lost { break }
        nextRenew = now + (leaseFailing ? min(1000, leaseTtlMs / 6) : leaseTtlMs / 3)
      }
      now = monotonicMilliseconds()
      if now + coalesceMs >= nextPublish || (requested && now - lastPublish >= Self.minimumPublishGapMs) {
        publish()
        lastPublish = now
        nextPublish = now + publishIntervalMs
      } else if requested {
        nextPublish = min(nextPublish, lastPublish + Self.minimumPublishGapMs)
      }
      if now >= nextPrune {
        prune()
        nextPrune = now + Self.pruneIntervalMs
      }
    }
    if lost {
      // The successor publishes its own state; ours must not overwrite it.
      leaseLost()
      return
    }
    publish()
    do throws(StoreError) {
      try database.releaseLease(holder: holder)
    } catch {
      logger.warn("cannot release the listener lease", ["error": error.description])
    }
  }

  /// The status as of now.
  func report() -> ListenerStatus {
    let total = counters.linesRead.load(ordering: .relaxed)
    let lineRate = rate.record(now: monotonicMilliseconds(), total: total)
    let status = shared.status
    let lastLine = counters.lastLineAt.load(ordering: .relaxed)
    let tooLong = counters.tooLong.load(ordering: .relaxed)
    var counts = ListenerCounts()
    counts[.linesRead] = total
    counts[.messagesStored] = counters.messagesStored.load(ordering: .relaxed)
    counts[.duplicates] = counters.duplicates.load(ordering: .relaxed)
    counts[.receipts] = counters.receipts.load(ordering: .relaxed)
    counts[.acksSent] = counters.acksSent.load(ordering: .relaxed)
    counts[.acksSuppressed] = counters.acksSuppressed.load(ordering: .relaxed)
    counts[.acksDropped] = counters.acksDropped.load(ordering: .relaxed)
    counts[.drops] = counters.drops.load(ordering: .relaxed)
    // Published invalid lines include the over-long ones (counted apart in memory).
    counts[.invalidLines] = counters.invalid.load(ordering: .relaxed) + tooLong
    counts[.tooLong] = tooLong
    counts[.skipped] = counters.skipped.load(ordering: .relaxed)
    counts[.notForUs] = counters.notForUs.load(ordering: .relaxed)
    counts[.reconnects] = status.reconnects
    counts[.blocked] = counters.blocked.load(ordering: .relaxed)
    counts[.banned] = counters.banned.load(ordering: .relaxed)
    counts[.airAnswered] = counters.airAnswered.load(ordering: .relaxed)
    counts[.fallbackAcks] = counters.fallbackAcks.load(ordering: .relaxed)
    for (kind, count) in counters.subscriptionEntries.withLock({ $0 }) {
      counts[.subscriptionEntries(kind)] = count
    }
    let now = epochMilliseconds()
    let totals = (lines: total, stored: counts[.messagesStored], acks: counts[.acksSent])
    history.add(
      lines: totals.lines - historyTotals.lines, stored: totals.stored - historyTotals.stored,
      acks: totals.acks - historyTotals.acks, at: now)
    historyTotals = totals
    return ListenerStatus(
      connection: status, login: login, lastLineAt: lastLine == 0 ? nil : lastLine, lineRate: lineRate,
      counts: counts, updatedAt: now, startedAt: startedAt,
      sendBudgetFull: shared.sendBudgetFull.load(ordering: .relaxed), history: history)
  }

  private func publish() {
    do throws(StoreError) {
      try database.publishListenerStatus(report())
    } catch {
      logger.warn("cannot publish the listener state", ["error": error.description])
    }
  }

  private func prune() {
    do throws(StoreError) {
      let plan = MaintenancePlan(
        stationExpiryMs: stationExpiryMs, receiptRetentionMs: Self.receiptRetentionMs,
        checkpoint: checkpointPolicy)
      // The dedup and ACK windows are on the steady clock (a wall-clock step must not prune open ones).
      let report = try database.runMaintenance(
        plan, now: epochMilliseconds(), windowsNow: steadyEpochMilliseconds())
      logger.log(.info, "maintenance", fields: report.fields)
    } catch {
      logger.warn("pruning failed", ["error": error.description])
    }
  }
}
