import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// An upgrade never turns the service off: the previous release's sample configuration
/// (Tests/fixtures/previous-release.ini, committed as that release's README gave it: no `[messaging.webpush]`)
/// starts this listener, which logs in, receives and ACKs with Web Push off and says why in its log and in what
/// `/health` and `aprs-cloud status` read. `aprs-cloud check-config` lists every warning and error of a file and
/// exits 0 unless it has an error (2): warnings only are 0, as `nginx -t` and a deploy script expect.
@Suite(.serialized) struct UpgradeTests {
  static var fixture: String { TestPaths.packageRoot + "/Tests/fixtures/previous-release.ini" }

  /// The test's environment without anything that would point a program at another configuration or database.
  static var cleanEnvironment: [String: String] {
    ProcessInfo.processInfo.environment.filter {
      !$0.key.hasPrefix("APRS_CLOUD_") && $0.key != "GATEWAY_INTERFACE"
    }
  }

  @Test func thePreviousReleasesSampleConfigStartsTheListenerWithWebPushOffAndWarned() throws {
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let (directory, database) = try makeListenerDatabase("upgrade")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try database.register(["OH7LZB"], ackMessages: true)
    // The file as it is; only the APRS-IS server (loopback, the fake) comes from the environment, the
    // database from --db.
    var environment = Self.cleanEnvironment
    environment["APRS_CLOUD_APRSIS_SERVERS"] = "127.0.0.1:\(fake.port)"
    let config = try String(contentsOfFile: Self.fixture, encoding: .utf8)
    let listener = try ListenerProcess(database: database.path, config: config, environment: environment)
    defer { listener.stop() }
    #expect(listener.waitForLog(#"msg="logged in""#, timeout: 20), "\(listener.log)")
    #expect(listener.isRunning)
    #expect(listener.log.contains("level=warn msg=\"configuration\""), "\(listener.log)")
    #expect(listener.log.contains("messaging.webpush.subject is not set"), "\(listener.log)")

    // Messages are stored and ACKed as before.
    _ = try fake.inject([messageLine(from: "W1AW", to: "OH7LZB", text: "after the upgrade", msgno: "7")])
    #expect(try database.waitUntil { try $0.int("SELECT count(*) FROM messages") == 1 }, "\(listener.log)")
    #expect(
      try waitUntil(timeout: 10) { try fake.ackLines().contains { $0.hasSuffix(":ack7") } }, "\(listener.log)"
    )

    // What /health and `aprs-cloud status` read: Web Push off with its warning, the key and the fix.
    func push(_ key: String) throws -> String {
      try database.run("SELECT value FROM meta WHERE key = 'push.webpush.\(key)';")
    }
    #expect(try database.waitUntil { _ in try push("state") == "off\n" }, "\((try? push("state")) ?? "")")
    #expect(
      try push("warning").contains("messaging.webpush.subject is not set"), "\((try? push("warning")) ?? "")")
    let status = try runProcess(
      try TestPaths.executable("aprs-cloud"), ["status", "--db", database.path],
      environment: Self.cleanEnvironment)
    #expect(status.stdoutText.contains("webpush push: "), "\(status.stdoutText)")
    #expect(status.stdoutText.contains("subject = mailto:you@example.org"), "\(status.stdoutText)")
    #expect(listener.terminate() == 0)
  }

  func checkConfig(_ text: String?, in directory: String) throws -> ProcessOutput {
    let path = directory + "/aprs-cloud.ini"
    if let text { try text.write(toFile: path, atomically: true, encoding: .utf8) }
    return try runProcess(
      try TestPaths.executable("aprs-cloud"),
      ["check-config", text == nil ? directory + "/missing.ini" : path],
      environment: Self.cleanEnvironment, timeout: 10)
  }

  @Test func checkConfigPrintsEveryWarningAndErrorAndExits0UnlessAnError() throws {
    let directory = try makeTemporaryDirectory("check-config")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let previous = try String(contentsOfFile: Self.fixture, encoding: .utf8)

    let warned = try checkConfig(previous, in: directory)
    #expect(warned.status == 0, "\(warned.stdoutText)")
    let lines = warned.stdoutText.split(separator: "\n").map(String.init)
    #expect(lines.count == 2, "\(lines)")
    #expect(
      lines.first?.hasPrefix("warning: \(directory)/aprs-cloud.ini: Web Push and UnifiedPush are off") == true
    )
    #expect(lines.last == "\(directory)/aprs-cloud.ini: 0 errors, 1 warning: the programs start")

    let good = try checkConfig(
      previous + "\n[messaging.webpush]\nsubject = mailto:ops@example.org\n", in: directory)
    #expect(good.status == 0, "\(good.stdoutText)")
    #expect(good.stdoutText == "\(directory)/aprs-cloud.ini: ok\n")

    let bad = try checkConfig(
      previous + "colour = blue\n[messaging.webpush]\nenabled = true\n[server]\nlogLevel = loud\n",
      in: directory)
    #expect(bad.status == 2, "\(bad.stdoutText)")
    let text = bad.stdoutText
    #expect(text.contains("error: ") && text.contains("server.logLevel"), "\(text)")
    #expect(text.contains("messaging.webpush.subject is not set: Web Push is on by default"), "\(text)")
    #expect(text.contains("warning: ") && text.contains("unknown key colour in [aprsis]"), "\(text)")
    #expect(text.contains("server.logLevel is set again; the value from line 7 is ignored"), "\(text)")
    #expect(text.hasSuffix(": the programs would not start\n"), "\(text)")

    let wrongPasscode = try checkConfig(
      previous.replacingOccurrences(of: "passcode = 13023", with: "passcode = 12345")
        + "[messaging.webpush]\nenabled = false\n", in: directory)
    #expect(wrongPasscode.status == 0, "\(wrongPasscode.stdoutText)")
    #expect(wrongPasscode.stdoutText.contains("[aprsis] passcode does not match [aprsis] login N0CALL-10"))

    let origin = try checkConfig(
      previous.replacingOccurrences(of: "workers = 4", with: "workers = 4\nallowedOrigins = ftp://x")
        + "[messaging.webpush]\nenabled = false\n", in: directory)
    #expect(origin.status == 2, "\(origin.stdoutText)")
    #expect(origin.stdoutText.contains("error: [server] allowedOrigins: ftp://x is not an origin"))

    let missing = try checkConfig(nil, in: directory)
    #expect(missing.status == 2)
    #expect(missing.stdoutText.hasPrefix("error: cannot read config file \(directory)/missing.ini"))

    let usage = try runProcess(
      try TestPaths.executable("aprs-cloud"), ["check-config"], environment: Self.cleanEnvironment,
      timeout: 10)
    #expect(usage.status == 2 && usage.stderrText.contains("usage: aprs-cloud check-config FILE"))
  }
}
