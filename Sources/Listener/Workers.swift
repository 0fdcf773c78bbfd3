import APRS
import Logging
import Platform
import Store
import Synchronization

/// The writer thread: takes what the reader queued, in batches, and stores it (``MessageWriter``), then hands the
/// ACK lines to the connection and tells the push sender. A batch whose transaction fails is retried a few times
/// (nothing of it was ACKed, and storing is idempotent thanks to the dedup keys), then dropped: the senders retry.
final class WriterWorker: @unchecked Sendable {
  static let batchLimit = 500
  static let attempts = 4

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

  init(
    databasePath: String, storeOptions: StoreOptions, router: LineRouter, ackIntervalMs: Int64,
    queue: LineQueue,
    counters: ListenerCounters, shared: SharedState, connection: ConnectionDriver,
    notifier: (any OutboxNotifier)?,
    logger: Logger
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
    while true {
      let (lines, closed) = queue.popBatch(maximum: Self.batchLimit, until: monotonicMilliseconds() + 1000)
      if !lines.isEmpty { process(lines, writer) }
      if lines.isEmpty && closed { return true }
    }
  }

  private func process(_ lines: [[UInt8]], _ writer: MessageWriter) {
    var lastError: StoreError?
    for attempt in 1...Self.attempts {
      do throws(StoreError) {
        let result = try writer.process(
          lines, stations: shared.stations, canTransmit: connection.acceptsAcks, now: epochMilliseconds())
        record(result)
        connection.submit(acks: result.acks)
        if !result.storedStations.isEmpty { notifier?.messagesStored(stations: result.storedStations) }
        return
      } catch {
        lastError = error
        if attempt < Self.attempts {
          logger.warn(
            "writer: storing a batch failed; retrying",
            ["error": error.description, "lines": String(lines.count)])
          Latch().wait(timeoutMs: Int64(100 << attempt))
        }
      }
    }
    counters.add(counters.storeErrors, 1)
    logger.error(
      "writer: a batch could not be stored and is dropped (nothing of it was ACKed; senders retry)",
      ["error": lastError?.description ?? "?", "lines": String(lines.count)])
  }

  private func record(_ result: BatchResult) {
    counters.add(counters.messagesStored, result.stored)
    counters.add(counters.duplicates, result.duplicates)
    counters.add(counters.receipts, result.receipts)
    counters.add(counters.acksSuppressed, result.acksSuppressed)
    counters.add(counters.unknownStation, result.unknownStation)
    var skipped = 0
    for (reason, count) in result.skipped {
      switch reason {
      case .invalid: counters.add(counters.invalid, count)
      case .comment: break
      default: skipped += count
      }
    }
    counters.add(counters.skipped, skipped)
    for send in result.sendsAnswered {
      logger.info(
        "message \(send.state.rawValue) by its addressee",
        ["station": send.station, "to": send.addressee, "msgno": send.msgno])
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

/// The registration watcher: polls `PRAGMA data_version` (the poll interval is the debounce), and when the
/// database changed (or a minute passed, for expiry) reads the live stations; only when that set changed does it
/// publish it to the writer and hand a new filter plan to the connection.
final class RegistrationWatcher: @unchecked Sendable {
  static let expiryRecheckMs: Int64 = 60_000

  let database: Database
  let expiryMs: Int64
  let trackOutgoing: Bool
  let pollMs: Int64
  let shared: SharedState
  let logger: Logger
  let stopped: Latch
  private var version: Int64?
  private var lastCheck: Int64 = 0
  private(set) var current: LiveStationSet?
  private var plan: FilterPlan?

  init(
    database: Database, expiryMs: Int64, trackOutgoing: Bool, pollMs: Int64, shared: SharedState,
    logger: Logger,
    stopped: Latch
  ) {
    self.database = database
    self.expiryMs = expiryMs
    self.trackOutgoing = trackOutgoing
    self.pollMs = pollMs
    self.shared = shared
    self.logger = logger
    self.stopped = stopped
  }

  /// Reads the stations now; returns the new plan when the station set changed (nil otherwise).
  func check(force: Bool = false) throws(StoreError) -> FilterPlan? {
    let now = monotonicMilliseconds()
    let dataVersion = try database.dataVersion()
    guard force || dataVersion != version || now - lastCheck >= Self.expiryRecheckMs else { return nil }
    version = dataVersion
    lastCheck = now
    let stations = try database.liveStations(now: epochMilliseconds(), expiryMs: expiryMs)
    let set = LiveStationSet(stations)
    guard set != current else { return nil }
    let previousCount = current?.count
    current = set
    shared.setStations(set)
    let newPlan = FilterManager.plan(for: stations, trackOutgoing: trackOutgoing)
    guard newPlan != plan else { return nil }
    plan = newPlan
    logger.info(
      "registered stations changed",
      [
        "stations": String(set.count), "before": previousCount.map { String($0) } ?? "-",
        "filterMode": newPlan.mode.rawValue,
      ])
    return newPlan
  }

  /// Polls until stopped, handing plans to `deliver`.
  func run(deliver: (FilterPlan) -> Void) {
    var failing = false
    while !stopped.wait(timeoutMs: pollMs) {
      do throws(StoreError) {
        if let plan = try check() { deliver(plan) }
        failing = false
      } catch {
        if !failing { logger.warn("cannot read registrations; retrying", ["error": error.description]) }
        failing = true
      }
    }
  }
}
