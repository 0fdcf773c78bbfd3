import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Forwarding end to end: targets saved through nginx and the real responder, the email address confirmed with
/// the code from its mail, and messages from the APRS-IS fake forwarded by the real `aprs-listener` to the fake
/// HTTPS receiver and SMTPS server (the test run's own CA): each within 2 s, signed so that Python's hmac accepts
/// it, station by station, never a blocked sender's, nothing transmitted on APRS-IS, and counted in `/metrics`.
@Suite(.serialized) struct ForwardEndToEndTests {
  static let secret = "end-to-end-webhook-secret-42"

  /// Both programs' configuration: the fake APRS-IS, pushes at once, forwards over the fake's CA to its private
  /// address, and with `email` its SMTP server.
  static func config(_ fake: ForwardFakeProcess, _ aprsis: FakeAPRSIS, email: Bool) -> String {
    ListenerProcess.config(fake: aprsis, login: "TESTING", passcode: 31421)
      + """

      [messaging]
      coalesceWindow = 0

      [forward]
      caFile = \(fake.directory)/ca.pem
      allowPrivateEndpoints = true

      """
      + (email
        ? """
        [forward.email]
        url = smtps://127.0.0.1:\(fake.smtpPort)
        from = aprs@example.org
        username = aprs
        password = test-password

        """ : "")
  }

  @Test func messagesReachTheirStationsTargetsAndBlockedSendersNone() throws {
    let fake = try ForwardFakeProcess()
    defer { fake.stop() }
    let aprsis = try FakeAPRSIS()
    defer { aprsis.stop() }
    let directory = try makeTemporaryDirectory("forward-config")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let config = Self.config(fake, aprsis, email: true)
    let path = directory + "/aprs-cloud.ini"
    try config.write(toFile: path, atomically: true, encoding: .utf8)
    let stack = try TestStack(.real(arguments: ["--config", path]))
    defer { stack.stop() }

    // /v1/info names the target types this server forwards to.
    let info = try #require(try stack.get("/v1/info").jsonObject)
    #expect(info["forward"] == .array([.string("email"), .string("ntfy"), .string("webhook")]), "\(info)")
    let a = try Self.claimed(stack, ssid: 7)
    let b = try Self.claimed(stack, ssid: 8)
    // Hostile input is a 400 naming the field, through nginx too.
    let hostile = try stack.post(
      "/v1/settings",
      json: #"{\#(a.identity),"forward":[{"type":"webhook","url":"\#(fake.url("/a"))","secret":"x"}]}"#,
      headers: a.bearer)
    #expect(
      hostile.status == 400 && hostile.errorMessage?.contains("forward[0].secret") == true, "\(hostile.text)")
    let saved = try stack.post(
      "/v1/settings",
      json: #"""
        {\#(a.identity),"blocked":["KJ7BAD"],"forward":[{"type":"webhook","url":"\#(fake.url("/a"))","secret":"\#(Self.secret)"},
        {"type":"email","to":"owner@example.org"}]}
        """#, headers: a.bearer)
    #expect(saved.status == 200, "\(saved.text)")
    #expect(!saved.text.contains(Self.secret), "the secret is never answered")
    guard case .array(let targets)? = saved.jsonObject?["forward"], targets.count == 2,
      case .object(let email) = targets[1], let emailID = email.string("id")
    else { throw TestFailure("no targets: \(saved.text)") }
    #expect(email.string("status") == "unconfirmed")
    let savedB = try stack.post(
      "/v1/settings",
      json:
        #"{\#(b.identity),"ackPolicy":"server","forward":[{"type":"webhook","url":"\#(fake.url("/b"))","secret":"\#(Self.secret)"}]}"#,
      headers: b.bearer)
    #expect(savedB.status == 200, "\(savedB.text)")

    let listener = try ListenerProcess(database: stack.databasePath, config: config)
    defer { listener.stop() }
    #expect(try aprsis.wait("login", count: 1), "no login:\n\(listener.log)")

    // The confirmation mail, and its code entered through the API.
    #expect(try fake.waitMail(count: 1), "no confirmation mail:\n\(listener.log)")
    let confirmation = try fake.mails().first?.string("data") ?? ""
    let code = try #require(
      confirmation.split(separator: "\r\n").first { $0.hasPrefix("    ") }?.trimmingCharacters(
        in: .whitespaces))
    let wrong = try stack.post(
      "/v1/forward/confirm", json: #"{\#(a.identity),"id":"\#(emailID)","code":"000000"}"#, headers: a.bearer)
    #expect(wrong.status == 400 || code == "000000", "\(wrong.text)")
    let confirmed = try stack.post(
      "/v1/forward/confirm", json: #"{\#(a.identity),"id":"\#(emailID)","code":"\#(code)"}"#,
      headers: a.bearer)
    #expect(confirmed.status == 200 && confirmed.text.contains(#""status":"active""#), "\(confirmed.text)")

    // A blocked sender first, then a message for each station.
    let start = Date()
    #expect(
      try aprsis.inject([
        "KJ7BAD>APRS,TCPIP*::N0CALL-7 :Blocked one{1",
        "KJ7ABC-7>APRS,TCPIP*::N0CALL-7 :Hello A{7",
        "KJ7ABC-7>APRS,TCPIP*::N0CALL-8 :Hello B{8",
      ]) == 3)
    #expect(try fake.wait(path: "/a", count: 1, timeoutMs: 2000), "\(listener.log)")
    #expect(try fake.wait(path: "/b", count: 1, timeoutMs: 2000), "\(listener.log)")
    #expect(try fake.waitMail(count: 2, timeoutMs: 2000), "\(listener.log)")
    #expect(Date().timeIntervalSince(start) < 2.5)

    let hook = try #require(try fake.requests("/a").first)
    let body = try #require(hook.string("body"))
    #expect(body.contains(#""station":"N0CALL-7""#) && body.contains(#""from":"KJ7ABC-7""#), "\(body)")
    #expect(body.contains(#""text":"Hello A""#) && body.contains(#""seqId":"7""#), "\(body)")
    guard case .object(let headers)? = hook["headers"],
      let signature = headers.string("x-aprs-cloud-signature")
    else { throw TestFailure("no signature: \(hook)") }
    #expect(
      try fake.hmacAccepts(
        signature: signature, bodyBase64: hook.string("bodyBase64") ?? "", secret: Self.secret))
    #expect(try fake.requests("/b").first?.string("body")?.contains("Hello B") == true)
    let mail = try fake.mails().last?.string("data") ?? ""
    #expect(mail.contains("Subject: APRS from KJ7ABC-7") && mail.contains("Hello A"), "\(mail)")

    // Nothing more comes: not the blocked sender's, not A's at B or B's at A.
    let all = try fake.requests()
    #expect(all.count == 2 && !all.contains { $0.string("body")?.contains("Blocked") == true }, "\(all)")
    #expect(try fake.mails().count == 2)
    // Forwarding transmits nothing on APRS-IS and changes no ACK: B (ackPolicy server) ACKs its message once,
    // A (never) nothing; no other line goes out.
    #expect(try aprsis.wait("transmitted", count: 1), "\(listener.log)")
    let transmitted = try aprsis.transmitted()
    #expect(transmitted.count == 1, "\(transmitted)")
    #expect(try aprsis.ackLines().count == 1 && aprsis.ackLines().first?.contains(":ack8") == true)

    let metrics = try stack.metrics().text
    let webhooks = #"aprs_cloud_forwards_total{type="webhook",outcome="delivered"} 2"#
    #expect(metrics.contains(webhooks), "\(metrics)")
    #expect(metrics.contains(#"aprs_cloud_forwards_total{type="email",outcome="delivered"} 1"#))
    #expect(metrics.contains(#"aprs_cloud_forwards_total{type="email",outcome="confirmation"} 1"#))
    #expect(listener.terminate() == 0)
  }

  /// The answers of the services, end to end: a revoked ntfy token disables its target after one refusal (the
  /// settings answer, `/metrics` and the logs say why), a webhook's 308 is never followed and shows `failing` with
  /// the Location, and another station's good token at the same ntfy server keeps working, though the fake ntfy
  /// refuses this address's tokens after 2 failed logins as ntfy does after 30.
  @Test func refusedTokensAndRedirectsEndInTheirStatusAndNeverAffectAnotherStation() throws {
    let fake = try ForwardFakeProcess()
    defer { fake.stop() }
    let aprsis = try FakeAPRSIS()
    defer { aprsis.stop() }
    let directory = try makeTemporaryDirectory("forward-answers")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let config = Self.config(fake, aprsis, email: false)
    let path = directory + "/aprs-cloud.ini"
    try config.write(toFile: path, atomically: true, encoding: .utf8)
    let stack = try TestStack(.real(arguments: ["--config", path]))
    defer { stack.stop() }
    try fake.control(
      "POST", "/control/ntfy", #"{"path":"/ntfy/a","token":"tk_new_a_12345","authFailureLimit":2}"#)
    try fake.control("POST", "/control/ntfy", #"{"path":"/ntfy/b","token":"tk_good_b_6789"}"#)
    let location = fake.url("/hook/new")
    try fake.control(
      "POST", "/control/script",
      #"{"path":"/hook/moved","status":308,"times":100,"headers":{"Location":"\#(location)"}}"#)
    let a = try Self.claimed(stack, ssid: 7)
    let b = try Self.claimed(stack, ssid: 8)
    let savedA = try stack.post(
      "/v1/settings",
      json: #"""
        {\#(a.identity),"forward":[{"type":"ntfy","url":"\#(fake.url("/ntfy/a"))","token":"tk_old_a_00000"},
        {"type":"webhook","url":"\#(fake.url("/hook/moved"))","secret":"\#(Self.secret)"}]}
        """#, headers: a.bearer)
    #expect(savedA.status == 200, "\(savedA.text)")
    let savedB = try stack.post(
      "/v1/settings",
      json:
        #"{\#(b.identity),"forward":[{"type":"ntfy","url":"\#(fake.url("/ntfy/b"))","token":"tk_good_b_6789"}]}"#,
      headers: b.bearer)
    #expect(savedB.status == 200, "\(savedB.text)")

    let listener = try ListenerProcess(database: stack.databasePath, config: config)
    defer { listener.stop() }
    #expect(try aprsis.wait("login", count: 1), "no login:\n\(listener.log)")
    #expect(
      try aprsis.inject([
        "KJ7ABC-7>APRS,TCPIP*::N0CALL-7 :One{1", "KJ7ABC-7>APRS,TCPIP*::N0CALL-7 :Two{2",
        "KJ7ABC-7>APRS,TCPIP*::N0CALL-7 :Three{3", "KJ7ABC-7>APRS,TCPIP*::N0CALL-8 :For B{4",
      ]) == 4)
    #expect(try fake.wait(path: "/ntfy/b", count: 1), "\(listener.log)")
    #expect(try fake.wait(path: "/hook/moved", count: 1), "\(listener.log)")
    #expect(try aprsis.inject(["KJ7ABC-7>APRS,TCPIP*::N0CALL-8 :Again B{5"]) == 1)
    #expect(try fake.wait(path: "/ntfy/b", count: 2), "\(listener.log)")
    #expect(try fake.requests("/ntfy/b").allSatisfy { $0.int("status") == 200 })
    #expect(try fake.requests("/ntfy/a").count == 1, "the refused token went once")
    #expect(try fake.requests("/hook/new").isEmpty, "a redirect is never followed")

    // The listener writes the statuses with its round's bookkeeping: a bounded wait for them.
    var list: [JSONValue] = []
    var settled = false
    for _ in 0..<50 where !settled {
      let answer = try stack.post("/v1/settings", json: "{\(a.identity)}", headers: a.bearer)
      if case .array(let targets)? = answer.jsonObject?["forward"] { list = targets }
      settled = answer.text.contains(#""status":"disabled""#) && answer.text.contains(#""status":"failing""#)
      if !settled { usleep(100_000) }
    }
    #expect(settled, "\(list)\n\(listener.log)")
    guard case .object(let ntfy)? = list.first, case .object(let hook)? = list.last else {
      throw TestFailure("\(list)")
    }
    #expect(ntfy.string("reasonCode") == "auth_refused", "\(ntfy)")
    #expect(ntfy.string("reason")?.contains("401 ntfy refused the access token (40101") == true, "\(ntfy)")
    #expect(hook.string("reasonCode") == "redirect" && hook.string("reason")?.contains(location) == true)
    let metrics = try stack.metrics().text
    #expect(
      metrics.contains(#"aprs_cloud_forward_targets{type="ntfy",status="disabled",reason="auth_refused"} 1"#),
      "\(metrics)")
    #expect(
      metrics.contains(#"aprs_cloud_forward_targets{type="webhook",status="failing",reason="redirect"} 1"#))
    #expect(metrics.contains(#"aprs_cloud_forward_targets{type="ntfy",status="active",reason=""} 1"#))
    #expect(listener.log.contains("forward target disabled"), "\(listener.log)")
    #expect(listener.terminate() == 0)
  }

  /// Registers CALL-`ssid` (N0CALL) through the stack and claims it: identity fields and the bearer header.
  static func claimed(_ stack: TestStack, ssid: Int) throws -> (identity: String, bearer: [String]) {
    let identity = #""callsign":"N0CALL","ssid":\#(ssid),"auth":"13023""#
    let registered = try stack.post(
      "/v1/register",
      json: #"{\#(identity),"platform":"android","pushToken":"","wantHistory":false,"since":0}"#)
    #expect(registered.status == 200, "\(registered.text)")
    let claim = try stack.post("/v1/claim", json: "{\(identity)}")
    let key = try #require(claim.jsonObject?.string("stationKey"), "\(claim.text)")
    return (identity, ["Authorization: Bearer \(key)"])
  }
}

/// `Tests/fakes/forward_fake.py serve` run with the test venv's python (`make deps-test`), with a certificate of
/// the test run's own CA (`make_push_credentials.sh`).
final class ForwardFakeProcess: @unchecked Sendable {
  let directory: String
  let httpsPort: Int
  let smtpPort: Int
  let controlPort: Int
  private let fake: FakeServiceProcess

  init() throws {
    directory = try makeFakeCredentials("forwardfake")
    fake = try FakeServiceProcess(
      "forward fake", executable: try testPython(),
      arguments: [TestPaths.packageRoot + "/Tests/fakes/forward_fake.py", "serve", "--dir", directory],
      directory: directory, portNames: ["https_port", "smtp_port", "control_port"])
    (httpsPort, smtpPort, controlPort) = (
      fake.port("https_port"), fake.port("smtp_port"), fake.port("control_port")
    )
  }

  func stop() {
    fake.stop()
    try? FileManager.default.removeItem(atPath: directory)
  }

  func url(_ path: String) -> String { "https://127.0.0.1:\(httpsPort)\(path)" }

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

  func wait(path: String, count: Int, timeoutMs: Int = 10_000) throws -> Bool {
    let answer = try control(
      "POST", "/control/wait",
      #"{"kind":"http","path":"\#(path)","count":\#(count),"timeoutMs":\#(timeoutMs)}"#,
      timeout: Double(timeoutMs) / 1000 + 5)
    return answer["ok"] == .bool(true)
  }

  func waitMail(count: Int, timeoutMs: Int = 10_000) throws -> Bool {
    let answer = try control(
      "POST", "/control/wait", #"{"kind":"mail","count":\#(count),"timeoutMs":\#(timeoutMs)}"#,
      timeout: Double(timeoutMs) / 1000 + 5)
    return answer["ok"] == .bool(true)
  }

  func requests(_ path: String? = nil) throws -> [JSONObject] {
    let query = path.map { "?path=\($0)" } ?? ""
    guard case .array(let items)? = try control("GET", "/control/requests" + query)["requests"] else {
      return []
    }
    return items.compactMap { if case .object(let object) = $0 { object } else { nil } }
  }

  func mails() throws -> [JSONObject] {
    guard case .array(let items)? = try control("GET", "/control/mails")["mails"] else { return [] }
    return items.compactMap { if case .object(let object) = $0 { object } else { nil } }
  }

  /// The signature checked by Python's own `hmac` over the raw body as received.
  func hmacAccepts(signature: String, bodyBase64: String, secret: String) throws -> Bool {
    let script = """
      import base64, hmac, hashlib, sys
      header, body, secret = sys.argv[1], base64.b64decode(sys.argv[2]), sys.argv[3].encode()
      parts = dict(item.split("=", 1) for item in header.split(","))
      expected = hmac.new(secret, parts["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
      print("ok" if hmac.compare_digest(expected, parts["v1"]) else "bad")
      """
    let result = try runProcess(try testPython(), ["-c", script, signature, bodyBase64, secret])
    return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "ok"
  }
}
