import Foundation
import JSON
import Testing

/// Bulletins and announcements end to end (docs/protocol.md "Bulletins and announcements"): `/v1/send` to a `BLN…`
/// address through nginx and the responder, the real `aprs-listener` transmitting it unnumbered on the APRS-IS fake.
/// The processes run on the real clock, so time is moved as `SendEndToEndTests` moves it: the send's schedule
/// (and the day's bulletin log) is shifted into the past in the database, and the listener's sender is woken as
/// the responder wakes it after a send (its wake socket), so the next slot of the grid is due at once.
@Suite(.serialized) struct BulletinEndToEndTests {
  static let line = "OH7LZB-9>APRS,TCPIP*::BLN3WX   :Net tonight 20:00 on 145.500"
  /// One slot of a bulletin's grid, ms.
  static let slotMs = 1_200_000

  /// Moves every send's schedule `ms` into the past, as if that much time had passed, moves the fake's clock on
  /// as far (so its 30 s duplicate filter passes the next copy, as aprsc's would), and wakes the sender.
  static func advance(_ rig: SendRig, ms: Int) throws {
    try rig.aprsis.advance(ms / 1000)
    try rig.database.run(
      """
      UPDATE sends SET created_at = created_at - \(ms), last_sent_at = last_sent_at - \(ms),
        next_at = next_at - \(ms), expires_at = expires_at - \(ms) WHERE state = 'pending';
      """)
    rig.database.wakeListener(2)
  }

  @Test func aBulletinGoesOutUnnumberedRepeatsOnItsGridAndStopsOnCancel() throws {
    let rig = try SendRig()
    defer { rig.stop() }
    let sent = try rig.send(["to": "bln3wx", "text": "Net tonight 20:00 on 145.500", "clientId": "b1"])
    #expect(sent.status == 200, "\(sent.text)")
    guard case .object(let message)? = sent.jsonObject?["message"] else {
      Issue.record("no message: \(sent.text)")
      return
    }
    #expect(message["seqId"] == .null && message.string("peer") == "BLN3WX")
    #expect(message.string("state") == "pending")

    #expect(try rig.aprsis.wait("transmitted", count: 1, timeout: 5), "no copy:\n\(rig.listener.log)")
    let first = try #require(try rig.aprsis.transmitted().first)
    #expect(first.string("line") == Self.line)
    #expect(first.string("line")?.contains("{") == false)
    #expect(
      first.string("forwarded") == "OH7LZB-9>APRS,TCPIP*,qAS,TESTING::BLN3WX   :Net tonight 20:00 on 145.500")
    // Not on a message's schedule (the rig's is 0, 31 s): the next copy is 20 minutes after the send.
    #expect(
      try rig.database.waitUntil {
        try $0.run("SELECT next_at - created_at, kind FROM sends") == "1200000|bulletin\n"
      },
      "\(rig.listener.log)")
    #expect(try rig.aprsis.wait("transmitted", count: 2, timeout: 1.5) == false, "a copy before its slot")

    // An ack from anyone stops nothing.
    try rig.aprsis.inject(["BLN3WX>APDR16,TCPIP*,qAC,T2TEST::OH7LZB-9 :ack1"])
    for copy in 2...4 {
      try Self.advance(rig, ms: Self.slotMs)
      #expect(
        try rig.aprsis.wait("transmitted", count: copy, timeout: 5), "copy \(copy):\n\(rig.listener.log)")
    }
    let copies = try rig.aprsis.transmitted()
    #expect(copies.map { $0.string("line") } == Array(repeating: Self.line, count: 4))
    #expect(copies.allSatisfy { $0.string("dropped") == nil }, "\(copies)")
    #expect(try rig.database.run("SELECT state, transmissions FROM sends") == "pending|4\n")

    let cancel = try rig.send(["cancel": "b1"])
    #expect(cancel.status == 200, "\(cancel.text)")
    guard case .object(let cancelled)? = cancel.jsonObject?["message"] else {
      Issue.record("no message: \(cancel.text)")
      return
    }
    #expect(cancelled.string("state") == "cancelled" && cancelled["seqId"] == .null)
    // The next slot comes (the whole row moved, whatever its state): a cancelled bulletin never goes again.
    try rig.database.run(
      """
      UPDATE sends SET created_at = created_at - \(Self.slotMs), last_sent_at = last_sent_at - \(Self.slotMs),
        next_at = next_at - \(Self.slotMs), expires_at = expires_at - \(Self.slotMs);
      """)
    rig.database.wakeListener(2)
    #expect(try rig.aprsis.wait("transmitted", count: 5, timeout: 1.5) == false, "a copy after the cancel")
    #expect(
      try rig.database.run("SELECT detail FROM station_audit WHERE action = 'bulletin' ORDER BY id")
        == "BLN3WX sent\nBLN3WX cancelled\n")
    let metrics = try rig.stack.metrics().text
    for line in [
      "aprs_cloud_bulletin_transmissions_total 4", "aprs_cloud_send_transmissions_total 4",
      #"aprs_cloud_sends_total{outcome="cancelled"} 1"#,
    ] {
      #expect(metrics.contains(line + "\n"), "\(line)")
    }
  }

  @Test func aBulletinCompletesAfterItsThirteenthCopyWithoutAPush() throws {
    let rig = try SendRig()
    defer { rig.stop() }
    #expect(try rig.send(["to": "BLN1", "text": "Thirteen times"]).status == 200)
    #expect(try rig.aprsis.wait("transmitted", count: 1, timeout: 5), "\(rig.listener.log)")
    for copy in 2...13 {
      try Self.advance(rig, ms: Self.slotMs)
      #expect(
        try rig.aprsis.wait("transmitted", count: copy, timeout: 5), "copy \(copy):\n\(rig.listener.log)")
    }
    #expect(
      try rig.database.waitUntil { try $0.run("SELECT state, transmissions FROM sends") == "completed|13\n" },
      "\(rig.listener.log)")
    try Self.advance(rig, ms: Self.slotMs)
    #expect(try rig.aprsis.wait("transmitted", count: 14, timeout: 1.5) == false, "a 14th copy")
    #expect(try rig.database.int("SELECT count(*) FROM outbox") == 0, "no push for a bulletin")
    #expect(try rig.sync(since: 0).objects("messages").first?.string("state") == "completed")
  }

  @Test func aGuestAndAnUnclaimedStationGet403() throws {
    let rig = try SendRig()
    defer { rig.stop() }
    let body = #"{"callsign":"OH7LZB","ssid":9,"auth":"20900","to":"BLN1","text":"Hello all"}"#
    let guest = try rig.stack.post("/v1/send", json: body)
    #expect(guest.status == 403 && guest.errorMessage?.contains("is claimed") == true, "\(guest.text)")
    let registered = try rig.stack.post(
      "/v1/register", json: #"{"callsign":"OH7LZB","ssid":8,"wantHistory":false,"since":0,"auth":"20900"}"#)
    #expect(registered.status == 200, "\(registered.text)")
    let unclaimed = try rig.stack.post(
      "/v1/send", json: #"{"callsign":"OH7LZB","ssid":8,"auth":"20900","to":"BLN1","text":"Hello all"}"#)
    #expect(
      unclaimed.status == 403 && unclaimed.errorMessage?.contains("POST /v1/claim") == true,
      "\(unclaimed.text)")
    #expect(try rig.database.int("SELECT count(*) FROM sends") == 0)
    #expect(try rig.aprsis.wait("transmitted", count: 1, timeout: 1) == false)
  }

  @Test func theFifthOfADayIs429WithRetryAfterUntilTheOldestLeavesTheDay() throws {
    let rig = try SendRig()
    defer { rig.stop() }
    for index in 1...4 {
      let reply = try rig.send(["to": "BLN\(index)", "text": "Bulletin \(index)"])
      #expect(reply.status == 200, "\(reply.text)")
    }
    let refused = try rig.send(["to": "BLNA", "text": "One too many"])
    #expect(refused.status == 429, "\(refused.text)")
    #expect(refused.errorMessage?.contains("bulletins") == true, "\(refused.text)")
    let retry = Int(refused.header("Retry-After") ?? "") ?? 0
    #expect((86_300...86_400).contains(retry), "Retry-After \(retry)")
    // 23 h 50 min on (the day's log moved into the past): the oldest leaves the 24 h in about 10 minutes.
    try rig.database.run("UPDATE bulletin_log SET accepted_at = accepted_at - 85800000")
    let later = try rig.send(["to": "BLNA", "text": "One too many"])
    #expect(later.status == 429, "\(later.text)")
    let soon = Int(later.header("Retry-After") ?? "") ?? 0
    #expect((500...600).contains(soon), "Retry-After \(soon)")
    try rig.database.run("UPDATE bulletin_log SET accepted_at = accepted_at - 600000")
    let accepted = try rig.send(["to": "BLNA", "text": "A new day"])
    #expect(accepted.status == 200, "\(accepted.text)")
    #expect(try rig.database.int("SELECT count(*) FROM sends WHERE kind = 'bulletin'") == 5)
    #expect(try rig.stack.metrics().text.contains(#"aprs_cloud_limit_hits_total{limit="bulletinsPerDay"} 2"#))
  }

  /// aprsc never echoes a client's own packets: the listener routes each copy as if APRS-IS had delivered it, so a
  /// station here that subscribes to the bulletin gets it, once for all its copies (the subscription window).
  @Test func aStationHereSubscribedToTheBulletinGetsItOnce() throws {
    let rig = try SendRig()
    defer { rig.stop() }
    let identity = #""callsign":"OH7LZB","ssid":8,"auth":"20900""#
    #expect(
      try rig.stack.post("/v1/register", json: "{\(identity),\"wantHistory\":false,\"since\":0}").status
        == 200)
    let claim = try rig.stack.post("/v1/claim", json: "{\(identity)}")
    let key = try #require(claim.jsonObject?.string("stationKey"), "\(claim.text)")
    let settings = try rig.stack.post(
      "/v1/settings", json: "{\(identity),\"subscriptions\":[{\"kind\":\"bulletin\",\"match\":\"BLN*\"}]}",
      headers: ["Authorization: Bearer \(key)"])
    #expect(settings.status == 200, "\(settings.text)")
    // The listener has the subscription once its filter asks for the bulletins.
    let widened = waitUntil(timeout: 10, interval: 0.05) {
      (((try? rig.aprsis.currentFilter()) ?? nil) ?? "").contains("BLN*")
    }
    #expect(widened, "\(rig.listener.log)")
    #expect(try rig.send(["to": "BLN3WX", "text": "Net tonight 20:00 on 145.500"]).status == 200)
    #expect(try rig.aprsis.wait("transmitted", count: 1, timeout: 5), "\(rig.listener.log)")
    try Self.advance(rig, ms: Self.slotMs)
    #expect(try rig.aprsis.wait("transmitted", count: 2, timeout: 5), "\(rig.listener.log)")
    #expect(
      try rig.database.waitUntil {
        try $0.run(
          "SELECT peer, addressee, text FROM messages WHERE station = 'OH7LZB-8' AND kind = 'bulletin'")
          == "OH7LZB-9|BLN3WX|Net tonight 20:00 on 145.500\n"
      }, "\(rig.listener.log)")
    #expect(
      try rig.database.int("SELECT count(*) FROM messages WHERE station = 'OH7LZB-8' AND kind = 'bulletin'")
        == 1)
  }
}
