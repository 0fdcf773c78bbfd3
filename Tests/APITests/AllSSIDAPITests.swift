import API
import Foundation
import JSON
import Store
import Testing

/// The all-SSID inbox at handler level: settings `ssids` and `ackSsids` (every hostile value a 400 naming the
/// field, nothing changed), `want` parsed once (unknown names ignored, wrong shapes a 400 naming `want`), and
/// answers: other-SSID entries with `to` only for requests with `want:["ssids"]` (sync, long poll, register with
/// history); every other answer exactly as before.
@Suite struct AllSSIDAPITests {
  nonisolated(unsafe) static let identity = APIFixture.settingsIdentity
  /// The keys every settings answer ends with while no subscription or retention is set.
  static let lastKeys =
    #""fallbackWait":20,"airAnswered":"quiet","trackSent":false,"subscriptions":[],"forward":[],"retention":{"mode":"ring"}}"#

  /// A message for another SSID of the call, stored as the listener would.
  private func deliverOther(_ fixture: APIFixture, to: String, text: String) throws {
    fixture.clock.advance(ms: 1)
    _ = try fixture.database.storeMessages(
      [
        IncomingMessage(
          station: "N0CALL-7", peer: "OH7AA-1", text: text, msgno: "5", dedupKey: "other|\(to)|\(text)",
          dedupWindowMs: 3_600_000, to: to)
      ], now: fixture.clock.now)
  }

  // MARK: Settings

  @Test func ssidsAndAckSsidsAreInEveryAnswerAndChangeWhenGiven() throws {
    let fixture = try APIFixture.withClaimedStation()
    var reply = fixture.settings()
    #expect(
      reply.text.hasSuffix(#","keylessDevices":"allow","ssids":"exact","ackSsids":[],"# + Self.lastKeys),
      "\(reply.text)")
    reply = fixture.settings(["ssids": "all", "ackSsids": [9, 0, 9]])
    #expect(reply.status == 200, "\(reply.text)")
    #expect(reply.text.hasSuffix(#","ssids":"all","ackSsids":[0,9],"# + Self.lastKeys), "\(reply.text)")
    // A list is deduplicated, sorted, and holds the station's own SSID.
    reply = fixture.settings(["ssids": [9, 0, 9]])
    #expect(reply.text.hasSuffix(#","ssids":[0,7,9],"ackSsids":[0,9],"# + Self.lastKeys), "\(reply.text)")
    reply = fixture.settings(["ackSsids": [Int]()])
    #expect(reply.text.hasSuffix(#","ssids":[0,7,9],"ackSsids":[],"# + Self.lastKeys), "\(reply.text)")
    reply = fixture.settings(["ssids": "exact"])
    #expect(reply.text.hasSuffix(#","ssids":"exact","ackSsids":[],"# + Self.lastKeys), "\(reply.text)")
    // An empty list is the default.
    reply = fixture.settings(["ssids": [Int]()])
    #expect(reply.text.hasSuffix(#","ssids":"exact","ackSsids":[],"# + Self.lastKeys), "\(reply.text)")
  }

  @Test func hostileValuesAreA400NamingTheFieldAndChangeNothing() throws {
    let fixture = try APIFixture.withClaimedStation()
    _ = fixture.settings(["ssids": [1, 2], "ackSsids": [2]])
    let before = fixture.settings().text
    let cases: [(field: String, value: Any, names: String)] = [
      ("ssids", 16, "ssids"), ("ssids", "ALL", "ssids"), ("ssids", "", "ssids"), ("ssids", [16], "ssids[0]"),
      ("ssids", [-1], "ssids[0]"), ("ssids", ["7"], "ssids[0]"), ("ssids", [1.5], "ssids[0]"),
      ("ssids", [true], "ssids[0]"), ("ssids", Array(repeating: 1, count: 17), "ssids"),
      ("ssids", Array(0...2_000), "ssids"), ("ssids", ["a": 1], "ssids"),
      ("ssids", [9_223_372_036_854_775_807], "ssids[0]"),
      ("ackSsids", "all", "ackSsids"), ("ackSsids", 9, "ackSsids"), ("ackSsids", [16], "ackSsids[0]"),
      ("ackSsids", [-1], "ackSsids[0]"), ("ackSsids", [NSNull()], "ackSsids[0]"),
      ("ackSsids", Array(repeating: 0, count: 17), "ackSsids"),
    ]
    for (field, value, names) in cases {
      // Every bad value comes with a valid change that must not be applied either.
      let reply = fixture.settings([field: value, "mutedUntil": 5])
      #expect(reply.status == 400, "\(field)=\(value): \(reply.text)")
      #expect(reply.error?.hasPrefix(names + " ") == true, "\(field)=\(value): \(reply.error ?? "")")
      #expect(fixture.settings().text == before)
    }
    // null leaves them as they are.
    #expect(fixture.settings(["ssids": NSNull(), "ackSsids": NSNull()]).text == before)
  }

  @Test func ssidSettingsNeedTheKeyLikeTheOthers() throws {
    let fixture = try APIFixture.withClaimedStation()
    fixture.stationKey = nil
    let reply = fixture.settings(["ssids": "all"])
    #expect(reply.status == 403, "\(reply.text)")
  }

  // MARK: want

  @Test func wantOfTheWrongShapeIsA400NamingWant() throws {
    let fixture = try APIFixture.withClaimedStation()
    let sync = Self.identity.merging(["since": 0]) { $1 }
    for bad: Any in [
      "ssids", 1, true, ["a": 1], [1], [NSNull()], [["ssids"]], Array(repeating: "x", count: 17),
      [String(repeating: "s", count: 33)],
    ] {
      for path in ["/v1/sync", "/v1/register"] {
        let body = (path == "/v1/sync" ? sync : registerBody()).merging(["want": bad]) { $1 }
        let reply = fixture.post(path, body)
        #expect(reply.status == 400, "\(path) want=\(bad): \(reply.text)")
        #expect(reply.error?.hasPrefix("want") == true, "\(reply.error ?? "")")
      }
    }
    // Unknown names are ignored; an empty array and null are none.
    for fine: Any in [["later-feature", "ssids"], [String](), NSNull(), ["subscriptions", "inbox"]] {
      #expect(fixture.post("/v1/sync", sync.merging(["want": fine]) { $1 }).status == 200)
    }
  }

  // MARK: Answers

  @Test func otherSSIDEntriesReachOnlyRequestsThatAskedForThem() throws {
    let fixture = try APIFixture.withClaimedStation()
    _ = fixture.settings(["ssids": "all"])
    try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "to me", msgno: "1")
    try deliverOther(fixture, to: "N0CALL-9", text: "to nine")
    try deliverOther(fixture, to: "N0CALL", text: "to the bare call")
    let sync = Self.identity.merging(["since": 0]) { $1 }

    let old = fixture.post("/v1/sync", sync)
    #expect(old.messages.count == 1)
    #expect(old.messages.first?["to"] == nil)
    #expect(old.messages.first?["text"]?.stringValue == "to me")
    let opted = fixture.post("/v1/sync", sync.merging(["want": ["ssids"]]) { $1 })
    #expect(opted.messages.map { $0["text"]?.stringValue } == ["to me", "to nine", "to the bare call"])
    #expect(opted.messages.map { $0["to"]?.stringValue } == [nil, "N0CALL-9", "N0CALL"])
    #expect(old.serverTime == opted.serverTime)
    // Exactly the keys of before, plus `to`.
    #expect(
      opted.text.contains(
        #"{"direction":"received","type":"message","peer":"OH7AA-1","text":"to nine","timestamp":"#))
    #expect(opted.text.contains(#","seqId":"5","to":"N0CALL-9"}"#))

    let history = fixture.post("/v1/register", registerBody(["want": ["ssids"]]))
    #expect(history.messages.count == 3)
    let oldHistory = fixture.post("/v1/register", registerBody())
    #expect(oldHistory.messages.count == 1 && oldHistory.messages.first?["to"] == nil)
  }

  @Test func aLongPollWithoutWantIsNotWokenByOtherSSIDEntries() throws {
    let fixture = try APIFixture.withClaimedStation()
    _ = fixture.settings(["ssids": "all"])
    let since = fixture.post("/v1/sync", Self.identity.merging(["since": 0]) { $1 }).serverTime ?? 0
    let handler = fixture.handler
    func park(_ want: [String]?) -> SyncPark? {
      var body = Self.identity.merging(["since": since, "wait": 30]) { $1 }
      if let want { body["want"] = want }
      let data = try! JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
      let answer = handler.answer(
        APIRequest(
          method: "POST", path: "/v1/sync", contentType: "application/json", body: Array(data),
          authorization: fixture.stationKey.map { "Bearer \($0)" }))
      if case .park(let park) = answer { return park }
      return nil
    }
    let old = try #require(park(nil))
    let opted = try #require(park(["ssids"]))
    #expect(old.wants == [] && opted.wants == .ssids)
    try deliverOther(fixture, to: "N0CALL-9", text: "while waiting")
    if case .park = handler.resumeSync(old, final: false) {
    } else {
      Issue.record("an old client's long poll must stay parked")
    }
    guard case .response(let response) = handler.resumeSync(opted, final: false) else {
      Issue.record("the opted-in long poll is answered")
      return
    }
    let reply = Reply(response)
    #expect(reply.messages.map { $0["to"]?.stringValue } == ["N0CALL-9"])
  }

  @Test func theDeviceARegisterCreatesKeepsItsWants() throws {
    let fixture = try APIFixture.withClaimedStation()
    let a = "fcm-token:APA91b-opted-in"
    let b = "fcm-token:APA91b-old-app"
    let first = fixture.post("/v1/register", registerBody(["want": ["ssids", "unknown"], "pushToken": a]))
    #expect(first.status == 200, "\(first.text)")
    let second = fixture.post("/v1/register", registerBody(["pushToken": b]))
    #expect(second.status == 200, "\(second.text)")
    let devices = try fixture.database.devices(of: "N0CALL-7")
    #expect(devices.first { $0.token == a }?.wants == .ssids, "\(devices)")
    #expect(devices.first { $0.token == b }?.wants == [])
    // A heartbeat keeps what the register opted in to.
    let beat = fixture.post(
      "/v1/heartbeat",
      ["callsign": "N0CALL", "ssid": 7, "platform": "android", "pushToken": a, "auth": "13023"])
    #expect(beat.status == 200, "\(beat.text)")
    #expect(try fixture.database.devices(of: "N0CALL-7").first { $0.token == a }?.wants == .ssids)
  }
}
