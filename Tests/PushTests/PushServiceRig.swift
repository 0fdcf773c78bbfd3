import Config
import Foundation
import Logging
import Push
import Store

#if canImport(Glibc)
  import Glibc
#endif

/// What every in-process push sender rig shares (``PushRig``, ``WebPushRig``, ``ForwardRig``): a migrated database
/// in the fake's folder, a ``TestClock``, the sender's log in `push.log`, the config text it parses, and the
/// `PushService` started and stopped on it. A subclass starts its fake before `super.init` and stops it in
/// `close()`.
class PushServiceRig {
  let directory: String
  let databasePath: String
  let database: Database
  let clock = TestClock()
  let logPath: String
  private let logFD: Int32
  private(set) var service: PushService?
  /// The config file's text (`rig.ini`, read relative to `directory`).
  let configText: String

  init(directory: String, configText: String) throws {
    self.directory = directory
    self.configText = configText
    databasePath = directory + "/db.sqlite"
    database = try openMigrated(databasePath)
    logPath = directory + "/push.log"
    logFD = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
  }

  /// The parsed push configuration.
  func pushConfig() throws -> PushConfig {
    try PushConfig(try ConfigFile(parsing: configText, name: "rig.ini", directory: directory))
  }

  /// The service's options: a 250 ms poll interval (tests that wait for a poll stay short), the rig's clock and
  /// log. `stopAfterUniformFailuresMs`: see `PushServiceOptions`.
  func options(stopAfterUniformFailuresMs: Int64 = 10 * 60_000) throws -> PushServiceOptions {
    let clock = self.clock
    return PushServiceOptions(
      databasePath: databasePath, push: try pushConfig(), pollIntervalMs: 250,
      logger: Logger(level: .debug, fileDescriptor: logFD, clock: { clock.now() }), clock: { clock.now() },
      stopAfterUniformFailuresMs: stopAfterUniformFailuresMs)
  }

  /// Starts the service.
  func start(stopAfterUniformFailuresMs: Int64 = 10 * 60_000) throws {
    let service = PushService(options: try options(stopAfterUniformFailuresMs: stopAfterUniformFailuresMs))
    try service.start()
    self.service = service
  }

  func stop() {
    service?.stop()
    service = nil
  }

  /// Stores messages for `station` in one transaction and notifies the service.
  @discardableResult
  func store(
    _ station: String, _ texts: [String], from peer: String = "KJ7ABC-7", msgno: String? = "1",
    at time: Int64? = nil
  ) throws -> [StoreOutcome] {
    let outcomes = try database.storeMessages(
      texts.map { message(station, $0, from: peer, msgno: msgno) }, now: time ?? clock.now())
    service?.notify()
    return outcomes
  }

  /// Pending outbox rows (any due time).
  func pending() throws -> [OutboxEntry] { try database.dueOutbox(now: .max, limit: 10_000) }

  /// The device tokens of `station`.
  func tokens(_ station: String) throws -> Set<String> { Set(try database.devices(of: station).map(\.token)) }

  /// What the sender logged.
  func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

  /// Stops the service and closes the database and the log; a subclass stops its fake after this.
  func close() {
    stop()
    database.close()
    Glibc.close(logFD)
  }
}
