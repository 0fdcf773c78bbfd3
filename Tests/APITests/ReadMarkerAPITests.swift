import API
import Foundation
import JSON
import Store
import Testing

/// Read markers shared by every device (`POST /v1/read`): one device marks a conversation read, another's sync
/// or held long poll with `want:["inbox"]` gets the marker, the push count counts only what is unread, and every
/// bad value is a 400 naming the field.
@Suite struct ReadMarkerAPITests {
  nonisolated(unsafe) static let identity = APIFixture.settingsIdentity

  private func answer(_ fixture: APIFixture, _ path: String, _ fields: [String: Any]) -> APIAnswer {
    let data = try! JSONSerialization.data(
      withJSONObject: Self.identity.merging(fields) { $1 }, options: [.sortedKeys])
    return fixture.handler.answer(
      APIRequest(
        method: "POST", path: path, contentType: "application/json", body: Array(data),
        authorization: fixture.stationKey.map { "Bearer \($0)" }))
  }

  @Test func aMarkerReachesTheOtherDevicesHeldLongPollAndTheCount() throws {
    let fixture = try APIFixture.withClaimedStation()
    try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "one")
    try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "two")
    try fixture.deliver(to: "N0CALL-7", from: "OH7AA", text: "three")
    // The tablet syncs everything and holds a long poll from its cursor.
    let first = fixture.post("/v1/sync", Self.identity.merging(["since": 0, "want": ["inbox"]]) { $1 })
    #expect(first.messages.count == 3 && first["read"] == .object(JSONObject()))
    let cursor = try #require(first.serverTime)
    guard
      case .park(let park) = answer(fixture, "/v1/sync", ["since": cursor, "wait": 30, "want": ["inbox"]])
    else {
      Issue.record("the long poll was not held")
      return
    }
    #expect(try fixture.database.unpulledCount(station: "N0CALL-7") == 0, "the sync pulled them")
    // The phone reads KJ7ABC's two.
    let upTo = try #require(first.messages[1]["timestamp"]?.intValue)
    let marked = fixture.post("/v1/read", Self.identity.merging(["peer": "kj7abc", "upTo": upTo]) { $1 })
    #expect(marked.status == 200 && marked["peer"]?.stringValue == "KJ7ABC", "\(marked.text)")
    let stamp = try #require(marked.serverTime)
    #expect(stamp > cursor)
    // The store's activity names the station (the shell wakes its held polls on it); read again, it answers.
    #expect(try fixture.database.messageActivity(after: cursor).stations["N0CALL-7"] == stamp)
    guard case .response(let response) = fixture.handler.resumeSync(park, final: false) else {
      Issue.record("the held long poll did not answer the marker")
      return
    }
    let woken = Reply(response)
    #expect(woken.messages.isEmpty && woken.serverTime == stamp)
    #expect(woken.text.contains(#""read":{"KJ7ABC":\#(upTo)}"#), "\(woken.text)")
    // A marker never moves back; the same one again changes nothing.
    let back = fixture.post("/v1/read", Self.identity.merging(["peer": "KJ7ABC", "upTo": 1]) { $1 })
    #expect(back.status == 200 && back.serverTime == stamp)
    #expect(back["upTo"]?.intValue == upTo, "the marker as it stands: \(back.text)")
    // An old client's sync has no `read`.
    let old = fixture.post("/v1/sync", Self.identity.merging(["since": 0]) { $1 })
    #expect(old["read"] == nil && old.messages.count == 3)
    // New messages: the count leaves out what the markers cover.
    try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "four")
    try fixture.deliver(to: "N0CALL-7", from: "OH7AA", text: "five")
    let five = try #require(fixture.database.recentMessages(station: "N0CALL-7", limit: 1).last?.timestamp)
    #expect(try fixture.database.unpulledCount(station: "N0CALL-7") == 2)
    _ = fixture.post("/v1/read", Self.identity.merging(["peer": "*", "upTo": five]) { $1 })
    #expect(try fixture.database.unpulledCount(station: "N0CALL-7") == 0)
  }

  /// A marker past every timestamp the server gave (anyone with an unclaimed station's passcode could send
  /// one) would hide every message still to come, for good: it stops at the newest the server gave.
  @Test func aMarkerInTheFutureStopsAtTheServersNewestAndLaterMessagesAreUnread() throws {
    let fixture = try APIFixture.withClaimedStation()
    try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "one")
    let far = Int64(9_007_199_254_740_991)
    let marked = fixture.post("/v1/read", Self.identity.merging(["peer": "*", "upTo": far]) { $1 })
    let stamp = try #require(marked.serverTime)
    let stored = try #require(marked["upTo"]?.intValue)
    #expect(marked.status == 200 && stored < stamp && stored < far, "\(marked.text)")
    #expect(try fixture.database.readMarkers(station: "N0CALL-7", changedAfter: 0) == ["*": stored])
    #expect(try fixture.database.unpulledCount(station: "N0CALL-7") == 0)
    fixture.clock.advance(ms: 5)
    try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "two")
    #expect(
      try fixture.database.unpulledCount(station: "N0CALL-7") == 1, "a message after the marker is unread")
  }

  @Test func badValuesAreA400NamingTheFieldAndAClaimedStationNeedsItsKey() throws {
    let fixture = try APIFixture.withClaimedStation()
    let cases: [([String: Any], String)] = [
      ([:], "peer"), (["peer": 7, "upTo": 1], "peer"), (["peer": "not a call", "upTo": 1], "peer"),
      (["peer": String(repeating: "A", count: 40), "upTo": 1], "peer"), (["peer": "KJ7ABC"], "upTo"),
      (["peer": "KJ7ABC", "upTo": -1], "upTo"), (["peer": "KJ7ABC", "upTo": "5"], "upTo"),
      (["peer": "KJ7ABC", "upTo": 1.5], "upTo"),
    ]
    for (fields, field) in cases {
      let reply = fixture.post("/v1/read", Self.identity.merging(fields) { $1 })
      #expect(reply.status == 400, "\(fields): \(reply.text)")
      #expect(reply.error?.hasPrefix(field) == true, "\(fields): \(reply.error ?? "")")
    }
    let keyless = fixture.post(
      "/v1/read", Self.identity.merging(["peer": "*", "upTo": 1]) { $1 }, authorization: nil)
    #expect(keyless.status == 403, "\(keyless.text)")
  }
}
