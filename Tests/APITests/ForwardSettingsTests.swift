import API
import Foundation
import JSON
import Store
import TestSupport
import Testing

/// `forward` in `POST /v1/settings` and `POST /v1/forward/confirm`: targets stored and answered with their
/// secrets masked, ids kept, the email confirmation flow, and every bad or hostile value a 400 naming the field
/// with nothing changed.
@Suite struct ForwardSettingsTests {
  static func fixture(email: Bool = true, allowPrivate: Bool = false) throws -> APIFixture {
    var config = APIConfig()
    config.forwardEmail = email
    config.allowPrivateForwardEndpoints = allowPrivate
    let fixture = try APIFixture(config: config)
    let reply = fixture.post("/v1/register", registerBody(["wantHistory": false]))
    #expect(reply.status == 200, "\(reply.text)")
    fixture.claim(APIFixture.settingsIdentity)
    return fixture
  }

  private func targets(_ reply: Reply) -> [[String: Any]] {
    let object = try? JSONSerialization.jsonObject(with: Data(reply.text.utf8)) as? [String: Any]
    return object?["forward"] as? [[String: Any]] ?? []
  }

  static let secret = "s3cret-for-the-webhook-0123456789"

  @Test func targetsAreStoredWithSecretsMaskedAndIdsKept() throws {
    let fixture = try Self.fixture()
    var reply = fixture.settings([
      "forward": [
        ["type": "email", "to": "me@example.org"],
        [
          "type": "ntfy", "url": "https://ntfy.example.org/mytopic", "token": "tk_abcdefghijk9876",
          "priority": 5,
        ],
        ["type": "webhook", "url": "https://hooks.example.org/aprs", "secret": Self.secret, "always": true],
      ]
    ])
    #expect(reply.status == 200, "\(reply.text)")
    #expect(!reply.text.contains(Self.secret) && !reply.text.contains("tk_abcdefghijk9876"), "\(reply.text)")
    var list = targets(reply)
    #expect(list.map { $0["type"] as? String } == ["email", "ntfy", "webhook"])
    #expect(list[0]["to"] as? String == "me@example.org" && list[0]["status"] as? String == "unconfirmed")
    #expect(list[1]["tokenHint"] as? String == "…9876" && list[1]["priority"] as? Int == 5)
    #expect(list[1]["status"] as? String == "active" && list[1]["always"] as? Bool == false)
    #expect(list[2]["secretHint"] as? String == "…6789" && list[2]["always"] as? Bool == true)
    #expect(list[2]["secret"] == nil && list[1]["token"] == nil)
    let ids = list.compactMap { $0["id"] as? String }
    #expect(Set(ids).count == 3)
    // Other settings leave them alone; kept by id (with only `always` changed), the rest dropped.
    reply = fixture.settings(["mutedUntil": 0])
    #expect(targets(reply).count == 3)
    reply = fixture.settings(["forward": [["id": ids[2], "always": false], ["id": ids[0]]]])
    list = targets(reply)
    #expect(list.map { $0["id"] as? String } == [ids[2], ids[0]], "\(reply.text)")
    #expect(list[0]["always"] as? Bool == false && list[0]["secretHint"] as? String == "…6789")
    #expect(list[1]["status"] as? String == "unconfirmed")
    // A new secret makes it a fresh target.
    reply = fixture.settings([
      "forward": [["id": ids[2], "type": "webhook", "secret": "another-secret-0000-1111"]]
    ])
    list = targets(reply)
    #expect(
      list.count == 1 && list[0]["id"] as? String != ids[2] && list[0]["secretHint"] as? String == "…1111")
    // The stored secret is the one given, in full, for the sender.
    let stored = try fixture.database.forwardTargets(of: "N0CALL-7")
    #expect(stored.first?.secret == "another-secret-0000-1111")
    // A webhook moved to another host needs its secret again: the old one never signs for the new host.
    let webhookID = try #require(list.first?["id"] as? String)
    reply = fixture.settings([
      "forward": [["id": webhookID, "type": "webhook", "url": "https://elsewhere.example.org/x"]]
    ])
    #expect(
      reply.status == 400 && reply["error"]?.stringValue?.contains("forward[0].secret") == true,
      "\(reply.text)")
    #expect(
      try fixture.database.forwardTargets(of: "N0CALL-7").first?.address == "https://hooks.example.org/aprs")
    // Another type needs its own address (and a webhook its secret); the old one's are not carried over.
    let ntfy = targets(
      fixture.settings([
        "forward": [["type": "ntfy", "url": "https://ntfy.example.org/t", "token": "tk_0123456789"]]
      ]))
    let ntfyID = try #require(ntfy.first?["id"] as? String)
    reply = fixture.settings(["forward": [["id": ntfyID], ["id": ntfyID]]])
    #expect(reply["error"]?.stringValue?.contains("forward[1].id") == true, "\(reply.text)")
    reply = fixture.settings(["forward": [["id": ntfyID, "type": "webhook"]]])
    #expect(
      reply.status == 400 && reply["error"]?.stringValue?.contains("forward[0]") == true, "\(reply.text)")
    reply = fixture.settings([
      "forward": [["id": ntfyID, "type": "webhook", "url": "https://h.example.org/x"]]
    ])
    #expect(
      reply.status == 400 && reply["error"]?.stringValue?.contains("forward[0].secret") == true,
      "\(reply.text)")
    reply = fixture.settings(["forward": [["id": ntfyID, "type": "email", "to": "me@example.org"]]])
    #expect(targets(reply).first?["status"] as? String == "unconfirmed", "\(reply.text)")
    reply = fixture.settings(["forward": [Any]()])
    #expect(reply.status == 200 && targets(reply).isEmpty)
  }

  static let badTargets: [(String, String)] = [
    (#"{"type":"fax","to":"me@example.org"}"#, #"forward[0].type must be "email", "ntfy" or "webhook""#),
    (#"{"to":"me@example.org"}"#, "forward[0].type is required"),
    (#"{"type":"email"}"#, "forward[0].to is required"),
    (#"{"type":"email","to":"not an address"}"#, "forward[0].to must be a mail address"),
    (#"{"type":"email","to":"me@example.org\r\nBcc: x@y.org"}"#, "forward[0].to must be a mail address"),
    (#"{"type":"email","to":"<me@example.org>"}"#, "forward[0].to must be a mail address"),
    (#"{"type":"email","to":7}"#, "forward[0].to must be a non-empty string"),
    (#"{"type":"webhook","url":"https://h.example.org/x"}"#, "forward[0].secret is required"),
    (#"{"type":"webhook","url":"https://h.example.org/x","secret":"short"}"#, "forward[0].secret must be 16"),
    (
      #"{"type":"webhook","url":"https://h.example.org/x","secret":"with space in the secret"}"#,
      "forward[0].secret must be 16"
    ),
    (
      #"{"type":"webhook","url":"http://h.example.org/x","secret":"0123456789abcdef"}"#,
      "forward[0].url must be"
    ),
    (
      #"{"type":"ntfy","url":"https://user:pw@ntfy.example.org/t"}"#, "forward[0].url must be an https:// URL"
    ),
    (#"{"type":"ntfy","url":"https://127.0.0.1/topic"}"#, "forward[0].url is on this machine or a private"),
    (#"{"type":"ntfy","url":"https://localhost:8443/topic"}"#, "forward[0].url is on this machine"),
    (#"{"type":"ntfy","url":"https://10.1.2.3/topic"}"#, "forward[0].url is on this machine"),
    (#"{"type":"ntfy","url":"https://[::1]/topic"}"#, "forward[0].url is on this machine"),
    (#"{"type":"ntfy","url":"https://169.254.169.254/latest"}"#, "forward[0].url is on this machine"),
    (#"{"type":"ntfy","url":"https://0x7f000001/t"}"#, "forward[0].url is on this machine"),
    // An ntfy URL with a query (`?auth=` is ntfy's token in the URL): the token goes as `token`.
    (
      #"{"type":"ntfy","url":"https://ntfy.example.org/t?auth=tk_secret0123"}"#,
      "forward[0].url must have no query (?…): send an access token as token"
    ),
    (#"{"type":"ntfy","url":"https://ntfy.example.org/t?"}"#, "forward[0].url must have no query"),
    (#"{"type":"ntfy","url":"https://ntfy.example.org?auth=x"}"#, "forward[0].url must have no query"),
    // A fragment never reaches the server: no forward URL has one.
    (#"{"type":"ntfy","url":"https://ntfy.example.org/t#auth=x"}"#, "forward[0].url must be an https:// URL"),
    (
      #"{"type":"webhook","url":"https://h.example.org/x#frag","secret":"0123456789abcdef"}"#,
      "forward[0].url must be an https:// URL"
    ),
    (#"{"type":"ntfy","url":"https://ntfy.example.org/t","priority":9}"#, "forward[0].priority must be"),
    (#"{"type":"ntfy","url":"https://ntfy.example.org/t","priority":"high"}"#, "forward[0].priority must be"),
    (#"{"type":"ntfy","url":"https://ntfy.example.org/t","always":"yes"}"#, "forward[0].always must be true"),
    (#"{"type":"ntfy","url":"https://ntfy.example.org/t","token":"a b"}"#, "forward[0].token must be"),
    (#"{"id":"f-unknown"}"#, "forward[0].id: no forward target f-unknown"),
    (#"{"id":"xxxxxxxxxxxxxxxxxxxxxxxx"}"#, "forward[0].id must be"),
    (#"{"url":"https://ntfy.example.org/t"}"#, "forward[0].type is required"),
    (#""https://ntfy.example.org/t""#, "forward[0] must be an object"),
  ]

  @Test(arguments: badTargets)
  func badTargetsAre400NamingTheFieldAndChangeNothing(target json: String, error: String) throws {
    let target = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
    let fixture = try Self.fixture()
    let before = fixture.settings([
      "forward": [["type": "ntfy", "url": "https://ntfy.example.org/keep"]]
    ])
    #expect(targets(before).count == 1)
    let reply = fixture.settings(["forward": [target], "mutedUntil": 1_800_000_360_000])
    #expect(reply.status == 400, "\(reply.text)")
    #expect(reply["error"]?.stringValue?.contains(error) == true, "\(reply.text)")
    let after = fixture.settings()
    #expect(targets(after).map { $0["url"] as? String } == ["https://ntfy.example.org/keep"])
    #expect(after.text.contains(#""mutedUntil":0"#), "nothing changed")
  }

  /// A webhook keeps its query: some receivers take their own key there (Azure Functions' `?code=`, Google Chat's
  /// `?key=…&token=…`), and the webhook has no other field for it.
  @Test func aWebhookURLKeepsItsQuery() throws {
    let fixture = try Self.fixture()
    let url = "https://hooks.example.org/api/aprs?code=abc123"
    let reply = fixture.settings(["forward": [["type": "webhook", "url": url, "secret": Self.secret]]])
    #expect(reply.status == 200, "\(reply.text)")
    #expect(targets(reply).map { $0["url"] as? String } == [url])
  }

  @Test func moreThanFiveNotAnArrayOrEmailWithoutSMTPAre400() throws {
    let fixture = try Self.fixture()
    let six = (0..<6).map { ["type": "ntfy", "url": "https://ntfy.example.org/t\($0)"] }
    #expect(fixture.settings(["forward": six])["error"]?.stringValue?.contains("at most 5") == true)
    #expect(fixture.settings(["forward": "https://ntfy.example.org/t"]).status == 400)
    #expect(fixture.settings(["forward": ["type": "ntfy"]]).status == 400)
    let five = (0..<5).map { ["type": "ntfy", "url": "https://ntfy.example.org/t\($0)"] }
    #expect(targets(fixture.settings(["forward": five])).count == 5)
    let noMail = try Self.fixture(email: false)
    let reply = noMail.settings(["forward": [["type": "email", "to": "me@example.org"]]])
    #expect(reply.status == 400 && reply["error"]?.stringValue?.contains("forward[0].type") == true)
    // Private addresses are taken only with the test switch.
    let tests = try Self.fixture(allowPrivate: true)
    #expect(tests.settings(["forward": [["type": "ntfy", "url": "https://127.0.0.1:8443/t"]]]).status == 200)
  }

  @Test func theKeyIsNeededToReadOrChangeTargets() throws {
    let fixture = try Self.fixture()
    _ = fixture.settings([
      "forward": [["type": "webhook", "url": "https://h.example.org/x", "secret": Self.secret]]
    ])
    let key = fixture.stationKey
    fixture.stationKey = nil
    let keyless = fixture.settings()
    #expect(keyless.status == 403 && !keyless.text.contains("h.example.org"), "\(keyless.text)")
    #expect(
      fixture.post(
        "/v1/forward/confirm", APIFixture.settingsIdentity.merging(["id": "f1", "code": "123456"]) { $1 }
      ).status == 403)
    fixture.stationKey = key
    #expect(targets(fixture.settings()).count == 1)
  }

  /// A failing and a disabled target are answered with their reason, its class and when it began.
  @Test func failingAndDisabledTargetsAreAnsweredWithTheirReason() throws {
    let fixture = try Self.fixture()
    let reply = fixture.settings([
      "forward": [
        ["type": "ntfy", "url": "https://ntfy.example.org/topic", "token": "tk_abcdefghijk9876"],
        ["type": "webhook", "url": "https://hooks.example.org/aprs", "secret": Self.secret],
      ]
    ])
    let ids = targets(reply).compactMap { $0["id"] as? String }
    try #require(ids.count == 2)
    let now = fixture.clock.now
    try fixture.database.disableForwardTargets(
      [
        ForwardDisable(
          station: "N0CALL-7", id: ids[0], reason: "401 ntfy refused the access token (40101 unauthorized)",
          problem: .authRefused)
      ], now: now)
    try fixture.database.recordForwardHealth(
      [
        ForwardHealth(
          station: "N0CALL-7", id: ids[1], failure: ("308 redirect to https://new.example/aprs", .redirect))
      ], now: now + 5)
    let list = targets(fixture.settings())
    #expect(list[0]["status"] as? String == "disabled" && list[0]["reasonCode"] as? String == "auth_refused")
    #expect(list[0]["reason"] as? String == "401 ntfy refused the access token (40101 unauthorized)")
    #expect((list[0]["disabledAt"] as? NSNumber)?.int64Value == now)
    #expect(list[1]["status"] as? String == "failing" && list[1]["reasonCode"] as? String == "redirect")
    #expect(list[1]["reason"] as? String == "308 redirect to https://new.example/aprs")
    #expect((list[1]["failingSince"] as? NSNumber)?.int64Value == now + 5)
    // Delivered again: active, without a reason.
    try fixture.database.recordForwardHealth(
      [ForwardHealth(station: "N0CALL-7", id: ids[1], failure: nil)], now: now + 9)
    let again = targets(fixture.settings())[1]
    #expect(again["status"] as? String == "active" && again["reason"] == nil && again["reasonCode"] == nil)
    // Saving the list with the failing target's id keeps its state (it is still the same target).
    try fixture.database.recordForwardHealth(
      [ForwardHealth(station: "N0CALL-7", id: ids[1], failure: ("503", .serverError))], now: now + 10)
    let kept = targets(fixture.settings(["forward": [["id": ids[1], "always": true]]]))
    #expect(kept.first?["status"] as? String == "failing" && kept.first?["always"] as? Bool == true)
  }

  @Test func anEmailTargetIsConfirmedWithItsCode() throws {
    let fixture = try Self.fixture()
    let reply = fixture.settings(["forward": [["type": "email", "to": "me@example.org"]]])
    let id = try #require(targets(reply).first?["id"] as? String)
    let identity = APIFixture.settingsIdentity
    func confirm(_ fields: [String: Any]) -> Reply {
      fixture.post("/v1/forward/confirm", identity.merging(fields) { $1 })
    }
    // Before the sender mailed a code, no code is right.
    #expect(confirm(["id": id, "code": "000000"]).status == 400)
    // The sender takes the due mail: its code is recorded.
    let due = try fixture.database.dueForwardConfirmations()
    #expect(due.map(\.id) == [id])
    #expect(
      try fixture.database.beginForwardConfirmation(
        station: "N0CALL-7", id: id, newCode: "482913", now: fixture.clock.now) == "482913")
    #expect(try fixture.database.dueForwardConfirmations().isEmpty)
    // Malformed, wrong, unknown id, then right.
    #expect(confirm(["id": id, "code": "48291"])["error"]?.stringValue?.contains("code must be") == true)
    #expect(confirm(["id": id, "code": ["482913"]]).status == 400)
    let wrong = confirm(["id": id, "code": "111111"])
    #expect(wrong.status == 400 && wrong["error"]?.stringValue?.hasPrefix("code:") == true, "\(wrong.text)")
    #expect(confirm(["id": "f-nope", "code": "482913"]).status == 404)
    #expect(confirm(["code": "482913"]).status == 400)
    let right = confirm(["id": id, "code": " 482913 "])
    #expect(right.status == 200, "\(right.text)")
    #expect(right.text.contains(#""status":"active""#), "\(right.text)")
    #expect(targets(fixture.settings()).first?["status"] as? String == "active")
    #expect(
      try fixture.database.auditTrail(of: "N0CALL-7").contains { $0.detail == "forward \(id) confirmed" })
    // Confirmed already: 409.
    #expect(confirm(["id": id, "code": "482913"]).status == 409)
    #expect(confirm(["id": id, "resend": true]).status == 409)
  }

  @Test func fiveWrongCodesVoidTheCodeAndAnAddressGetsThreeMailsIn24Hours() throws {
    let fixture = try Self.fixture()
    var reply = fixture.settings(["forward": [["type": "email", "to": "me@example.org"]]])
    let id = try #require(targets(reply).first?["id"] as? String)
    let identity = APIFixture.settingsIdentity
    func confirm(_ fields: [String: Any]) -> Reply {
      fixture.post("/v1/forward/confirm", identity.merging(fields) { $1 })
    }
    let database = fixture.database
    let now = fixture.clock.now
    #expect(
      try database.beginForwardConfirmation(station: "N0CALL-7", id: id, newCode: "222222", now: now) != nil)
    for _ in 0..<5 { #expect(confirm(["id": id, "code": "999999"]).status == 400) }
    #expect(confirm(["id": id, "code": "222222"]).status == 400, "void after 5 wrong codes")
    // A passing failure sends the same code again, not counted again.
    #expect(confirm(["id": id, "resend": true]).status == 200)
    #expect(
      try database.beginForwardConfirmation(station: "N0CALL-7", id: id, newCode: "333333", now: now) != nil)
    try database.requeueForwardConfirmation(station: "N0CALL-7", id: id)
    #expect(
      try database.beginForwardConfirmation(station: "N0CALL-7", id: id, newCode: "000001", now: now)
        == "333333")
    // The third mail, then 429 with Retry-After.
    #expect(confirm(["id": id, "resend": true]).status == 200)
    #expect(
      try database.beginForwardConfirmation(station: "N0CALL-7", id: id, newCode: "444444", now: now) != nil)
    let limited = confirm(["id": id, "resend": true])
    #expect(limited.status == 429 && limited.header("Retry-After") != nil, "\(limited.text)")
    #expect(
      limited.error?.contains("confirmation mails to this address (at most 3 in 24 hours)") == true,
      "\(limited.text)")
    // Removing the target and adding the address again does not start a new count.
    reply = fixture.settings(["forward": [["type": "email", "to": "ME@example.org"]]])
    let again = try #require(targets(reply).first?["id"] as? String)
    #expect(again != id)
    #expect(
      try database.beginForwardConfirmation(station: "N0CALL-7", id: again, newCode: "555555", now: now)
        == nil)
    #expect(try database.dueForwardConfirmations().isEmpty)
    // A day later the address may get mails again.
    #expect(confirm(["id": again, "resend": true]).status == 429)
    let later = now + ForwardTarget.confirmationWindowMs
    guard case .queued = try database.resendForwardConfirmation(station: "N0CALL-7", id: again, now: later)
    else {
      throw TestFailure("not queued a day later")
    }
    #expect(
      try database.beginForwardConfirmation(station: "N0CALL-7", id: again, newCode: "666666", now: later)
        != nil)
  }

  @Test func aStationSendsTenConfirmationMailsADayAndTaggedAddressesShareOneCount() throws {
    let fixture = try Self.fixture()
    let database = fixture.database
    let now = fixture.clock.now
    /// Puts one new email target in place of the last and takes its mail; the code, or nil when limited.
    func mail(to address: String) throws -> String? {
      let reply = fixture.settings(["forward": [["type": "email", "to": address]]])
      let id = try #require(targets(reply).first?["id"] as? String, "\(reply.text)")
      return try database.beginForwardConfirmation(station: "N0CALL-7", id: id, newCode: "123456", now: now)
    }
    // Tagged variants of one mailbox share its three.
    for tag in 1...3 { #expect(try mail(to: "victim+\(tag)@example.org") != nil) }
    #expect(try mail(to: "Victim+4@Example.org") == nil)
    // Seven more strangers, and then the station has sent its ten.
    for index in 1...7 { #expect(try mail(to: "stranger\(index)@example.org") != nil) }
    #expect(try mail(to: "stranger8@example.org") == nil)
    #expect(
      try database.beginForwardConfirmation(station: "N0CALL-7", id: "f-none", newCode: "1", now: now) == nil)
  }

  static let badConfirms: [(String, Int, String)] = [
    (#""id":7,"code":"123456""#, 400, "id must be a string"),
    (#""code":"123456""#, 400, "id is required"),
    (#""id":"f1""#, 400, "code is required"),
    (#""id":"f1","code":123456"#, 400, "code must be a string"),
    (#""id":"f1","code":"12345a""#, 400, "code must be the 6 digits"),
    (#""id":"f1","code":"1234567890123456789""#, 400, "code"),
    (#""id":"f1","resend":"yes""#, 400, "resend"),
    (#""id":"f-unknown","code":"123456""#, 404, "no forward target"),
    (#""id":"f-unknown","resend":true"#, 404, "no forward target"),
  ]

  @Test(arguments: badConfirms)
  func hostileConfirmationsAreClearErrors(fields: String, status: Int, error: String) throws {
    let fixture = try Self.fixture()
    let reply = fixture.post(
      "/v1/forward/confirm", #"{"callsign":"N0CALL","ssid":7,"auth":"13023",\#(fields)}"#)
    #expect(reply.status == status, "\(reply.text)")
    #expect(reply["error"]?.stringValue?.contains(error) == true, "\(reply.text)")
  }

  @Test func randomMutationsOfForwardSettingsNeverCauseA5xx() throws {
    let fixture = try Self.fixture()
    let seeds: [(String, String)] = [
      (
        "/v1/settings",
        #"{"callsign":"N0CALL","ssid":7,"auth":"13023","forward":[{"type":"webhook","url":"https://h.example.org/x","secret":"0123456789abcdef","always":true},{"type":"email","to":"me@example.org"},{"type":"ntfy","url":"https://n.example.org/t","token":"tk","priority":3}]}"#
      ),
      ("/v1/forward/confirm", #"{"callsign":"N0CALL","ssid":7,"auth":"13023","id":"f1","code":"123456"}"#),
    ]
    var random = SplitMix64(seed: 20_261_202)
    let alphabet =
      Array(#"{}[]":,\-0123456789.eEtrufalsnN0CALL@/ "#.utf8) + [0x00, 0x0D, 0x7F, 0x80, 0xC3, 0xFF]
    var statuses: [Int: Int] = [:]
    for round in 0..<2000 {
      let (path, seed) = seeds[round % seeds.count]
      var bytes = Array(seed.utf8)
      for _ in 0..<(1 + Int(random.next() % 4)) {
        let position = Int(random.next() % UInt64(bytes.count))
        switch random.next() % 3 {
        case 0: bytes[position] = alphabet[Int(random.next() % UInt64(alphabet.count))]
        case 1: bytes.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: position)
        default: if bytes.count > 1 { bytes.remove(at: position) }
        }
      }
      let reply = fixture.post(path, String(decoding: bytes, as: UTF8.self))
      statuses[reply.status, default: 0] += 1
      #expect(reply.status < 500, "\(path) \(String(decoding: bytes, as: UTF8.self)): \(reply.text)")
      if reply.status != 200 { #expect(reply["error"] != nil, "\(reply.text)") }
    }
    #expect(statuses[400, default: 0] > 500)
    #expect(try fixture.database.forwardTargets(of: "N0CALL-7").count <= ForwardTarget.maximumPerStation)
    #expect(try fixture.database.integrityCheck() == "ok")
  }

  @Test func infoNamesTheTypesThisServerForwardsTo() throws {
    var config = APIConfig()
    config.info.forwardTypes = ["email", "ntfy", "webhook"]
    let fixture = try APIFixture(config: config)
    let info = fixture.post("/v1/info", "{}")
    #expect(info.text.contains(#""forward":["email","ntfy","webhook"]"#), "\(info.text)")
    let off = try APIFixture()
    #expect(!off.post("/v1/info", "{}").text.contains("forward"))
  }
}
