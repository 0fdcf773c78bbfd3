import APRS
import CompanionFiles
import Logging
import Platform
import Store
import Synchronization

/// The writer thread: takes what the reader queued, in batches, and stores it (``MessageWriter``), then hands the
/// ACK lines to the connection and tells the push sender.
///
/// A batch whose transaction fails (a full disk, a lock held past the busy timeout, an I/O error) is kept, in
/// order, and tried again with a backoff (``WriterRetry``: 100 ms doubling to 5 s) for as long as storing fails;
/// nothing of it was ACKed, and storing it later is idempotent (the dedup keys). The lines arriving meanwhile are
/// taken from the queue and kept behind it (``HeldLines``), counted against the queue's bounds
/// (``LineQueue/hold(lines:bytes:)``): the writer keeps at most three quarters of them, so the newest lines always
/// find room, and when that is full the oldest are dropped, counted (`drops`) and logged. Once storing works the
/// backlog is stored in order and ACKed as the 30 s rule allows at that time. Each failure is published at once
/// (``ListenerHealth``, the beacon `/health` reads).
///
/// After each commit the writer checks that the database file is still the one its path names
/// (``Store/Database/fileChange()``): when it was deleted or replaced, the batch's ACKs are not sent and
/// `databaseChanged` is called (the listener stops).
final class WriterWorker: @unchecked Sendable {
  static let batchLimit = 500
  /// After the stop, how long a failing writer keeps trying before it gives the held lines up (ms).
  static let retryAfterStopMs: Int64 = 10_000
  /// How often an idle writer looks for watches whose silence is due while a silence is pending (ms): well inside
  /// the shortest `silentFor` (300 s). Without one (no watch state has a `silence_due_at`, and only this writer
  /// writes them) it looks after its next stored batch, or after ``noWatchCheckMs``: an idle writer with no
  /// watch sleeps until a line arrives.
  static let silenceCheckMs: Int64 = 15_000
  /// The look for due silences when none was pending (ms): a safety net only.
  static let noWatchCheckMs: Int64 = 300_000

  let databasePath: String
  let storeOptions: StoreOptions
  let router: LineRouter
  let ackIntervalMs: Int64
  let queue: LineQueue
  let counters: ListenerCounters
  let shared: SharedState
  let connection: ConnectionDriver
  let notifier: (any OutboxNotifier)?
  let logger: Logger
  let health: ListenerHealth
  let databaseChanged: @Sendable (DatabaseFileChange) -> Void
  /// After a failed look at the held fallback ACKs, the next is not before this (monotonic ms; writer thread only).
  private var fallbackRetryAt: Int64 = 0
  /// How long a failed look at the held fallback ACKs waits before the next (ms).
  static let fallbackRetryMs: Int64 = 1_000

  init(
    databasePath: String, storeOptions: StoreOptions, router: LineRouter, ackIntervalMs: Int64,
    queue: LineQueue,
    counters: ListenerCounters, shared: SharedState, connection: ConnectionDriver,
    notifier: (any OutboxNotifier)?,
    logger: Logger, health: ListenerHealth = ListenerHealth(),
    databaseChanged: @escaping @Sendable (DatabaseFileChange) -> Void = { _ in }
  ) {
    self.databasePath = databasePath
    self.storeOptions = storeOptions
    self.router = router
    self.ackIntervalMs = ackIntervalMs
    self.queue = queue
    self.counters = counters
    self.shared = shared
    self.connection = connection
    self.notifier = notifier
    self.logger = logger
    self.health = health
    self.databaseChanged = databaseChanged
  }

  /// Runs until the queue is closed and empty. Returns false when the database could not be opened.
  func run() -> Bool {
    let database: Database
    do {
      database = try Database(path: databasePath, options: storeOptions)
    } catch {
      logger.error("writer: cannot open the database", ["error": error.description])
      return false
    }
    defer { database.close() }
    let writer = MessageWriter(database: database, router: router, ackIntervalMs: ackIntervalMs)
    let maximumLines = max(1, queue.capacity - queue.capacity / 4)
    let maximumBytes = max(1, queue.byteCapacity - queue.byteCapacity / 4)
    var held = HeldLines()
    var retry = WriterRetry()
    var droppedInRun = 0
    var closedAt: Int64?
    var nextSilenceCheck: Int64 = 0
    while true {
      let now = monotonicMilliseconds()
      // Wait for lines while nothing is held (or until a watch's silence may be due, or a held fallback ACK's
      // wait ends); while failing, take what arrives until the next attempt is due.
      let fallbackDue = writer.fallback?.nextDeadline.map {
        max(now + max(0, $0 - steadyEpochMilliseconds()), fallbackRetryAt)
      }
      let idleUntil = min(max(now, nextSilenceCheck), fallbackDue ?? .max)
      let deadline = held.isEmpty ? idleUntil : (retry.isFailing ? retry.nextAttemptAt : now)
      let (lines, closed) = queue.popBatch(
        maximum: held.isEmpty ? Self.batchLimit : Int.max, until: deadline)
      if !lines.isEmpty {
        held.append(lines)
        let dropped = held.trim(toLines: maximumLines, bytes: maximumBytes)
        if dropped > 0 {
          counters.add(counters.drops, dropped)
          health.dropped(dropped)
          if droppedInRun == 0 {
            logger.error(
              "writer: the queue is full while storing fails; dropping the oldest lines (nothing of them was ACKed)",
              ["dropped": String(dropped), "held": String(held.count)])
          }
          droppedInRun += dropped
        }
      }
      queue.hold(lines: held.count, bytes: held.bytes)
      if held.isEmpty {
        if closed { return true }
        if monotonicMilliseconds() >= nextSilenceCheck {
          let pending = reportSilences(writer, database)
          nextSilenceCheck = monotonicMilliseconds() + (pending ? Self.silenceCheckMs : Self.noWatchCheckMs)
        }
        if monotonicMilliseconds() >= fallbackRetryAt { settleFallbackAcks(writer, database) }
        continue
      }
      if closed && closedAt == nil { closedAt = monotonicMilliseconds() }
      if retry.isFailing {
        if let closedAt, monotonicMilliseconds() - closedAt >= Self.retryAfterStopMs {
          logger.error(
            "writer: stopping while storing still fails; the lines held are given up (none was ACKed; senders"
              + " retry)", ["lines": String(held.count), "error": retry.lastError?.description ?? "?"])
          counters.add(counters.drops, held.count)
          queue.hold(lines: 0, bytes: 0)
          return true
        }
        let wait = retry.nextAttemptAt - monotonicMilliseconds()
        if wait > 0 {
          // Closed: popBatch no longer waits.
          if closed { Latch().wait(timeoutMs: wait) }
          continue
        }
      }
      let batch = held.oldest(Self.batchLimit)
      health.attempt(startedAt: monotonicMilliseconds())
      defer { health.attempt(startedAt: nil) }
      do throws(StoreError) {
        try store(batch, writer, database)
        // A busy feed never leaves the writer idle: the waits that ended are looked at after each batch too.
        if monotonicMilliseconds() >= fallbackRetryAt { settleFallbackAcks(writer, database) }
        // The batch may have started a watch's silence: look within the usual interval.
        nextSilenceCheck = min(nextSilenceCheck, monotonicMilliseconds() + Self.silenceCheckMs)
        held.removeOldest(batch.count)
        queue.hold(lines: held.count, bytes: held.bytes)
        if let failedMs = retry.succeeded(now: monotonicMilliseconds()) {
          logger.info(
            "writer: storing works again; the held lines are being stored",
            [
              "failedForMs": String(failedMs), "held": String(held.count),
              "droppedOldest": String(droppedInRun),
            ])
          droppedInRun = 0
        }
        if health.snapshot.storeFault != nil {
          health.storeWorks(heldLines: held.count)
        } else {
          health.held(held.count)
        }
      } catch {
        counters.add(counters.storeErrors, 1)
        let fault = error.storageFault?.description ?? error.description
        health.storeFailed(fault, now: epochMilliseconds(), heldLines: held.count)
        if retry.failed(error, now: monotonicMilliseconds()) {
          logger.error(
            "writer: cannot store messages; keeping them and retrying until storing works (nothing is ACKed"
              + " before it is stored)",
            ["error": error.description, "lines": String(held.count)])
        } else if retry.failures % 20 == 0 {
          logger.warn(
            "writer: storing still fails",
            ["error": error.description, "attempts": String(retry.failures), "held": String(held.count)])
        }
      }
    }
  }

  /// Stores one batch and, when the database file is still the one its path names, hands its ACKs on.
  private func store(_ lines: [QueuedLine], _ writer: MessageWriter, _ database: Database) throws(StoreError)
  {
    let result = try writer.process(
      lines, stations: shared.stations, canTransmit: connection.acceptsAcks && !health.databaseFileChanged,
      now: steadyEpochMilliseconds(), stampedAt: epochMilliseconds())
    record(result)
    if let change = database.fileChange() {
      // Committed to a file nobody will open again: no ACK may go out for it.
      if health.databaseFile(change) { databaseChanged(change) }
      return
    }
    guard !health.databaseFileChanged else { return }
    connection.submit(acks: result.acks)
    if !result.storedStations.isEmpty { notifier?.messagesStored(stations: result.storedStations) }
  }

  /// Reports the watches' silences that are due (``MessageWriter/reportSilences(now:stampedAt:)``) and hands
  /// their pushes on; a failure is logged and tried at the next check (nothing is lost: the states stay due).
  /// True when a silence is still pending afterwards (or the look failed: look again soon).
  private func reportSilences(_ writer: MessageWriter, _ database: Database) -> Bool {
    do throws(StoreError) {
      let result = try writer.reportSilences(now: steadyEpochMilliseconds(), stampedAt: epochMilliseconds())
      record(result)
      if !result.storedStations.isEmpty { notifier?.messagesStored(stations: result.storedStations) }
      return try database.nextWatchDeadline() != nil
    } catch {
      logger.warn("writer: cannot report the watches' silences; trying again", ["error": error.description])
      return true
    }
  }

  /// Sends the ACKs of the held messages whose wait ended (``MessageWriter/settleFallbackAcks(now:stampedAt:canTransmit:)``)
  /// and hands their pushes on; a failure is logged and tried at the next look (the schedule is as it was).
  private func settleFallbackAcks(_ writer: MessageWriter, _ database: Database) {
    do throws(StoreError) {
      let result = try writer.settleFallbackAcks(
        now: steadyEpochMilliseconds(), stampedAt: epochMilliseconds(),
        canTransmit: connection.acceptsAcks && !health.databaseFileChanged)
      record(result)
      guard database.fileChange() == nil, !health.databaseFileChanged else { return }
      connection.submit(acks: result.acks)
      if !result.storedStations.isEmpty { notifier?.messagesStored(stations: result.storedStations) }
    } catch {
      fallbackRetryAt = monotonicMilliseconds() + Self.fallbackRetryMs
      logger.warn(
        "writer: cannot send the fallback ACKs that are due; trying again", ["error": error.description])
    }
  }

  private func record(_ result: BatchResult) {
    counters.add(counters.messagesStored, result.stored)
    counters.add(counters.duplicates, result.duplicates)
    counters.add(counters.receipts, result.receipts)
    counters.add(counters.acksSuppressed, result.acksSuppressed)
    counters.add(counters.unknownStation, result.unknownStation)
    counters.add(counters.blocked, result.blocked)
    counters.add(counters.banned, result.banned)
    counters.add(counters.airAnswered, result.airAnswered)
    counters.add(counters.fallbackAcks, result.fallbackAcks)
    if !result.storedEntries.isEmpty {
      counters.subscriptionEntries.withLock { counts in
        for (kind, count) in result.storedEntries { counts[kind, default: 0] += count }
      }
    }
    var skipped = 0
    for (reason, count) in result.skipped {
      switch reason {
      case .invalid: counters.add(counters.invalid, count)
      case .comment: break
      case .notForUs:
        counters.add(counters.notForUs, count)
        skipped += count
      default: skipped += count
      }
    }
    counters.add(counters.skipped, skipped)
    for send in result.sendsAnswered {
      logger.info(
        "message \(send.state.rawValue) by its addressee",
        ["station": send.station, "to": send.addressee, "msgno": send.msgno ?? "-"])
    }
    if result.stored > 0 || result.receipts > 0, logger.isEnabled(.debug) {
      logger.debug(
        "batch stored",
        [
          "stored": String(result.stored), "duplicates": String(result.duplicates),
          "receipts": String(result.receipts), "acks": String(result.acks.count),
        ])
    }
  }
}
