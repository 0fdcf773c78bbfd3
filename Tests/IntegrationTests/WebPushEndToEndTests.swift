import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Web Push end to end: a browser subscription registers through nginx and the real responder, the real
/// `aprs-listener` makes the VAPID key pair on its first start and publishes the public key beside it, the
/// responder's `GET /v1/info` shows that key, and a message from the APRS-IS fake arrives at the fake push
/// service encrypted for the subscription (decrypted there by http_ece) and signed with that key. The key stays
/// the same when the listener restarts.
@Suite(.serialized) struct WebPushEndToEndTests {
  @Test func aBrowserSubscriptionGetsTheMessageEncryptedAndSignedWithThePublishedKey() throws {
    let pushService = try WebPushServiceProcess()
    defer { pushService.stop() }
    let aprsis = try FakeAPRSIS()
    defer { aprsis.stop() }
    let (stack, config, configDirectory) = try pushService.stack(aprsis, allowPrivate: true)
    defer { try? FileManager.default.removeItem(atPath: configDirectory) }
    defer { stack.stop() }

    // Before the listener ever ran there is no key, so no Web Push feature yet, and no login that could
    // transmit, so no `send` either; GET, POST and HEAD answer.
    let early = try #require(try stack.get("/v1/info").jsonObject)
    #expect(early.string("server") == "aprs-cloud")
    #expect(early.string("protocolVersion") == "1.6", "\(early)")
    #expect(
      early["features"] == .array([.string("longpoll"), .string("settings"), .string("claim")]), "\(early)")
    #expect(early["vapidPublicKey"] == nil)
    #expect(try stack.post("/v1/info", json: "{}").status == 200)
    #expect(try stack.get("/v1/info", method: "HEAD", arguments: ["--head"]).status == 200)
    let put = try stack.get("/v1/info", method: "PUT")
    #expect(put.status == 405 && put.errorMessage != nil)
    #expect(put.header("allow") == "GET, HEAD, POST")
    #expect(try stack.get("/v1/sync").status == 405)

    // The browser subscribes and registers; a subscription without keys is refused.
    let subscription = try pushService.subscribe()
    let register = try stack.post("/v1/register", json: subscription.registerBody(ssid: 7))
    #expect(register.status == 200, "\(register.text)")
    let keyless = try stack.post(
      "/v1/register",
      json:
        #"{"callsign":"N0CALL","ssid":8,"platform":"webpush","pushToken":"\#(subscription.endpoint)","auth":"13023"}"#
    )
    #expect(keyless.status == 400 && keyless.errorMessage?.contains("pushKeys") == true, "\(keyless.text)")

    // The listener's first start makes the key pair; the responder shows the public half.
    var listener = try ListenerProcess(database: stack.databasePath, config: config)
    defer { listener.stop() }
    #expect(try aprsis.wait("login", count: 1), "no login:\n\(listener.log)")
    #expect(listener.waitForLog("push provider ready\" platform=webpush"), "\(listener.log)")
    let keyFile = FileModesProbe(path: stack.directory + "/vapid.pem")
    #expect(keyFile.mode == 0o600)
    // `send` once the listener published its verified login (every publishInterval).
    let everything: JSONValue = .array([
      .string("longpoll"), .string("send"), .string("webpush"), .string("unifiedpush"), .string("settings"),
      .string("claim"),
    ])
    #expect(waitUntil(timeout: 5) { (try? stack.get("/v1/info").jsonObject?["features"]) == everything })
    let info = try #require(try stack.get("/v1/info").jsonObject)
    #expect(info["features"] == everything, "\(info)")
    let key = try #require(info.string("vapidPublicKey"), "\(info)")
    #expect(key.count == 87 && key.hasPrefix("B"))

    // A message for the station: one push, decrypted by http_ece, VAPID signed with the published key.
    #expect(try aprsis.inject(["KJ7ABC-7>APRS,TCPIP*::N0CALL-7 :Hello via Web Push{7"]) == 1)
    #expect(try pushService.wait(count: 1, status: 201), "no push:\n\(listener.log)")
    let request = try #require(try pushService.requests().first)
    let message = try #require(request["json"].flatMap { if case .object(let o) = $0 { o } else { nil } })
    #expect(message.string("fromCall") == "KJ7ABC-7")
    #expect(message.string("to") == "N0CALL-7")
    #expect(message.string("seqId") == "7")
    #expect(message.string("body") == "Hello via Web Push")
    let vapid = try #require(request["vapid"].flatMap { if case .object(let o) = $0 { o } else { nil } })
    #expect(vapid.string("k") == key)
    #expect(vapid.string("aud") == "https://127.0.0.1:\(pushService.port)")
    let headers = try #require(request["headers"].flatMap { if case .object(let o) = $0 { o } else { nil } })
    #expect(headers.string("urgency") == "high")
    #expect(headers.string("content-encoding") == "aes128gcm")

    // A restart keeps the key: the responder shows the same one, and the next push is signed with it.
    #expect(listener.terminate() == 0)
    listener = try ListenerProcess(database: stack.databasePath, config: config, label: "listener2")
    #expect(listener.waitForLog("push provider ready\" platform=webpush"), "\(listener.log)")
    #expect(!listener.log.contains("made a new VAPID key pair"))
    #expect(try stack.get("/v1/info").jsonObject?.string("vapidPublicKey") == key)
    #expect(try aprsis.wait("login", count: 2), "no second login:\n\(listener.log)")
    #expect(try aprsis.inject(["KJ7ABC-7>APRS,TCPIP*::N0CALL-7 :Again{8"]) >= 1)
    #expect(try pushService.wait(count: 2, status: 201), "no second push:\n\(listener.log)")
    let second = try pushService.requests().last
    #expect(
      second?["vapid"].flatMap { if case .object(let o) = $0 { o.string("k") } else { nil } } == key)
  }
}

/// A file's permission bits.
private struct FileModesProbe {
  let path: String
  var mode: mode_t? {
    var info = stat()
    return stat(path, &info) == 0 ? info.st_mode & 0o777 : nil
  }
}

/// `Tests/fakes/webpush_fake.py serve` run with the test venv's python (`make deps-test`).
extension WebPushServiceProcess {
  /// The stack (nginx + responder) for a Web Push test with this push service, the listener's config (Web Push
  /// on, trusting this service's CA, pushes at once) and the folder of the config file the responder reads
  /// (the caller removes it).
  func stack(_ aprsis: FakeAPRSIS, allowPrivate: Bool) throws -> (TestStack, String, String) {
    let directory = try makeTemporaryDirectory("webpush-config")
    let config =
      ListenerProcess.config(
        fake: aprsis, login: "TESTING", passcode: 31421,
        webPush: """
          subject = mailto:ops@example.org
          caFile = \(self.directory)/ca.pem
          allowPrivateEndpoints = \(allowPrivate)

          """)
        + """

        [messaging]
        coalesceWindow = 0

        """
    let path = directory + "/aprs-cloud.ini"
    try config.write(toFile: path, atomically: true, encoding: .utf8)
    return (try TestStack(.real(arguments: ["--config", path])), config, directory)
  }
}

final class WebPushServiceProcess: @unchecked Sendable {
  let directory: String
  let port: Int
  let controlPort: Int
  private let fake: FakeServiceProcess

  struct Subscription {
    var endpoint: String
    var p256dh: String
    var auth: String

    /// `/v1/register` as a web client sends it: `PushSubscription.toJSON()`'s endpoint and keys.
    func registerBody(ssid: Int) -> String {
      #"{"callsign":"N0CALL","ssid":\#(ssid),"platform":"webpush","pushToken":"\#(endpoint)","#
        + #""pushKeys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"},"wantHistory":false,"since":0,"auth":"13023"}"#
    }
  }

  init() throws {
    directory = try makeFakeCredentials("webpushfake")
    fake = try FakeServiceProcess(
      "web push fake", executable: try testPython(),
      arguments: [TestPaths.packageRoot + "/Tests/fakes/webpush_fake.py", "serve", "--dir", directory],
      directory: directory, portNames: ["port", "control_port"])
    (port, controlPort) = (fake.port("port"), fake.port("control_port"))
  }

  func stop() {
    fake.stop()
    try? FileManager.default.removeItem(atPath: directory)
  }

  @discardableResult
  func control(_ method: String, _ path: String, _ body: String? = nil, timeout: Double = 20) throws
    -> JSONObject
  {
    let response = try Curl.request(
      method, "http://127.0.0.1:\(controlPort)\(path)", body: body.map { Data($0.utf8) },
      headers: ["content-type: application/json"], timeout: timeout)
    guard let object = response.jsonObject else { throw TestFailure("control \(path): \(response.text)") }
    return object
  }

  func subscribe() throws -> Subscription {
    let answer = try control("POST", "/control/subscribe", "{}")
    guard let endpoint = answer.string("endpoint"), let p256dh = answer.string("p256dh"),
      let auth = answer.string("auth")
    else { throw TestFailure("subscribe: \(answer)") }
    return Subscription(endpoint: endpoint, p256dh: p256dh, auth: auth)
  }

  func wait(count: Int, status: Int, timeoutMs: Int = 15_000) throws -> Bool {
    let answer = try control(
      "POST", "/control/wait", #"{"count":\#(count),"status":\#(status),"timeoutMs":\#(timeoutMs)}"#,
      timeout: Double(timeoutMs) / 1000 + 5)
    return answer["ok"] == .bool(true)
  }

  func requests() throws -> [JSONObject] {
    guard case .array(let items)? = try control("GET", "/control/requests")["requests"] else { return [] }
    return items.compactMap { if case .object(let object) = $0 { object } else { nil } }
  }
}
