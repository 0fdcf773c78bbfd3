import API
import Foundation
import JSON
import Store
import Testing

@Suite struct EndpointTests {
  @Test func registerCreatesTheStationAndAnswersTheMusts() throws {
    let api = try APIFixture()
    let reply = api.post("/v1/register", registerBody())
    #expect(reply.status == 200, "\(reply.text)")
    #expect(reply.error == nil)
    #expect(reply.messages.isEmpty)
    #expect(reply.serverTime != nil)
    #expect(reply["avatarHash"] == .string(""))
    #expect(reply["avatars"] == .object(JSONObject()))
    let station = try #require(try api.database.station("N0CALL-7"))
    #expect(station.platform == .android)
    #expect(try api.database.devices(of: "N0CALL-7").map(\.token) == ["fcm-token:APA91b-test"])
  }

  @Test func registerWithoutHistoryLeavesMessagesOut() throws {
    let api = try APIFixture()
    let reply = api.post("/v1/register", registerBody(["wantHistory": false]))
    #expect(reply.status == 200)
    #expect(reply["messages"] == nil)
    #expect(reply.serverTime != nil)
  }

  @Test func syncReturnsMessagesWithStringSeqIdsAndIntegerTimes() throws {
    let api = try APIFixture()
    _ = api.post("/v1/register", registerBody())
    try api.deliver(to: "N0CALL-7", from: "KJ7ABC-7", text: "hello", msgno: "42")
    try api.deliver(to: "N0CALL-7", from: "KJ7ABC-7", text: "no number")
    try api.deliver(to: "N0CALL-7", from: "KJ7ABC-7", text: "reply ack", msgno: "AB}CD")
    let reply = api.post("/v1/sync", ["callsign": "N0CALL", "ssid": 7, "since": 0, "auth": "13023"])
    #expect(reply.status == 200, "\(reply.text)")
    let messages = reply.messages
    #expect(messages.count == 3)
    #expect(messages.map { $0["seqId"] } == [.string("42"), .null, .string("AB}CD")])
    #expect(messages.allSatisfy { $0.keys == ["direction", "type", "peer", "text", "timestamp", "seqId"] })
    #expect(
      messages.allSatisfy { $0["direction"] == .string("received") && $0["type"] == .string("message") })
    let times = messages.compactMap { $0["timestamp"]?.intValue }
    #expect(times.count == 3 && times == times.sorted() && Set(times).count == 3)
    #expect(reply.serverTime == times.last)
    #expect(reply.text.contains(#""seqId":"42""#))

    let again = api.post("/v1/sync", ["callsign": "N0CALL", "ssid": 7, "since": times[0], "auth": "13023"])
    #expect(again.messages.count == 2)
    let none = api.post(
      "/v1/sync", ["callsign": "N0CALL", "ssid": 7, "since": reply.serverTime!, "auth": "13023"])
    #expect(none.messages.isEmpty)
    #expect(none.serverTime == reply.serverTime)
  }

  @Test func syncNeverGoesBackBelowSince() throws {
    let api = try APIFixture()
    let reply = api.post("/v1/sync", ["callsign": "N0CALL", "since": 9_000_000_000_000, "auth": 13023])
    #expect(reply.status == 200)
    #expect(reply.serverTime == 9_000_000_000_000)
  }

  @Test func unregisteredStationSyncsAnEmptyList() throws {
    let api = try APIFixture()
    let reply = api.post("/v1/sync", ["callsign": "W5AGO", "since": 0, "auth": "10896"])
    #expect(reply.status == 200)
    #expect(reply.messages.isEmpty)
  }

  @Test func oneStationCannotReadAnothersMessages() throws {
    let api = try APIFixture()
    _ = api.post("/v1/register", registerBody())
    try api.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "for n0call-7 only")
    let other = api.post("/v1/sync", ["callsign": "N0CALL", "ssid": 8, "since": 0, "auth": "13023"])
    #expect(other.messages.isEmpty)
    let wrong = api.post("/v1/sync", ["callsign": "N0CALL", "ssid": 7, "since": 0, "auth": "13024"])
    #expect(wrong.status == 401)
    #expect(wrong["messages"] == nil)
  }

  @Test func heartbeatRecreatesAnUnknownStation() throws {
    let api = try APIFixture()
    let reply = api.post(
      "/v1/heartbeat",
      [
        "callsign": "N0CALL", "ssid": 7, "platform": "ios", "pushToken": String(repeating: "ab", count: 32),
        "auth": "13023",
      ])
    #expect(reply.status == 200, "\(reply.text)")
    #expect(reply.object?.keys == ["avatarHash"])
    #expect(try api.database.station("N0CALL-7") != nil)
    #expect(try api.database.devices(of: "N0CALL-7").first?.platform == .ios)
  }

  @Test func syncOnlyStationNeedsNoPlatform() throws {
    let api = try APIFixture()
    let reply = api.post("/v1/register", ["callsign": "N0CALL", "auth": "13023", "pushToken": ""])
    #expect(reply.status == 200, "\(reply.text)")
    #expect(try api.database.station("N0CALL") != nil)
    #expect(try api.database.devices(of: "N0CALL").isEmpty)
  }

  @Test func callsignWithSSIDSuffixMeansThatSSID() throws {
    let api = try APIFixture()
    let reply = api.post("/v1/register", ["callsign": "n0call-10", "auth": "13023", "wantHistory": true])
    #expect(reply.status == 200, "\(reply.text)")
    #expect(try api.database.station("N0CALL-10") != nil)
    #expect(reply.messages.isEmpty)
  }

  @Test func severalDevicesPerStationAndATokenMoves() throws {
    let api = try APIFixture()
    _ = api.post("/v1/register", registerBody(["pushToken": "token-one:aaaaaaaa"]))
    _ = api.post("/v1/register", registerBody(["pushToken": "token-two:bbbbbbbb"]))
    #expect(try api.database.devices(of: "N0CALL-7").count == 2)
    _ = api.post("/v1/register", registerBody(["ssid": 9, "pushToken": "token-two:bbbbbbbb"]))
    #expect(try api.database.devices(of: "N0CALL-7").map(\.token) == ["token-one:aaaaaaaa"])
    #expect(try api.database.devices(of: "N0CALL-9").map(\.token) == ["token-two:bbbbbbbb"])
  }

  @Test func unregisterDropsTheStationOrOneDevice() throws {
    let api = try APIFixture()
    _ = api.post("/v1/register", registerBody(["pushToken": "token-one:aaaaaaaa"]))
    _ = api.post("/v1/register", registerBody(["pushToken": "token-two:bbbbbbbb"]))
    try api.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "hi")
    let one = api.post(
      "/v1/unregister", ["callsign": "N0CALL", "ssid": 7, "auth": "13023", "pushToken": "token-one:aaaaaaaa"])
    #expect(one.status == 200)
    #expect(one.text == "{}")
    #expect(try api.database.devices(of: "N0CALL-7").map(\.token) == ["token-two:bbbbbbbb"])
    let all = api.post("/v1/unregister", ["callsign": "N0CALL", "ssid": 7, "auth": "13023"])
    #expect(all.text == "{}")
    #expect(try api.database.station("N0CALL-7") == nil)
    let sync = api.post("/v1/sync", ["callsign": "N0CALL", "ssid": 7, "since": 0, "auth": "13023"])
    #expect(sync.messages.isEmpty)
  }

  @Test func routingErrorsAreJSON() throws {
    let api = try APIFixture()
    let notFound = Reply(api.handler.handle(APIRequest(method: "POST", path: "/v1/nope", body: [])))
    #expect(notFound.status == 404)
    #expect(notFound.error != nil)
    let wrongMethod = Reply(api.handler.handle(APIRequest(method: "GET", path: "/v1/sync")))
    #expect(wrongMethod.status == 405)
    #expect(wrongMethod.header("Allow") == "POST")
    #expect(wrongMethod.error != nil)
    let big = Reply(
      api.handler.handle(
        APIRequest(method: "POST", path: "/v1/sync", body: Array(repeating: 0x20, count: 70_000))))
    #expect(big.status == 413)
    #expect(big.error != nil)
  }

  @Test func healthReportsTheDatabaseAndListener() throws {
    let api = try APIFixture()
    let reply = Reply(api.handler.handle(APIRequest(method: "GET", path: "/health")))
    #expect(reply.status == 200)
    #expect(reply["status"] == .string("ok"))
    guard case .object(let listener)? = reply["listener"] else {
      Issue.record("no listener object")
      return
    }
    #expect(listener["running"] == .bool(false))
    #expect(listener["lastLineAgeSeconds"] == .null)
  }

  @Test func healthIs503WhenTheDatabaseIsGone() throws {
    let api = try APIFixture()
    api.database.close()
    let reply = Reply(api.handler.handle(APIRequest(method: "GET", path: "/health")))
    #expect(reply.status == 503)
    #expect(reply.error != nil)
  }

  @Test func rateLimitAnswers429WithRetryAfter() throws {
    var config = APIConfig()
    config.heartbeatsPerHour = 3
    let api = try APIFixture(config: config)
    let body: [String: Any] = ["callsign": "N0CALL", "auth": "13023"]
    for _ in 0..<3 { #expect(api.post("/v1/heartbeat", body).status == 200) }
    let limited = api.post("/v1/heartbeat", body)
    #expect(limited.status == 429)
    #expect(limited.error?.contains("heartbeats") == true)
    let retryAfter = try #require(limited.header("Retry-After").flatMap { Int($0) })
    #expect(retryAfter > 0 && retryAfter <= 3600)
    // Another station is not limited.
    #expect(api.post("/v1/heartbeat", ["callsign": "W5AGO", "auth": "10896"]).status == 200)
    api.clock.advance(ms: 3_600_000)
    #expect(api.post("/v1/heartbeat", body).status == 200)
  }

  @Test func ringRollsOffAtFifty() throws {
    let api = try APIFixture()
    _ = api.post("/v1/register", registerBody())
    for index in 0..<55 {
      try api.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "m\(index)", msgno: "\(index)")
    }
    let reply = api.post("/v1/sync", ["callsign": "N0CALL", "ssid": 7, "since": 0, "auth": "13023"])
    #expect(reply.messages.count == 50)
    #expect(reply.messages.first?["text"] == .string("m5"))
    #expect(reply.messages.last?["text"] == .string("m54"))
  }
}
