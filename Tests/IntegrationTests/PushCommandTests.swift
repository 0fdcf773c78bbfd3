import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The operator's push commands against the real stack: devices registered through nginx and the
/// responder, `aprs-cloud push-test` and `aprs-cloud push-worker` talking to the fake providers
/// over TLS and HTTP/2, and `/health` showing what the sender published.
@Suite(.serialized) struct PushCommandTests {
  static let apnsToken = String(repeating: "ab", count: 32)

  func register(_ stack: TestStack, platform: String, token: String) throws {
    let response = try stack.post(
      "/v1/register",
      json:
        #"{"callsign":"N0CALL","ssid":7,"platform":"\#(platform)","pushToken":"\#(token)","ackMessages":false,"wantHistory":false,"since":0,"auth":"13023"}"#
    )
    #expect(response.status == 200, "\(response.text)")
  }

  func writeConfig(
    _ path: String, database: String, fake: PushProviderFake, iosKeyFile: String = "AuthKey_TESTKEY123.p8"
  )
    throws
  {
    try """
    [server]
    database = \(database)
    [messaging.android]
    serviceAccountFile = \(fake.directory)/service-account.json
    endpoint = https://127.0.0.1:\(fake.port)
    caFile = \(fake.directory)/ca.pem
    [messaging.ios.apns]
    keyFile = \(fake.directory)/\(iosKeyFile)
    keyId = TESTKEY123
    teamId = TEAM123456
    bundleId = org.example.htcommander
    endpoint = https://localhost:\(fake.port)
    caFile = \(fake.directory)/ca.pem
    [messaging.webpush]
    enabled = false
    """.write(toFile: path, atomically: true, encoding: .utf8)
  }

  /// Web Push turned on by hand (`enabled = true`) without its contact: the push commands refuse the
  /// configuration as the listener does, with the same message. (Without `enabled`, it starts off, warned.)
  @Test func pushCommandsRefuseWebPushWithoutASubjectAsTheListenerDoes() throws {
    let directory = try makeTemporaryDirectory("push-subject")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let config = directory + "/push.ini"
    try "[server]\ndatabase = \(directory)/aprs.sqlite\n[messaging.webpush]\nenabled = true\n".write(
      toFile: config, atomically: true, encoding: .utf8)
    let message =
      "\(config): messaging.webpush.subject is not set: Web Push is on by default and needs a contact for the "
      + "push services: set `subject = mailto:you@example.org` (or https://…) in [messaging.webpush], or "
      + "`enabled = false` there"
    let cli = try TestPaths.executable("aprs-cloud")
    let pushTest = try runProcess(cli, ["push-test", "N0CALL-7", "--config", config])
    #expect(pushTest.status == 1 && pushTest.stderrText.contains(message), "\(pushTest.stderrText)")
    let worker = try runProcess(cli, ["push-worker", "--config", config])
    #expect(worker.status == 1 && worker.stderrText.contains(message), "\(worker.stderrText)")
    let listener = try runProcess(
      try TestPaths.executable("aprs-listener"), ["--config", config, "--db", directory + "/aprs.sqlite"])
    #expect(listener.status == 2 && listener.stderrText.contains(message), "\(listener.stderrText)")
  }

  @Test func pushTestSendsToEveryRegisteredDeviceAndPrintsEachAnswer() throws {
    let stack = try TestStack()
    defer { stack.stop() }
    let fake = try PushProviderFake()
    defer { fake.stop() }
    try register(stack, platform: "android", token: "fcm-token-1")
    try register(stack, platform: "ios", token: Self.apnsToken)
    let config = fake.directory + "/push.ini"
    try writeConfig(config, database: stack.databasePath, fake: fake)
    let cli = try TestPaths.executable("aprs-cloud")

    let ok = try runProcess(cli, ["push-test", "n0call-7", "--config", config])
    #expect(ok.status == 0, "\(ok.stdoutText) \(ok.stderrText)")
    #expect(ok.stdoutText.contains("android …-token-1: 200 accepted (projects/aprs-cloud-test/messages/"))
    #expect(ok.stdoutText.contains("ios …abababab: 200 accepted"))
    #expect(try fake.count("fcm") == 1)
    #expect(try fake.count("apns") == 1)

    try fake.control("POST", "/control/script", #"{"role":"fcm","status":404}"#)
    let dead = try runProcess(cli, ["push-test", "N0CALL-7", "--config", config])
    #expect(dead.status == 1)
    #expect(
      dead.stdoutText.contains("android …-token-1: 404 404 UNREGISTERED (the token is dead)"),
      "\(dead.stdoutText)")
    #expect(dead.stdoutText.contains("ios …abababab: 200 accepted"))

    let nobody = try runProcess(cli, ["push-test", "W5AGO", "--config", config])
    #expect(nobody.status == 1)
    #expect(nobody.stdoutText.contains("W5AGO: no devices registered"))
    #expect(try runProcess(cli, ["push-test", "--config", config]).status == 2)
  }

  @Test func healthShowsWhatThePushWorkerPublished() throws {
    let stack = try TestStack()
    defer { stack.stop() }
    let fake = try PushProviderFake()
    defer { fake.stop() }
    let before = try #require(try stack.get("/health").jsonObject)
    guard case .object(let off)? = before["push"] else { throw TestFailure("no push object: \(before)") }
    #expect(off["android"] == .string("off") && off["ios"] == .string("off"))

    let config = fake.directory + "/push.ini"
    try writeConfig(config, database: stack.databasePath, fake: fake, iosKeyFile: "missing.p8")
    let worker = try TestStack.launch(
      try TestPaths.executable("aprs-cloud"), ["push-worker", "--config", config],
      output: fake.directory + "/worker.log")
    defer { if worker.isRunning { kill(worker.processIdentifier, SIGKILL) } }
    var push: JSONObject?
    let published = waitUntil(timeout: 10, interval: 0.1) {
      guard case .object(let object)? = (try? stack.get("/health"))?.jsonObject?["push"] else { return false }
      push = object
      return object["android"] == .string("ok")
    }
    #expect(published, "\(String(describing: push))")
    guard case .string(let ios)? = push?["ios"] else { throw TestFailure("no ios state") }
    #expect(ios.hasPrefix("stopped: messaging.ios.apns.keyFile: cannot read"), "\(ios)")
    kill(worker.processIdentifier, SIGTERM)
    #expect(waitUntil(timeout: 10) { !worker.isRunning })
    worker.waitUntilExit()
    #expect(worker.terminationStatus == 0)
  }
}

/// `Tests/fakes/push_fake.mjs` with credentials made for it (see `make_push_credentials.sh`): FCM and APNs
/// production on `port`, the APNs sandbox on `sandboxPort`.
final class PushProviderFake: @unchecked Sendable {
  let directory: String
  let port: Int
  let sandboxPort: Int
  let controlPort: Int
  private let fake: FakeServiceProcess

  init() throws {
    directory = try makeFakeCredentials("pushfake")
    let node = ["/usr/bin/node", "/usr/local/bin/node"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
    guard let node else { throw TestFailure("node is not installed (make deps)") }
    fake = try FakeServiceProcess(
      "push fake", executable: node,
      arguments: [
        TestPaths.packageRoot + "/Tests/fakes/push_fake.mjs", "--dir", directory, "--sandbox-port", "0",
      ],
      directory: directory, portNames: ["port", "control_port", "sandbox_port"])
    (port, controlPort, sandboxPort) = (
      fake.port("port"), fake.port("control_port"), fake.port("sandbox_port")
    )
    let rewritten = try runProcess(
      "/bin/sh", [fakeCredentialsScript, directory, "https://127.0.0.1:\(port)"])
    guard rewritten.status == 0 else { throw TestFailure("credentials: \(rewritten.stderrText)") }
  }

  func stop() {
    fake.stop()
    try? FileManager.default.removeItem(atPath: directory)
  }

  @discardableResult
  func control(_ method: String, _ path: String, _ body: String? = nil) throws -> JSONObject {
    let response = try Curl.request(
      method, "http://127.0.0.1:\(controlPort)\(path)", body: body.map { Data($0.utf8) },
      headers: ["content-type: application/json"])
    guard let object = response.jsonObject else { throw TestFailure("control \(path): \(response.text)") }
    return object
  }

  /// Requests of `role` recorded so far.
  func count(_ role: String) throws -> Int {
    guard case .array(let items)? = try control("GET", "/control/requests?role=\(role)")["requests"] else {
      return 0
    }
    return items.count
  }
}
