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
          lines, stations: shared.stations, canTransmit: connection.acceptsAcks,
          now: steadyEpochMilliseconds(),
          stampedAt: epochMilliseconds())
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
    counters.add(counters.blocked, result.blocked)
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
