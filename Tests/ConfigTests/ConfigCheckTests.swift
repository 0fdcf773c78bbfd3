import Config
import Foundation
import Testing

/// `aprs-cloud check-config`'s core: every error and warning of a file, and the exit status they make.
@Suite struct ConfigCheckTests {
  static let file = "/etc/aprs-cloud/aprs-cloud.ini"

  static func check(_ text: String) throws -> ConfigCheck {
    ConfigCheck(try ConfigFile(parsing: text, name: file, directory: "/etc/aprs-cloud", environment: [:]))
  }

  /// The previous release's sample configuration, committed as it was (Tests/fixtures/previous-release.ini).
  static func previousRelease() throws -> String {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    return try String(
      contentsOf: root.appendingPathComponent("fixtures/previous-release.ini"), encoding: .utf8)
  }

  @Test func thePreviousReleasesSampleHasNoErrorAndOneWarningWebPushOff() throws {
    let check = try Self.check(try Self.previousRelease())
    #expect(check.errors.isEmpty, "\(check.errors)")
    #expect(check.warnings.count == 1, "\(check.warnings)")
    #expect(check.warnings.first?.contains("messaging.webpush.subject is not set") == true)
    // Warnings only: the programs start, so check-config exits 0 (as `nginx -t` does on warnings).
    #expect(check.exitStatus == 0)
    // Every program's settings read from it.
    #expect(check.listener?.login == "N0CALL-10")
    _ = try PushConfig(try ConfigFile(parsing: try Self.previousRelease(), name: Self.file, environment: [:]))
  }

  @Test func aCompleteFileIsClean() throws {
    let check = try Self.check(
      try Self.previousRelease() + "\n[messaging.webpush]\nsubject = mailto:ops@example.org\n")
    #expect(check.errors.isEmpty && check.warnings.isEmpty, "\(check.errors) \(check.warnings)")
    #expect(check.exitStatus == 0)
  }

  @Test func everyPartsErrorIsListedOnceAndWarningsToo() throws {
    let check = try Self.check(
      """
      [server]
      logLevel = loud
      [aprsis]
      watchdog = forever
      [messaging.webpush]
      enabled = true
      [listener]
      queueSize = 5
      colour = blue
      [nonsense]
      key = 1
      """)
    #expect(check.exitStatus == 2)
    // [server] is read by the responder and the listener: once. Each program would stop at its first error;
    // the check goes on past each bad key (left at its default), so every one is listed.
    #expect(check.errors.count == 4, "\(check.errors)")
    #expect(check.errors.contains { $0.contains("server.logLevel") })
    #expect(check.errors.contains { $0.contains("aprsis.watchdog") })
    #expect(check.errors.contains { $0.contains("listener.queueSize") })
    #expect(check.errors.contains { $0.contains("messaging.webpush.subject is not set") })
    #expect(check.warnings.contains { $0.contains("unknown key colour in [listener]") }, "\(check.warnings)")
    #expect(check.warnings.contains { $0.contains("unknown section [nonsense]") })
  }

  @Test func everyBadKeyOfOneSectionIsListedAndTheWarningsStay() throws {
    let check = try Self.check(
      """
      [server]
      workers = 0
      logLevel = loud
      ringSize = abc
      maxBody = 10
      stationExpiry = 7x
      [messaging.webpush]
      subject = mailto:root@vm
      """)
    for key in ["workers", "logLevel", "ringSize", "maxBody", "stationExpiry"] {
      #expect(check.errors.contains { $0.contains("server.\(key)") }, "\(key): \(check.errors)")
    }
    #expect(check.errors.count == 5, "\(check.errors)")
    #expect(check.warnings.contains { $0.hasPrefix("receive-only") }, "\(check.warnings)")
    #expect(check.warnings.contains { $0.contains("is on a local name (vm)") }, "\(check.warnings)")
  }

  @Test func aListenerErrorAloneIsFound() throws {
    let check = try Self.check("[aprsis]\nwatchdog = forever\n[messaging.webpush]\nenabled = false\n")
    #expect(check.errors.count == 1 && check.errors[0].contains("aprsis.watchdog"), "\(check.errors)")
    #expect(check.exitStatus == 2)
  }

  @Test func receiveOnlyIsAWarning() throws {
    let check = try Self.check("[messaging.webpush]\nenabled = false\n")
    #expect(check.errors.isEmpty)
    #expect(
      check.warnings == [
        "receive-only: no [aprsis] login and passcode; messages are stored and pushed but never ACKed"
      ])
    #expect(check.exitStatus == 0)
  }
}
