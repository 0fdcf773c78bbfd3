import API
import Foundation
import JSON
import Store
import Testing

/// `POST /v1/send` to a bulletin or announcement address (docs/protocol.md "Bulletins and announcements") through
/// the handler: the addressee and text rules, the owner rule, the per-day limit on the fixture's clock, cancel and
/// the audit trail.
@Suite struct BulletinSendTests {
  static func body(_ extra: [String: Any] = [:]) -> [String: Any] {
    SendEndpointTests.body(["to": "BLN3WX", "text": "Net tonight 20:00 on 145.500"].merging(extra) { $1 })
  }

  @Test func aBulletinIsAcceptedUnnumberedAndSyncShowsItAsASentEntry() throws {
    let api = try SendEndpointTests.fixture()
    let reply = api.post("/v1/send", Self.body(["to": "bln3wx", "clientId": "b1"]))
    #expect(reply.status == 200, "\(reply.text)")
    guard case .object(let message)? = reply["message"] else {
      Issue.record("no message: \(reply.text)")
      return
    }
    #expect(message["direction"] == .string("sent") && message["peer"] == .string("BLN3WX"))
    #expect(message["seqId"] == .null && message["state"] == .string("pending"))
    #expect(message["clientId"] == .string("b1"))
    let sync = api.post("/v1/sync", ["callsign": "OH7LZB", "ssid": 9, "since": 0, "auth": "20900"])
    #expect(sync.messages == [message])
    let due = try api.database.dueSends(now: api.clock.now, canTransmit: true)
    #expect(due.map(\.kind) == [.bulletin] && due.first?.msgno == nil && due.first?.addressee == "BLN3WX")
    let trail = try api.database.auditTrail(of: "OH7LZB-9")
    #expect(trail.first?.action == .bulletin && trail.first?.detail == "BLN3WX sent")
    // Announcements too; a message still gets its number.
    #expect(api.post("/v1/send", Self.body(["to": "BLNAEVT"])).status == 200)
    #expect(api.post("/v1/send", Self.body(["to": "BLNQ"])).status == 200)
    let numbered = api.post("/v1/send", SendEndpointTests.body())
    if case .object(let sent)? = numbered["message"] {
      #expect(sent["seqId"] == .string("1"))
    } else {
      Issue.record("no message: \(numbered.text)")
    }
  }

  @Test(
    "addresses that are no bulletin or announcement address are a 400 naming to",
    arguments: ["BLN", "BLN12345678", "BLNAB CD", "BLN3WX!", "BLN-1", "BLN1-1", "BLN1234567", "BLN_"])
  func badBulletinAddressees(to: String) throws {
    let api = try SendEndpointTests.fixture()
    let reply = api.post("/v1/send", Self.body(["to": to]))
    #expect(reply.status == 400, "\(reply.text)")
    #expect(reply.error?.hasPrefix("to: ") == true, "\(reply.text)")
    #expect(try api.database.sendStatus().accepted == 0)
  }

  @Test(
    "a bulletin's text follows the rules of a send's",
    arguments: [
      "", "   ", "a{b", "pipe|", "tilde~", String(repeating: "x", count: 68), "ack12", "?APRSP", "a\u{7}",
    ])
  func badBulletinTexts(text: String) throws {
    let api = try SendEndpointTests.fixture()
    let reply = api.post("/v1/send", Self.body(["text": text]))
    #expect(reply.status == 400, "\(reply.text)")
    #expect(reply.error?.contains("text") == true, "\(reply.text)")
    #expect(try api.database.sendStatus().accepted == 0)
  }

  @Test func aGuestOrAnUnclaimedStationGetsThe403() throws {
    let api = try SendEndpointTests.fixture()
    api.stationKey = nil
    let guest = api.post("/v1/send", Self.body())
    #expect(guest.status == 403, "\(guest.text)")
    #expect(guest.error?.contains("claimed") == true, "\(guest.text)")
    let unclaimed = try APIFixture()
    #expect(
      unclaimed.post(
        "/v1/register", ["callsign": "OH7LZB", "ssid": 9, "wantHistory": false, "since": 0, "auth": "20900"]
      ).status == 200)
    try unclaimed.database.publishListenerStatus(
      ListenerStatus(state: "online", connected: true, verified: true, receiveOnly: false))
    let refused = unclaimed.post("/v1/send", Self.body())
    #expect(refused.status == 403, "\(refused.text)")
    #expect(refused.error?.contains("POST /v1/claim") == true, "\(refused.text)")
    #expect(try api.database.sendStatus().accepted == 0)
    #expect(try unclaimed.database.sendStatus().accepted == 0)
  }

  @Test func theFifthOfADayIs429UntilTheOldestLeavesTheWindow() throws {
    let api = try SendEndpointTests.fixture()
    let start = api.clock.now
    for hour in 0..<4 {
      let reply = api.post("/v1/send", Self.body(["to": "BLN\(hour)"]))
      #expect(reply.status == 200, "\(reply.text)")
      api.clock.advance(ms: 3_600_000)
    }
    // Four hours on: the first leaves the 24 h window 20 h from now.
    let refused = api.post("/v1/send", Self.body(["to": "BLNA"]))
    #expect(refused.status == 429, "\(refused.text)")
    #expect(refused.header("Retry-After") == "72000")
    #expect(refused.error?.contains("bulletins") == true, "\(refused.text)")
    #expect(try api.database.limitStatus()[.bulletinsPerDay] == 1)
    // A message is no bulletin: it still goes.
    #expect(api.post("/v1/send", SendEndpointTests.body()).status == 200)
    api.clock.advance(ms: start + 86_400_000 - api.clock.now - 1)
    #expect(api.post("/v1/send", Self.body(["to": "BLNA"])).header("Retry-After") == "1")
    api.clock.advance(ms: 1)
    #expect(api.post("/v1/send", Self.body(["to": "BLNA"])).status == 200)
    #expect(api.post("/v1/send", Self.body(["to": "BLNB"])).status == 429)
  }

  @Test func theLimitIsTheConfigsAndABulletinCountsAgainstThePerMinuteLimitButNotInFlight() throws {
    var config = APIConfig()
    config.send.bulletinsPerDay = 1
    config.send.perMinute = 3
    config.send.inFlight = 1
    let api = try SendEndpointTests.fixture(config: config)
    #expect(api.post("/v1/send", SendEndpointTests.body()).status == 200)
    // One message in flight (the limit) does not hold a bulletin back; the day's one bulletin does.
    #expect(api.post("/v1/send", Self.body()).status == 200)
    let second = api.post("/v1/send", Self.body(["to": "BLN4"]))
    #expect(second.status == 429 && second.error?.contains("at most 1") == true, "\(second.text)")
    // Two sends this minute and a refused one: with perMinute 2 a bulletin would wait for the minute.
    var tight = APIConfig()
    tight.send.perMinute = 2
    let other = try SendEndpointTests.fixture(config: tight)
    #expect(other.post("/v1/send", SendEndpointTests.body()).status == 200)
    #expect(other.post("/v1/send", Self.body()).status == 200)
    let third = other.post("/v1/send", Self.body(["to": "BLN5"]))
    #expect(third.status == 429 && third.error?.contains("this minute") == true, "\(third.text)")
    #expect(third.header("Retry-After") != nil)
  }

  @Test func aCancelledBulletinEndsCancelledAndIsAudited() throws {
    let api = try SendEndpointTests.fixture()
    #expect(api.post("/v1/send", Self.body(["clientId": "net"])).status == 200)
    api.clock.advance(ms: 1_000)
    let cancel = api.post("/v1/send", ["callsign": "OH7LZB", "ssid": 9, "auth": "20900", "cancel": "net"])
    #expect(cancel.status == 200, "\(cancel.text)")
    if case .object(let message)? = cancel["message"] {
      #expect(message["state"] == .string("cancelled") && message["peer"] == .string("BLN3WX"))
    } else {
      Issue.record("no message: \(cancel.text)")
    }
    #expect(try api.database.dueSends(now: .max, canTransmit: true).isEmpty)
    let trail = try api.database.auditTrail(of: "OH7LZB-9").filter { $0.action == .bulletin }
    #expect(trail.map(\.detail) == ["BLN3WX cancelled", "BLN3WX sent"])
  }

  @Test func anExportedBulletinImportsAsAnEndedBulletin() throws {
    let api = try SendEndpointTests.fixture()
    #expect(api.post("/v1/send", Self.body(["clientId": "b1"])).status == 200)
    #expect(api.post("/v1/send", SendEndpointTests.body()).status == 200)
    let identity: [String: Any] = ["callsign": "OH7LZB", "ssid": 9, "auth": "20900"]
    let exported = api.post("/v1/export", identity)
    #expect(exported.status == 200, "\(exported.text)")
    let fresh = try APIFixture()
    fresh.clock.advance(ms: 1_000_000)
    let archive = try StationArchive(document: Array(exported.text.utf8), retentionCap: 500)
    #expect(try fresh.database.importStation(archive, withClaim: true, now: fresh.clock.now).entries == 2)
    fresh.stationKey = api.stationKey
    let sync = fresh.post("/v1/sync", ["callsign": "OH7LZB", "ssid": 9, "since": 0, "auth": "20900"])
    let states = sync.messages.map { "\($0["peer"]?.stringValue ?? ""):\($0["state"]?.stringValue ?? "")" }
    // A send in flight stays with the old server's schedule: here it ended (a bulletin completed).
    #expect(states.sorted() == ["BLN3WX:completed", "KJ7ABC-7:expired"], "\(sync.text)")
    #expect(try fresh.database.dueSends(now: .max, canTransmit: true).isEmpty)
  }
}
