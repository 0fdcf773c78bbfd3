import API
import Foundation
import JSON
import Store
import Testing

/// `/v1/send` within APRS-IS manners through the handler: the per-address and global limits, addressees that
/// are stations (the server's own login among the refused), `cancel`, and what `/health` and `/metrics` say.
@Suite struct SendMannersTests {
  /// `station` (CALL-SSID) registered with its computed passcode, from `address`.
  static func register(_ api: APIFixture, _ call: String, ssid: Int) {
    let reply = api.post(
      "/v1/register",
      ["callsign": call, "ssid": ssid, "wantHistory": false, "since": 0, "auth": passcode(call)])
    #expect(reply.status == 200, "\(reply.text)")
    // Sending needs a claimed station: claimed here, its key kept for `send`.
    let claim = api.post(
      "/v1/claim", ["callsign": call, "ssid": ssid, "auth": passcode(call)], authorization: nil)
    #expect(claim.status == 200, "\(claim.text)")
    api.claimedKeys[call] = claim["stationKey"]?.stringValue
  }

  /// The APRS-IS passcode of `call` (docs/protocol.md "Passcode").
  static func passcode(_ call: String) -> String {
    var hash: UInt32 = 0x73E2
    let bytes = Array(call.uppercased().utf8)
    var index = 0
    while index < bytes.count {
      hash ^= UInt32(bytes[index]) << 8
      if index + 1 < bytes.count { hash ^= UInt32(bytes[index + 1]) }
      index += 2
    }
    return String(hash & 0x7FFF)
  }

  /// POSTs `/v1/send` from `address`.
  static func send(_ api: APIFixture, _ fields: [String: Any], from address: String) -> Reply {
    let data = try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
    return Reply(
      api.handler.handle(
        APIRequest(
          method: "POST", path: "/v1/send", contentType: "application/json", body: Array(data),
          remoteAddress: address,
          authorization: (fields["callsign"] as? String).flatMap { api.claimedKeys[$0] }.map {
            "Bearer \($0)"
          })))
  }

  static func fixture(_ config: APIConfig = APIConfig(), login: String? = "K1LOG-3") throws -> APIFixture {
    let api = try APIFixture(config: config)
    try api.database.publishListenerStatus(
      ListenerStatus(state: "online", connected: true, verified: true, receiveOnly: false, login: login))
    return api
  }

  static func body(_ call: String, _ extra: [String: Any] = [:]) -> [String: Any] {
    var body: [String: Any] = [
      "callsign": call, "ssid": 0, "auth": passcode(call), "to": "KJ7ABC-7", "text": "Hello",
    ]
    body.merge(extra) { $1 }
    return body
  }

  static func metric(_ api: APIFixture, _ line: String) -> Bool {
    Reply(api.handler.handle(APIRequest(method: "GET", path: "/metrics", body: [], viaMetricsListener: true)))
      .text.contains(line + "\n")
  }

  @Test func oneAddressIsHeldAcrossItsStationsAndAnotherAddressIsNot() throws {
    var config = APIConfig()
    config.send.sendsPerAddressPerMinute = 3
    let api = try Self.fixture(config)
    let calls = ["W1AW", "K1ABC", "N1XYZ", "W2XYZ"]
    for call in calls { Self.register(api, call, ssid: 0) }
    for call in calls.prefix(3) {
      #expect(Self.send(api, Self.body(call), from: "203.0.113.7").status == 200)
    }
    let refused = Self.send(api, Self.body("W2XYZ"), from: "203.0.113.7")
    #expect(refused.status == 429, "\(refused.text)")
    #expect(refused.error?.contains("from this address") == true, "\(refused.text)")
    #expect(refused.header("Retry-After") == "60")
    // The same /64 is the same address; another IPv4 address is not.
    #expect(Self.send(api, Self.body("W2XYZ"), from: "203.0.113.8").status == 200)
    #expect(Self.send(api, Self.body("W1AW", ["text": "v6 1"]), from: "2001:db8:0:1::1").status == 200)
    #expect(Self.send(api, Self.body("K1ABC", ["text": "v6 2"]), from: "2001:db8:0:1::2").status == 200)
    #expect(Self.send(api, Self.body("N1XYZ", ["text": "v6 3"]), from: "2001:db8:0:1:ffff::9").status == 200)
    #expect(Self.send(api, Self.body("W2XYZ", ["text": "v6 4"]), from: "2001:db8:0:1::4").status == 429)
    #expect(Self.metric(api, #"aprs_cloud_limit_hits_total{limit="sendsPerAddressPerMinute"} 2"#))
    #expect(Self.metric(api, #"aprs_cloud_limit_setting{limit="sendsPerAddressPerMinute"} 3"#))
    // A minute later the address may send again.
    api.clock.advance(ms: 60_000)
    #expect(Self.send(api, Self.body("W2XYZ", ["text": "later"]), from: "203.0.113.7").status == 200)
  }

  @Test func theGlobalLimitHoldsEveryoneTogether() throws {
    var config = APIConfig()
    config.send.sendsPerMinuteGlobal = 2
    let api = try Self.fixture(config)
    for call in ["W1AW", "K1ABC", "N1XYZ", "W2XYZ", "K2ABC"] { Self.register(api, call, ssid: 0) }
    // From five networks: one network may send only its share of everyone's (docs/design.md).
    #expect(Self.send(api, Self.body("W1AW"), from: "192.0.2.1").status == 200)
    api.clock.advance(ms: 20_000)
    #expect(Self.send(api, Self.body("K1ABC"), from: "198.51.100.2").status == 200)
    // Past everyone's budget: the next minute's worth waits (accepted, its first copy later), then a 429.
    for (call, address) in [("N1XYZ", "203.0.113.3"), ("W2XYZ", "192.0.3.4")] {
      let queued = Self.send(api, Self.body(call), from: address)
      #expect(queued.status == 200, "\(queued.text)")
    }
    #expect(
      try api.database.dueSends(now: .max, canTransmit: true).filter { $0.budgetDelayMs == 40_000 }.count == 2
    )
    let refused = Self.send(api, Self.body("K2ABC"), from: "192.0.4.5")
    #expect(refused.status == 429, "\(refused.text)")
    #expect(refused.error?.contains("through this server") == true, "\(refused.text)")
    #expect(refused.header("Retry-After") == "40")
    #expect(Self.metric(api, #"aprs_cloud_limit_hits_total{limit="sendsPerMinuteGlobal"} 1"#))
    #expect(Self.metric(api, #"aprs_cloud_limit_setting{limit="sendsPerMinuteGlobal"} 2"#))
    #expect(try api.database.sendStatus().accepted == 4)
  }

  /// The server's own login is refused whether the responder's config names it (`W5AGO-15`) or only the
  /// listener published it (`K1LOG-3`).
  @Test(
    "addressees that are no station are a 400 naming to",
    arguments: [
      "N0CALL-10", "n0call-10", "SERVER", "TCPIP", "TCPXX", "NOCALL", "N0CALL", "N0CALL-3", "QAC", "qAR",
      "QAS",
      "WIDE", "WIDE1-1", "WIDE2-2", "RELAY", "TRACE", "TRACE3-3", "RFONLY", "NOGATE", "BLN", "BLNX-1", "NWS",
      "NWSALL", "W5AGO-15", "K1LOG-3", "k1log-3",
    ])
  func refusedAddressee(to: String) throws {
    var config = APIConfig()
    config.listenerLogin = "W5AGO-15"
    let api = try Self.fixture(config)
    Self.register(api, "W1AW", ssid: 0)
    let reply = Self.send(api, Self.body("W1AW", ["to": to]), from: "192.0.2.1")
    #expect(reply.status == 400, "\(reply.text)")
    #expect(reply.error?.hasPrefix("to: ") == true, "\(reply.text)")
    #expect(try api.database.sendStatus().accepted == 0)
  }

  @Test(
    "stations are accepted as addressees",
    arguments: ["KJ7ABC-7", "W5AGO-14", "W5AGO", "K1LOG", "QA1", "WXBOT", "ANSRVR"])
  func acceptedAddressee(to: String) throws {
    var config = APIConfig()
    config.listenerLogin = "W5AGO-15"
    let api = try Self.fixture(config)
    Self.register(api, "W1AW", ssid: 0)
    let reply = Self.send(api, Self.body("W1AW", ["to": to]), from: "192.0.2.1")
    #expect(reply.status == 200, "\(reply.text)")
  }

  @Test func aCancelStopsTheSendAndSyncShowsItCancelledWithANewTimestamp() throws {
    let api = try Self.fixture()
    Self.register(api, "W1AW", ssid: 0)
    let sent = Self.send(api, Self.body("W1AW", ["clientId": "phone-7"]), from: "192.0.2.1")
    guard case .object(let message)? = sent["message"], let cursor = sent.serverTime else {
      Issue.record("\(sent.text)")
      return
    }
    api.clock.advance(ms: 1_000)
    let cancel: [String: Any] = [
      "callsign": "W1AW", "ssid": 0, "auth": Self.passcode("W1AW"), "cancel": "phone-7",
    ]
    let reply = Self.send(api, cancel, from: "192.0.2.1")
    #expect(reply.status == 200, "\(reply.text)")
    guard case .object(let cancelled)? = reply["message"] else {
      Issue.record("\(reply.text)")
      return
    }
    #expect(cancelled["state"] == .string("cancelled") && cancelled["clientId"] == .string("phone-7"))
    #expect(cancelled["seqId"] == message["seqId"] && cancelled["peer"] == message["peer"])
    let stamp = try #require(cancelled["timestamp"]?.intValue)
    #expect(stamp > cursor && reply.serverTime == stamp)
    let sync = api.post(
      "/v1/sync", ["callsign": "W1AW", "ssid": 0, "since": cursor, "auth": Self.passcode("W1AW")])
    #expect(sync.messages == [cancelled])
    #expect(try api.database.dueSends(now: api.clock.now + 100_000, canTransmit: true).isEmpty)
    // Again: answered as it is.
    api.clock.advance(ms: 1_000)
    let again = Self.send(api, cancel, from: "192.0.2.1")
    #expect(again.status == 200 && again["message"] == reply["message"])
    #expect(Self.metric(api, #"aprs_cloud_sends_total{outcome="cancelled"} 1"#))
  }

  @Test func cancellingAnUnknownOrAnsweredSendOrWithBadFields() throws {
    let api = try Self.fixture()
    Self.register(api, "W1AW", ssid: 0)
    let auth = Self.passcode("W1AW")
    let unknown = Self.send(
      api, ["callsign": "W1AW", "ssid": 0, "auth": auth, "cancel": "nope"], from: "192.0.2.1")
    #expect(unknown.status == 404 && unknown.error?.contains("nope") == true, "\(unknown.text)")
    _ = Self.send(api, Self.body("W1AW", ["clientId": "a"]), from: "192.0.2.1")
    _ = try api.database.answerSends(
      [SendAnswer(station: "W1AW", peer: "KJ7ABC-7", msgno: "1", kind: .ack)], now: api.clock.now)
    let acked = Self.send(
      api, ["callsign": "W1AW", "ssid": 0, "auth": auth, "cancel": "a"], from: "192.0.2.1")
    #expect(acked.status == 200, "\(acked.text)")
    if case .object(let message)? = acked["message"] {
      #expect(message["state"] == .string("acked"))
    } else {
      Issue.record("\(acked.text)")
    }
    for bad: [String: Any] in [
      ["cancel": ""], ["cancel": 12], ["cancel": String(repeating: "c", count: 65)],
      ["cancel": "a", "to": "K1ABC"],
      ["cancel": "a", "text": "x"],
    ] {
      var body: [String: Any] = ["callsign": "W1AW", "ssid": 0, "auth": auth]
      body.merge(bad) { $1 }
      let reply = Self.send(api, body, from: "192.0.2.1")
      #expect(reply.status == 400 && reply.error?.hasPrefix("cancel") == true, "\(bad): \(reply.text)")
    }
    let stranger = Self.send(
      api, ["callsign": "K1ABC", "ssid": 0, "auth": Self.passcode("K1ABC"), "cancel": "a"], from: "192.0.2.1")
    #expect(stranger.status == 404 && stranger.error?.contains("not registered") == true, "\(stranger.text)")
    #expect(
      Self.send(api, ["callsign": "W1AW", "ssid": 0, "auth": "1", "cancel": "a"], from: "192.0.2.1").status
        == 401)
  }

  /// `/health`'s `send.budgetFull`.
  static func budgetFull(_ reply: Reply) -> Bool? {
    guard case .object(let send)? = reply["send"], case .bool(let full)? = send["budgetFull"] else {
      return nil
    }
    return full
  }

  @Test func healthSaysWhenTheTransmitBudgetIsFullWithoutA503() throws {
    let api = try APIFixture()
    #expect(try api.database.acquireLease(holder: "test", now: api.clock.now, ttlMs: 30_000))
    try api.database.publishListenerStatus(
      ListenerStatus(state: "online", connected: true, verified: true, receiveOnly: false))
    func health() -> Reply { Reply(api.handler.handle(APIRequest(method: "GET", path: "/health", body: []))) }
    let calm = health()
    #expect(calm.status == 200 && calm["status"] == .string("ok"), "\(calm.text)")
    #expect(Self.budgetFull(calm) == false)
    try api.database.publishListenerStatus(
      ListenerStatus(
        state: "online", connected: true, verified: true, receiveOnly: false, sendBudgetFull: true))
    let full = health()
    #expect(full.status == 200, "\(full.text)")
    #expect(full["status"] == .string("degraded"))
    #expect(Self.budgetFull(full) == true)
    guard case .array(let reasons)? = full["degraded"] else {
      Issue.record("\(full.text)")
      return
    }
    #expect(reasons.contains { $0.stringValue?.contains("transmit budget") == true }, "\(full.text)")
    #expect(Self.metric(api, "aprs_cloud_listener_send_budget_full 1"))
  }

  @Test func metricsCountCopiesTheBudgetDelayed() throws {
    let api = try Self.fixture()
    Self.register(api, "W1AW", ssid: 0)
    _ = Self.send(api, Self.body("W1AW"), from: "192.0.2.1")
    let id = try #require(try api.database.dueSends(now: api.clock.now, canTransmit: true).first?.id)
    #expect(Self.metric(api, "aprs_cloud_send_copies_delayed_total 0"))
    _ = try api.database.recordSendSchedule(
      [
        .transmitted(
          id: id, at: api.clock.now, nextAt: nil, expiresAt: api.clock.now + 1, budgetDelayMs: 5_000)
      ],
      now: api.clock.now)
    #expect(Self.metric(api, "aprs_cloud_send_copies_delayed_total 1"))
  }
}
