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
final class PushRig: PushServiceRig {
  let fake: PushFake

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
    try super.init(directory: fake.directory, configText: text)
  }

  override func close() {
    super.close()
    fake.stop()
    fake.removeFiles()
  }

  /// Registers `station` with devices `(platform, token)`.
  func register(
    _ station: String, _ devices: [(DevicePlatform, String)], at time: Int64? = nil, keyed: Bool = false
  ) throws {
    for (platform, token) in devices {
      try registerStation(
        database, station, platform: platform, token: token, keyed: keyed, now: time ?? clock.now())
    }
  }

  /// Waits (at most 5 s) until the outbox is empty; true when it is.
  @discardableResult
  func eventuallyEmpty() throws -> Bool {
    try eventually { try pending().isEmpty }
  }

  /// Writes the APNs provider token file the sender keeps beside the database (mode 0600), as an
  /// earlier run would have left it.
  func writeAPNsTokenFile(_ line: String) throws {
    let path = PushServiceOptions.apnsTokenFile(database: databasePath)
    try (line + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    guard chmod(path, 0o600) == 0 else { throw TestFailure("chmod \(path)") }
  }
}

/// An APNs-looking token (64 hex digits) made from a small number.
func apnsToken(_ number: Int) -> String {
  let hex = String(number, radix: 16)
  return String(repeating: "a", count: 64 - hex.count) + hex
}
