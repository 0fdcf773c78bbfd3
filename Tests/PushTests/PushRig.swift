import Config
import Foundation
import JSON
import Logging
import Platform
import Push
import Store
import Synchronization
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Real time plus an offset a test moves forward (retries, token expiry) without sleeping.
final class TestClock: Sendable {
  private let offset = Atomic<Int64>(0)

  func now() -> Int64 { epochMilliseconds() + offset.load(ordering: .relaxed) }

  func advance(by milliseconds: Int64) { offset.add(milliseconds, ordering: .relaxed) }
}

/// An in-process `PushService` against a `PushFake`, with its own database and log file.
final class PushRig {
  let fake: PushFake
  let directory: String
  let databasePath: String
  let database: Database
  let clock = TestClock()
  let logPath: String
  private let logFD: Int32
  private(set) var service: PushService?

  /// `messaging` goes into `[messaging]`; `android`/`ios` configure those providers against the
  /// fake (APNs with both environments, `production` picking the first); `iosKeyFile` overrides
  /// the key file (to break it).
  init(
    messaging: String = "coalesceWindow = 0", android: Bool = true, ios: Bool = true,
    iosKeyFile: String? = nil, production: Bool = true
  )
    throws
  {
    fake = try PushFake()
    directory = fake.directory
    databasePath = directory + "/db.sqlite"
    database = try openMigrated(databasePath)
    logPath = directory + "/push.log"
    logFD = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    // FCM and APNs only: Web Push (on by default) has its own rig (WebPushServiceTests).
    var text = "[messaging]\n\(messaging)\n[messaging.webpush]\nenabled = false\n"
    if android {
      text += """
        [messaging.android]
        serviceAccountFile = service-account.json
        endpoint = \(fake.fcmEndpoint)
        caFile = ca.pem

        """
    }
    if ios {
      text += """
        [messaging.ios.apns]
        keyFile = \(iosKeyFile ?? "AuthKey_TESTKEY123.p8")
        keyId = TESTKEY123
        teamId = TEAM123456
        bundleId = org.example.htcommander
        production = \(production)
        productionEndpoint = \(fake.apnsEndpoint)
        sandboxEndpoint = \(fake.apnsSandboxEndpoint)
        caFile = ca.pem

        """
    }
    configText = text
  }

  let configText: String

  /// The parsed push configuration.
  func pushConfig() throws -> PushConfig {
    try PushConfig(try ConfigFile(parsing: configText, name: "rig.ini", directory: directory))
  }

  /// Starts the service (poll interval 250 ms so tests that wait for a poll stay short).
  /// `stopAfterUniformFailuresMs`: see `PushServiceOptions`.
  func start(stopAfterUniformFailuresMs: Int64 = 10 * 60_000) throws {
    let clock = self.clock
    let options = PushServiceOptions(
      databasePath: databasePath, push: try pushConfig(), pollIntervalMs: 250,
      logger: Logger(level: .debug, fileDescriptor: logFD, clock: { clock.now() }), clock: { clock.now() },
      stopAfterUniformFailuresMs: stopAfterUniformFailuresMs)
    let service = PushService(options: options)
    try service.start()
    self.service = service
  }

  /// Registers `station` with devices `(platform, token)`.
  func register(_ station: String, _ devices: [(DevicePlatform, String)], at time: Int64? = nil) throws {
    for (platform, token) in devices {
      try registerStation(database, station, platform: platform, token: token, now: time ?? clock.now())
    }
  }

  /// Stores messages for `station` in one transaction and notifies the service.
  @discardableResult
  func store(_ station: String, _ texts: [String], from peer: String = "KJ7ABC-7", at time: Int64? = nil)
    throws
    -> [StoreOutcome]
  {
    let outcomes = try database.storeMessages(
      texts.map { message(station, $0, from: peer, msgno: "1") }, now: time ?? clock.now())
    service?.notify()
    return outcomes
  }

  /// Pending outbox rows (any due time).
  func pending() throws -> [OutboxEntry] {
    try database.dueOutbox(now: .max, limit: 10_000)
  }

  /// Waits (at most 5 s) until the outbox is empty; true when it is.
  @discardableResult
  func eventuallyEmpty() throws -> Bool {
    try eventually { try pending().isEmpty }
  }

  /// The device tokens of `station`.
  func tokens(_ station: String) throws -> Set<String> {
    Set(try database.devices(of: station).map(\.token))
  }

  /// Writes the APNs provider token file the sender keeps beside the database (mode 0600), as an
  /// earlier run would have left it.
  func writeAPNsTokenFile(_ line: String) throws {
    let path = PushServiceOptions.apnsTokenFile(database: databasePath)
    try (line + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    guard chmod(path, 0o600) == 0 else { throw TestFailure("chmod \(path)") }
  }

  /// What the sender logged.
  func log() -> String {
    (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
  }

  func close() {
    service?.stop()
    service = nil
    database.close()
    Glibc.close(logFD)
    fake.stop()
    fake.removeFiles()
  }
}

/// An APNs-looking token (64 hex digits) made from a small number.
func apnsToken(_ number: Int) -> String {
  let hex = String(number, radix: 16)
  return String(repeating: "a", count: 64 - hex.count) + hex
}
