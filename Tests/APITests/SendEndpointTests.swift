import API
import Foundation
import JSON
import Store
import Testing

/// `POST /v1/send` (docs/protocol.md "Sending messages") through the handler.
@Suite struct SendEndpointTests {
  /// OH7LZB-9 registered (sync-only) and a listener that published a verified login.
  static func fixture(config: APIConfig = APIConfig(), verified: Bool = true) throws -> APIFixture {
    let api = try APIFixture(config: config)
    let reply = api.post(
      "/v1/register",
      ["callsign": "OH7LZB", "ssid": 9, "wantHistory": false, "since": 0, "auth": "20900"])
    #expect(reply.status == 200, "\(reply.text)")
    api.claim(["callsign": "OH7LZB", "ssid": 9, "auth": "20900"])
    try api.database.publishListenerStatus(
      ListenerStatus(state: "online", connected: true, verified: verified, receiveOnly: !verified))
    return api
  }

  static func body(_ extra: [String: Any] = [:]) -> [String: Any] {
    var body: [String: Any] = [
      "callsign": "oh7lzb", "ssid": 9, "auth": "20900", "to": "kj7abc-7", "text": "Hello there",
    ]
    body.merge(extra) { $1 }
    return body
  }

  @Test func aSendAnswersTheMessageAsSyncShowsItAndSyncShowsItWithItsState() throws {
    let api = try Self.fixture()
    let reply = api.post("/v1/send", Self.body(["clientId": "phone-1"]))
    #expect(reply.status == 200, "\(reply.text)")
    guard case .object(let message)? = reply["message"] else {
      Issue.record("no message: \(reply.text)")
      return
    }
    #expect(message.keys == ["direction", "type", "peer", "text", "timestamp", "seqId", "state", "clientId"])
    #expect(message["direction"] == .string("sent") && message["type"] == .string("message"))
    #expect(message["peer"] == .string("KJ7ABC-7") && message["text"] == .string("Hello there"))
    #expect(message["seqId"] == .string("1") && message["state"] == .string("pending"))
    #expect(message["clientId"] == .string("phone-1"))
    #expect(message["timestamp"]?.intValue == reply.serverTime)
    let sync = api.post("/v1/sync", ["callsign": "OH7LZB", "ssid": 9, "since": 0, "auth": "20900"])
    #expect(sync.messages.count == 1)
    #expect(sync.messages.first == message)
    // Without a clientId there is no clientId key; a received message never has a state.
    let second = api.post("/v1/send", Self.body(["text": "Second"]))
    guard case .object(let other)? = second["message"] else {
      Issue.record("no message: \(second.text)")
      return
    }
    #expect(other["clientId"] == nil && other["seqId"] == .string("2"))
    try api.deliver(to: "OH7LZB-9", from: "KJ7ABC-7", text: "reply", msgno: "9")
    let all = api.post("/v1/sync", ["callsign": "OH7LZB", "ssid": 9, "since": 0, "auth": "20900"]).messages
    #expect(all.map { $0["state"] } == [.string("pending"), .string("pending"), nil])
  }

  @Test func aReplayedClientIdReturnsTheFirstMessageAndStoresNothing() throws {
    let api = try Self.fixture()
    let first = api.post("/v1/send", Self.body(["clientId": "same"]))
    api.clock.advance(ms: 5_000)
    let replay = api.post("/v1/send", Self.body(["clientId": "same", "text": "different text"]))
    #expect(replay.status == 200, "\(replay.text)")
    #expect(replay["message"] == first["message"])
    #expect(try api.database.sendStatus().accepted == 1)
  }

  @Test func theStateChangeReStampsTheMessageForAClientFollowingTheCursor() throws {
    let api = try Self.fixture()
    _ = api.post("/v1/send", Self.body())
    let cursor = try #require(
      api.post("/v1/sync", ["callsign": "OH7LZB", "ssid": 9, "since": 0, "auth": "20900"]).serverTime)
    api.clock.advance(ms: 1_000)
    _ = try api.database.answerSends(
      [SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: "1", kind: .ack)], now: api.clock.now)
    let next = api.post("/v1/sync", ["callsign": "OH7LZB", "ssid": 9, "since": cursor, "auth": "20900"])
    #expect(next.messages.map { $0["state"] } == [.string("acked")])
    #expect(next.messages.first?["seqId"] == .string("1"))
    #expect((next.messages.first?["timestamp"]?.intValue ?? 0) > cursor)
  }

  /// The send body with `key` set to the JSON literal `literal` (nil: left out).
  static func body(_ key: String, _ literal: String?) -> String {
    var members: [(String, String)] = [
      ("callsign", #""oh7lzb""#), ("ssid", "9"), ("auth", #""20900""#), ("to", #""kj7abc-7""#),
      ("text", #""Hello there""#),
    ]
    members.removeAll { $0.0 == key }
    if let literal { members.append((key, literal)) }
    return "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
  }

  @Test(
    "every invalid field is a 400 naming it",
    arguments: [
      ("to", nil), ("to", #""not a call""#), ("to", #""KJ7ABC-16""#), ("to", "42"), ("to", #""OH7LZB-9""#),
      ("to", #""BLN12345678""#), ("to", #""EMAIL-2""#), ("to", #""sms""#), ("to", #""SMSGTE""#),
      ("to", #""APRS""#),
      ("to", #""CQ""#), ("to", #""BEACON""#), ("to", #""ID""#), ("text", nil), ("text", #""""#),
      ("text", "\"" + String(repeating: "x", count: 68) + "\""),
      ("text", #""a{b""#), ("text", #""a|b""#), ("text", #""a~b""#), ("text", #""line\nbreak""#),
      ("text", #""   ""#),
      ("text", #""ack42""#), ("text", "7"), ("clientId", "\"" + String(repeating: "c", count: 65) + "\""),
      ("clientId", "12"), ("clientId", #""tab\t""#),
    ] as [(String, String?)]
  )
  func invalidFields(field: String, literal: String?) throws {
    let api = try Self.fixture()
    let reply = api.post("/v1/send", Self.body(field, literal))
    #expect(reply.status == 400, "\(reply.text)")
    #expect(reply.error?.hasPrefix(field) == true, "\(reply.error ?? reply.text)")
    #expect(try api.database.sendStatus().accepted == 0)
  }

  /// A gateway out of APRS (mail, SMS) or a generic destination call is no station: the server does not relay to
  /// it in the owner's name, and the 400 says why.
  @Test func aGatewayOrAGenericCallAsAddresseeIsA400SayingWhy() throws {
    let api = try Self.fixture()
    let email = api.post("/v1/send", Self.body(["to": "EMAIL-2", "text": "me@example.org hi"]))
    #expect(email.status == 400, "\(email.text)")
    #expect(email.error?.hasPrefix("to: EMAIL-2 is the APRS email gateway") == true, "\(email.text)")
    let cq = api.post("/v1/send", Self.body(["to": "cq"]))
    #expect(cq.status == 400, "\(cq.text)")
    #expect(cq.error?.contains("generic APRS destination call") == true, "\(cq.text)")
    #expect(try api.database.sendStatus().accepted == 0)
  }

  @Test func limitsOfTheTextAreCharactersAndTrailingSpacesAreDropped() throws {
    let api = try Self.fixture()
    let full = api.post("/v1/send", Self.body(["text": String(repeating: "ä", count: 67)]))
    #expect(full.status == 200, "\(full.text)")
    let trailing = api.post("/v1/send", Self.body(["text": "padded   "]))
    guard case .object(let message)? = trailing["message"] else {
      Issue.record("\(trailing.text)")
      return
    }
    #expect(message["text"] == .string("padded"))
    #expect(api.post("/v1/send", Self.body(["clientId": String(repeating: "é", count: 64)])).status == 200)
  }

  @Test func aCallAPRSISDropsIsA400NamingTheCallsign() throws {
    let api = try APIFixture()
    _ = api.post("/v1/register", ["callsign": "N0CALL", "wantHistory": false, "since": 0, "auth": "13023"])
    api.claim(["callsign": "N0CALL", "auth": "13023"])
    try api.database.publishListenerStatus(
      ListenerStatus(connected: true, verified: true, receiveOnly: false))
    let reply = api.post("/v1/send", Self.body(["callsign": "N0CALL", "ssid": 0, "auth": "13023"]))
    #expect(reply.status == 400, "\(reply.text)")
    #expect(reply.error?.hasPrefix("callsign") == true, "\(reply.text)")
  }

  @Test func anUnregisteredStationGets404AndAWrongPasscode401() throws {
    let api = try Self.fixture()
    let key = api.stationKey
    api.stationKey = nil
    let unknown = api.post("/v1/send", Self.body(["callsign": "W1AW", "ssid": 0, "auth": "25988"]))
    #expect(unknown.status == 404, "\(unknown.text)")
    #expect(unknown.error?.contains("W1AW is not registered") == true)
    api.stationKey = key
    #expect(api.post("/v1/send", Self.body(["auth": "1"])).status == 401)
  }

  @Test func aReceiveOnlyOrUnverifiedListenerOrNoneAtAllIsA503() throws {
    let api = try Self.fixture(verified: false)
    let reply = api.post("/v1/send", Self.body())
    #expect(reply.status == 503, "\(reply.text)")
    #expect(reply.error?.contains("receive-only or unverified") == true)
    // Not a storage fault, and not something a retry in a second fixes: only the operator can.
    #expect(reply.error?.contains("storage") == false, "\(reply.text)")
    #expect(reply.header("Retry-After") == "3600")
    let none = try APIFixture()
    _ = none.post(
      "/v1/register", ["callsign": "OH7LZB", "ssid": 9, "wantHistory": false, "since": 0, "auth": "20900"])
    none.claim(["callsign": "OH7LZB", "ssid": 9, "auth": "20900"])
    #expect(none.post("/v1/send", Self.body()).status == 503, "no listener ever published")
    // A listener between two connections (not connected, login configured) still takes messages.
    try none.database.publishListenerStatus(ListenerStatus(state: "backingOff", receiveOnly: false))
    #expect(none.post("/v1/send", Self.body()).status == 200)
    var off = APIConfig()
    off.send.enabled = false
    let disabled = try Self.fixture(config: off)
    let turnedOff = disabled.post("/v1/send", Self.body())
    #expect(turnedOff.status == 503 && turnedOff.error == "sending messages is turned off on this server")
  }

  /// `/v1/info` offers `send` only while it would work: on in the config, and a listener whose login can
  /// transmit (none published yet, or a receive-only or unverified one: not offered).
  @Test func infoOffersSendOnlyWhileTheListenerCanTransmit() throws {
    var config = APIConfig()
    config.info.send = true
    let api = try APIFixture(config: config)
    func features() -> JSONValue? {
      Reply(api.handler.handle(APIRequest(method: "GET", path: "/v1/info", contentType: "", body: [])))[
        "features"]
    }
    #expect(features() == .array([.string("settings"), .string("claim")]), "no listener ever published")
    try api.database.publishListenerStatus(
      ListenerStatus(state: "online", connected: true, receiveOnly: true))
    #expect(features() == .array([.string("settings"), .string("claim")]), "receive-only")
    try api.database.publishListenerStatus(
      ListenerStatus(state: "online", connected: true, verified: true, receiveOnly: false))
    #expect(features() == .array([.string("send"), .string("settings"), .string("claim")]))
    var off = APIConfig()
    off.send.enabled = false
    off.info.send = false
    let disabled = try APIFixture(config: off)
    try disabled.database.publishListenerStatus(
      ListenerStatus(state: "online", connected: true, verified: true, receiveOnly: false))
    #expect(
      Reply(disabled.handler.handle(APIRequest(method: "GET", path: "/v1/info", contentType: "", body: [])))[
        "features"] == .array([.string("settings"), .string("claim")]))
  }

  @Test func tooManySendsAMinuteOrInFlightAre429() throws {
    var config = APIConfig()
    config.send.perMinute = 3
    config.send.inFlight = 2
    let api = try Self.fixture(config: config)
    #expect(api.post("/v1/send", Self.body(["text": "1"])).status == 200)
    #expect(api.post("/v1/send", Self.body(["text": "2"])).status == 200)
    let inFlight = api.post("/v1/send", Self.body(["text": "3"]))
    #expect(inFlight.status == 429 && inFlight.error?.contains("waiting for an answer") == true)
    #expect(inFlight.header("Retry-After") == "60")
    _ = try api.database.answerSends(
      [
        SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: "1", kind: .ack),
        SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: "2", kind: .ack),
      ], now: api.clock.now)
    #expect(api.post("/v1/send", Self.body(["text": "3"])).status == 200)
    let perMinute = api.post("/v1/send", Self.body(["text": "4"]))
    #expect(perMinute.status == 429 && perMinute.error?.contains("this minute") == true)
    #expect(perMinute.header("Retry-After") == "60")
    api.clock.advance(ms: 60_000)
    let fourth = api.post("/v1/send", Self.body(["text": "4", "clientId": "y"]))
    #expect(fourth.status == 200)
    #expect(api.post("/v1/send", Self.body(["text": "5"])).status == 429)
    // A replay is answered even at the limit (it sends nothing).
    let replay = api.post("/v1/send", Self.body(["text": "4", "clientId": "y"]))
    #expect(replay.status == 200 && replay["message"] == fourth["message"])
    // Every refusal is counted for /metrics under its config key.
    let hits = try api.database.limitStatus()
    #expect(hits[.sendsInFlight] == 2 && hits[.sendsPerStationPerMinute] == 1, "\(hits)")
  }

  @Test func wrongMethodIs405() throws {
    let api = try Self.fixture()
    let reply = Reply(api.handler.handle(APIRequest(method: "GET", path: "/v1/send", body: [])))
    #expect(reply.status == 405)
  }

  @Test func metricsCountSendsTransmissionsAndTheInFlightGauge() throws {
    let api = try Self.fixture()
    _ = api.post("/v1/send", Self.body(["text": "one"]))
    _ = api.post("/v1/send", Self.body(["text": "two"]))
    _ = try api.database.answerSends(
      [SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: "1", kind: .rej)], now: api.clock.now)
    let metrics = Reply(
      api.handler.handle(APIRequest(method: "GET", path: "/metrics", body: [], viaMetricsListener: true)))
    #expect(metrics.status == 200)
    for line in [
      #"aprs_cloud_sends_total{outcome="accepted"} 2"#, #"aprs_cloud_sends_total{outcome="rejected"} 1"#,
      #"aprs_cloud_sends_total{outcome="acked"} 0"#, #"aprs_cloud_sends_total{outcome="expired"} 0"#,
      "aprs_cloud_send_transmissions_total 0", "aprs_cloud_sends_in_flight 1",
    ] {
      #expect(metrics.text.contains(line + "\n"), "\(line)")
    }
  }
}
