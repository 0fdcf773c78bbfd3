import API
import Foundation
import JSON
import Store
import Testing

/// The inbox that never loses a message unseen: `retention` `untilPulled` keeps messages until every keyed device
/// pulled them, paged answers for `want:["inbox"]`, and `dropped` when the ring evicted unpulled ones; the
/// shipping app's answers stay exactly as they were.
@Suite struct InboxAPITests {
  nonisolated(unsafe) static let identity = APIFixture.settingsIdentity

  private func texts(_ reply: Reply) -> [String] { reply.messages.compactMap { $0["text"]?.stringValue } }

  @Test func untilPulledKeepsEverythingUntilTheKeyedDevicePagedThroughIt() throws {
    let fixture = try APIFixture.withClaimedStation()
    var reply = fixture.settings(["retention": ["mode": "untilPulled", "max": 500]])
    #expect(reply.text.hasSuffix(#""retention":{"mode":"untilPulled","max":500}}"#), "\(reply.text)")
    // The owner's phone registers with the key: a keyed device, which has pulled nothing yet.
    #expect(fixture.post("/v1/register", registerBody(["wantHistory": false])).status == 200)
    for index in 0..<120 { try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "m\(index)") }
    #expect(try fixture.database.recentMessages(station: "N0CALL-7", limit: 1000).count == 120)

    reply = fixture.post("/v1/register", registerBody(["since": 0, "want": ["inbox"]]))
    #expect(texts(reply) == (0..<100).map { "m\($0)" })
    #expect(reply["more"] == .bool(true) && reply["dropped"]?.intValue == 0)
    let cursor = try #require(reply.serverTime)
    #expect(reply.messages.last?["timestamp"]?.intValue == cursor)
    reply = fixture.post(
      "/v1/sync",
      Self.identity.merging(["since": cursor, "want": ["inbox"], "pushToken": "fcm-token:APA91b-test"]) { $1 }
    )
    #expect(texts(reply) == (100..<120).map { "m\($0)" })
    #expect(reply["more"] == .bool(false))
    // Every keyed device pulled them: the ring applies again with the next message.
    try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "after")
    #expect(try fixture.database.recentMessages(station: "N0CALL-7", limit: 1000).count == 50)
    #expect(try fixture.database.droppedCount(station: "N0CALL-7", since: 0) == 0, "all were pulled")
  }

  /// The old protocol's answers (no key, no `want`) never carry more than 50 messages, however many the station
  /// keeps: the shipping app was built against the ring of 50. The rest follow, oldest first, from the
  /// `serverTime` each answer gives (its last message's timestamp), so the cursor still skips nothing.
  @Test func theOldAppsRegisterAndSyncNeverAnswerMoreThan50WhenMoreAreKept() throws {
    let fixture = try APIFixture.withClaimedStation()
    #expect(fixture.settings(["retention": ["mode": "untilPulled", "max": 500]]).status == 200)
    // The owner's phone (keyed) holds the 120 until it pulls them.
    #expect(fixture.post("/v1/register", registerBody(["wantHistory": false])).status == 200)
    for index in 0..<120 { try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "m\(index)") }
    #expect(try fixture.database.recentMessages(station: "N0CALL-7", limit: 1000).count == 120)

    // The shipping app: no key, no `want`.
    fixture.stationKey = nil
    var reply = fixture.post("/v1/register", registerBody(["pushToken": "fcm-token:old-app"]))
    #expect(reply.status == 200, "\(reply.text)")
    #expect(texts(reply) == (0..<50).map { "m\($0)" })
    #expect(reply["more"] == nil && reply["dropped"] == nil)
    var cursor = try #require(reply.serverTime)
    #expect(reply.messages.last?["timestamp"]?.intValue == cursor)

    reply = fixture.post("/v1/sync", Self.identity.merging(["since": cursor]) { $1 })
    #expect(texts(reply) == (50..<100).map { "m\($0)" })
    #expect(reply["more"] == nil)
    cursor = try #require(reply.serverTime)
    #expect(reply.messages.last?["timestamp"]?.intValue == cursor)
    reply = fixture.post("/v1/sync", Self.identity.merging(["since": cursor]) { $1 })
    #expect(texts(reply) == (100..<120).map { "m\($0)" })
    // A sync from 0 again: the same first 50.
    reply = fixture.post("/v1/sync", Self.identity.merging(["since": 0]) { $1 })
    #expect(texts(reply) == (0..<50).map { "m\($0)" })
  }

  @Test func theRingSaysWhatItDroppedAndThePushCountsIt() throws {
    let fixture = try APIFixture.withClaimedStation()
    let oldBefore = fixture.post("/v1/sync", Self.identity.merging(["since": 0]) { $1 }).text
    for index in 0..<70 { try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "m\(index)") }
    let opted = fixture.post("/v1/sync", Self.identity.merging(["since": 0, "want": ["inbox"]]) { $1 })
    #expect(texts(opted) == (20..<70).map { "m\($0)" })
    #expect(opted["dropped"]?.intValue == 20 && opted["more"] == .bool(false))
    #expect(opted["oldestTimestamp"]?.intValue == opted.messages.first?["timestamp"]?.intValue)
    // What a push counts: the 50 held and the 20 evicted before the sync above moved the cursor.
    let fresh = try APIFixture.withClaimedStation()
    for index in 0..<70 { try fresh.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "m\(index)") }
    #expect(
      try fresh.database.unpulledCount(station: "N0CALL-7")
        + fresh.database.droppedSinceCursor(station: "N0CALL-7")
        == 70)
    // The shipping app's answer has no inbox keys and is the 50 as always.
    let old = fresh.post("/v1/sync", Self.identity.merging(["since": 0]) { $1 })
    #expect(old.messages.count == 50 && old["dropped"] == nil && old["more"] == nil)
    #expect(!oldBefore.contains("dropped"))
    // /metrics counts every eviction of an unpulled message: 20 in each of the two databases.
    for api in [fixture, fresh] {
      let metrics = String(
        decoding: api.handler.handle(APIRequest(method: "GET", path: "/metrics", viaMetricsListener: true))
          .body,
        as: UTF8.self)
      #expect(metrics.contains("\naprs_cloud_messages_dropped_unpulled_total 20\n"), "\(metrics)")
    }
  }

  @Test func hostileRetentionValuesAreA400NamingTheField() throws {
    let fixture = try APIFixture.withClaimedStation()
    let cases: [(Any, String)] = [
      ("ring", "retention"), (["mode": "forever"], "retention.mode"), (["max": 5], "retention.mode"),
      (["mode": "untilPulled"], "retention.max"), (["mode": "untilPulled", "max": 0], "retention.max"),
      (["mode": "untilPulled", "max": 501], "retention.max"),
      (["mode": "untilPulled", "max": "9"], "retention.max"),
      (["mode": "untilPulled", "max": 1.5], "retention.max"), (["mode": "ring", "max": 5], "retention.max"),
      (["mode": "ring", "extra": true], "retention.extra"),
    ]
    for (value, field) in cases {
      let reply = fixture.settings(["retention": value])
      #expect(reply.status == 400, "\(value): \(reply.text)")
      #expect(reply.error?.hasPrefix(field) == true, "\(value): \(reply.error ?? "")")
    }
    #expect(fixture.settings().text.hasSuffix(#""retention":{"mode":"ring"}}"#))
  }
}
