import API
import APRS
import Foundation
import JSON
import Store
import Testing

/// Nets through the handler (docs/protocol.md "Nets and rooms"): a `net` subscription joins with the station's
/// send and wakes the sends, every bad field is a 400 naming it with nothing changed, a join the limits refuse is
/// their 429, and `/v1/send` posts to a room under the service's rule.
@Suite struct NetAPITests {
  nonisolated(unsafe) static let identity = APIFixture.settingsIdentity

  /// A fixture whose N0CALL-7 is claimed, and whose listener published a verified login (sends can go).
  private func fixture(_ config: APIConfig = APIConfig()) throws -> APIFixture {
    let fixture = try APIFixture(config: config)
    try fixture.database.publishListenerStatus(
      ListenerStatus(state: "online", connected: true, verified: true, receiveOnly: false, login: "K1LOG-3"))
    #expect(fixture.post("/v1/register", registerBody(["wantHistory": false])).status == 200)
    fixture.claim(Self.identity)
    return fixture
  }

  private func subscriptions(_ reply: Reply) -> [[String: Any]] {
    let object = try? JSONSerialization.jsonObject(with: Data(reply.text.utf8)) as? [String: Any]
    return object?["subscriptions"] as? [[String: Any]] ?? []
  }

  private func rooms(_ fixture: APIFixture) -> [JSONObject] {
    fixture.post("/v1/sync", Self.identity.merging(["since": 0, "want": ["rooms"]]) { $1 }).messages
  }

  private func send(_ fixture: APIFixture, _ fields: [String: Any]) -> Reply {
    fixture.post("/v1/send", Self.identity.merging(fields) { $1 })
  }

  @Test func aNetIsJoinedWithTheStationsSendAndEchoedWithItsDefaults() throws {
    let fixture = try fixture()
    _ = fixture.wakes.take()
    let reply = fixture.settings(["subscriptions": [["kind": "net", "server": "ansrvr", "group": "hotg"]]])
    #expect(reply.status == 200, "\(reply.text)")
    let net = try #require(subscriptions(reply).first)
    #expect(net["server"] as? String == "ANSRVR" && net["group"] as? String == "HOTG")
    #expect(net["room"] as? String == "ANSRVR/HOTG" && net["join"] as? String == "silent")
    #expect(net["renew"] as? Bool == true && net["digest"] as? Int == 600 && net["text"] == nil)
    #expect(fixture.wakes.take() == [.registrations, .sends], "the join goes out at once")
    let join = try #require(rooms(fixture).first)
    #expect(join["type"]?.stringValue == "net" && join["room"]?.stringValue == "ANSRVR/HOTG")
    #expect(join["direction"]?.stringValue == "sent" && join["text"]?.stringValue == "K HOTG")
    #expect(join["peer"]?.stringValue == "ANSRVR" && join["state"]?.stringValue == "pending")
    let old = fixture.post("/v1/sync", Self.identity.merging(["since": 0]) { $1 })
    #expect(old.messages.isEmpty, "the shipping app sees nothing of it")
    let joining = try #require(subscriptions(reply).first?["membership"] as? [String: Any])
    #expect(joining["state"] as? String == "joining" && joining["joinedAt"] as? Int64 == fixture.clock.now)
    #expect(joining["renewAt"] as? Int64 == fixture.clock.now + 11 * 3_600_000)
    // The service ACKs the join.
    let seq = try #require(join["seqId"]?.stringValue)
    _ = try fixture.database.answerSends(
      [SendAnswer(station: "N0CALL-7", peer: "ANSRVR", msgno: seq, kind: .ack)], now: fixture.clock.now)
    let joined = subscriptions(fixture.settings()).first?["membership"] as? [String: Any]
    #expect(joined?["state"] as? String == "joined")
    fixture.clock.advance(ms: 12 * 3_600_000)
    #expect(
      (subscriptions(fixture.settings()).first?["membership"] as? [String: Any])?["state"] as? String
        == "lapsed")
    // Left: the leave is sent (a join still in flight would be cancelled: DatabaseNetsTests).
    #expect(fixture.settings(["subscriptions": [Any]()]).status == 200)
    #expect(rooms(fixture).map { $0["text"]?.stringValue } == ["K HOTG", "U HOTG"])
    #expect(
      rooms(fixture).map { $0["state"]?.stringValue } == ["acked", "pending"], "an acked join stays acked")
  }

  static let badNets: [(String, String)] = [
    (#"{"kind":"net","group":"HOTG"}"#, "subscriptions[0].server is required"),
    (
      #"{"kind":"net","server":"WXBOT","group":"HOTG"}"#,
      #"subscriptions[0].server must be "ANSRVR" or "CQSRVR""#
    ),
    (#"{"kind":"net","server":"ANSRVR"}"#, "subscriptions[0].group is required"),
    (#"{"kind":"net","server":"ANSRVR","group":"HOT G"}"#, "subscriptions[0].group must be one word"),
    (#"{"kind":"net","server":"ANSRVR","group":"ABCDEFGHIJ"}"#, "subscriptions[0].group must be one word"),
    (#"{"kind":"net","server":"ANSRVR","group":7}"#, "subscriptions[0].group must be a string"),
    (#"{"kind":"net","server":"ANSRVR","group":"HOTG","join":"loud"}"#, #"join must be "silent" or "post""#),
    (#"{"kind":"net","server":"CQSRVR","group":"MYTEST","join":"silent"}"#, "CQSRVR has no silent join"),
    (#"{"kind":"net","server":"ANSRVR","group":"HOTG","text":"hi"}"#, "subscriptions[0].text is what a post"),
    (
      #"{"kind":"net","server":"ANSRVR","group":"HOTG","join":"post","text":"\#(String(repeating: "x", count: 60))"}"#,
      "subscriptions[0].text is too long"
    ),
    (
      #"{"kind":"net","server":"ANSRVR","group":"HOTG","join":"post","text":"a{b"}"#, "subscriptions[0].text:"
    ),
    (
      #"{"kind":"net","server":"ANSRVR","group":"HOTG","digest":-1}"#,
      "subscriptions[0].digest must be a number"
    ),
    (#"{"kind":"net","server":"ANSRVR","group":"HOTG","digest":86401}"#, "subscriptions[0].digest must be"),
    (
      #"{"kind":"net","server":"ANSRVR","group":"HOTG","renew":"yes"}"#, "subscriptions[0].renew must be true"
    ),
  ]

  @Test(arguments: badNets)
  func badNetsAre400AndChangeNothing(net json: String, error: String) throws {
    let subscription = try JSONSerialization.jsonObject(with: Data(json.utf8))
    let fixture = try fixture()
    let reply = fixture.settings(["subscriptions": [subscription]])
    #expect(reply.status == 400, "\(reply.text)")
    #expect(reply.error?.contains(error) == true, "\(reply.text)")
    #expect(subscriptions(fixture.settings()).isEmpty && rooms(fixture).isEmpty, "nothing changed or sent")
  }

  @Test func aJoinTheLimitsRefuseIsTheir429AndChangesNothing() throws {
    var config = APIConfig()
    config.send.inFlight = 0
    let fixture = try fixture(config)
    let reply = fixture.settings([
      "subscriptions": [["kind": "net", "server": "ANSRVR", "group": "HOTG"]],
      "mutedUntil": 1_800_000_360_000,
    ])
    #expect(reply.status == 429 && reply.header("Retry-After") != nil, "\(reply.text)")
    #expect(subscriptions(fixture.settings()).isEmpty && rooms(fixture).isEmpty)
    #expect(fixture.settings().text.contains(#""mutedUntil":0"#), "nothing changed")
  }

  @Test func aJoinNeedsAServerThatTransmits() throws {
    var config = APIConfig()
    config.send.enabled = false
    let fixture = try fixture(config)
    let reply = fixture.settings(["subscriptions": [["kind": "net", "server": "ANSRVR", "group": "HOTG"]]])
    #expect(reply.status == 503, "\(reply.text)")
    #expect(fixture.settings(["subscriptions": [["kind": "group", "call": "SLCARES"]]]).status == 200)
  }

  @Test func aPostToARoomIsTheServicesCommandUnderItsRule() throws {
    let fixture = try fixture()
    #expect(
      send(fixture, ["room": "ANSRVR/HOTG", "text": "hi"]).error?.hasPrefix("room: N0CALL-7 is no member")
        == true)
    _ = fixture.settings([
      "subscriptions": [
        ["kind": "net", "server": "ANSRVR", "group": "HOTG"],
        ["kind": "net", "server": "CQSRVR", "group": "MYTEST", "text": "on the air"],
      ]
    ])
    let post = send(fixture, ["room": "ansrvr/hotg", "text": "Happy APRSThursday  "])
    #expect(post.status == 200, "\(post.text)")
    guard case .object(let message)? = post["message"] else {
      Issue.record("a send's answer: \(post.text)")
      return
    }
    #expect(
      message["text"]?.stringValue == "CQ HOTG Happy APRSThursday" && message["peer"]?.stringValue == "ANSRVR"
    )
    #expect(message["type"]?.stringValue == "net" && message["room"]?.stringValue == "ANSRVR/HOTG")
    let soon = send(fixture, ["room": "CQSRVR/MYTEST", "text": "again"])
    #expect(soon.status == 429, "the join posted just now: \(soon.text)")
    #expect(soon.header("Retry-After") == "1800")
    fixture.clock.advance(ms: 30 * 60_000)
    #expect(send(fixture, ["room": "CQSRVR/MYTEST", "text": "again"]).status == 200)
    #expect(
      send(fixture, ["room": "HOTG", "text": "x"]).error?.hasPrefix("room must be SERVICE/GROUP") == true)
    #expect(send(fixture, ["room": "ANSRVR/HOTG", "to": "K1ABC", "text": "x"]).status == 400)
    let long = send(fixture, ["room": "ANSRVR/HOTG", "text": String(repeating: "x", count: 60)])
    #expect(long.error?.hasPrefix("text is too long for ANSRVR/HOTG") == true, "\(long.text)")
  }

  @Test func anExportCarriesTheNetAndItsRoomEntriesAndAnImportKeepsThem() throws {
    let fixture = try fixture()
    let settings = fixture.settings(["subscriptions": [["kind": "net", "server": "ANSRVR", "group": "HOTG"]]])
    let id = try #require(subscriptions(settings).first?["id"] as? String)
    fixture.clock.advance(ms: 1)
    _ = try fixture.database.storeMessages(
      [
        IncomingMessage(
          station: "N0CALL-7", peer: "KC8OWL", text: "Happy APRSThursday!", msgno: "12", dedupKey: "k",
          dedupWindowMs: 3_600_000, entry: .room(NetRoom(service: .ansrvr, group: "HOTG"), subscription: id))
      ], now: fixture.clock.now)
    let exported = fixture.post("/v1/export", Self.identity)
    #expect(exported.status == 200, "\(exported.text)")
    #expect(exported.text.contains(#""kind":"net","server":"ANSRVR","group":"HOTG","room":"ANSRVR/HOTG""#))
    let fresh = try APIFixture()
    fresh.clock.advance(ms: 1_000_000)
    let archive = try StationArchive(document: Array(exported.text.utf8), retentionCap: 500)
    #expect(try fresh.database.importStation(archive, withClaim: true, now: fresh.clock.now).entries == 2)
    let entries = fresh.post("/v1/sync", Self.identity.merging(["since": 0, "want": ["rooms"]]) { $1 })
      .messages
    #expect(entries.map { $0["room"]?.stringValue } == ["ANSRVR/HOTG", "ANSRVR/HOTG"])
    #expect(entries.last?["peer"]?.stringValue == "KC8OWL" && entries.last?["type"]?.stringValue == "net")
  }
}
