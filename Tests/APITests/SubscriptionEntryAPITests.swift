import API
import Foundation
import JSON
import Store
import Testing

/// Subscription entries in answers: only a sync, long poll or register that asked with
/// `want:["subscriptions"]` gets them, each with its `type`, `subscription`, `to` (the addressee) and for a watch
/// its `event` and position; every other answer is exactly as before.
@Suite struct SubscriptionEntryAPITests {
  nonisolated(unsafe) static let identity = APIFixture.settingsIdentity

  private func store(_ fixture: APIFixture, _ message: IncomingMessage) throws {
    fixture.clock.advance(ms: 1)
    _ = try fixture.database.storeMessages([message], now: fixture.clock.now)
  }

  @Test func entriesReachOnlyRequestsThatAskedAndCarryTheirFields() throws {
    let fixture = try APIFixture.withClaimedStation()
    let reply = fixture.settings([
      "subscriptions": [
        ["kind": "bulletin", "match": "BLN*"], ["kind": "watch", "call": "K1ABC", "heardAfter": 600],
      ]
    ])
    let ids = try #require(
      (try? JSONSerialization.jsonObject(with: Data(reply.text.utf8)) as? [String: Any])?["subscriptions"]
        as? [[String: Any]]
    ).compactMap { $0["id"] as? String }
    #expect(ids.count == 2)
    try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "to me", msgno: "1")
    try store(
      fixture,
      IncomingMessage(
        station: "N0CALL-7", peer: "WX1ABC", text: "Storm tonight", msgno: nil, dedupKey: "b1",
        dedupWindowMs: 60_000, to: "BLN1WX", entry: SubscriptionEntry(kind: .bulletin, subscription: ids[0])))
    try store(
      fixture,
      IncomingMessage(
        station: "N0CALL-7", peer: "K1ABC", text: "heard after 2 h", msgno: nil, dedupKey: "w1",
        dedupWindowMs: 60_000,
        entry: SubscriptionEntry(
          kind: .watch, subscription: ids[1], event: .heard, latitude: 49.058333, longitude: -72.029167)))
    let sync = Self.identity.merging(["since": 0]) { $1 }
    let old = fixture.post("/v1/sync", sync)
    #expect(old.messages.map { $0["text"]?.stringValue } == ["to me"])
    let ssids = fixture.post("/v1/sync", sync.merging(["want": ["ssids"]]) { $1 })
    #expect(ssids.messages.count == 1, "other SSIDs' opt-in does not show subscription entries")
    let opted = fixture.post("/v1/sync", sync.merging(["want": ["subscriptions"]]) { $1 })
    #expect(opted.messages.map { $0["type"]?.stringValue } == ["message", "bulletin", "watch"])
    #expect(
      opted.text.contains(
        #"{"direction":"received","type":"bulletin","peer":"WX1ABC","text":"Storm tonight","timestamp":"#))
    #expect(
      opted.text.contains(#","seqId":null,"to":"BLN1WX","subscription":"\#(ids[0])"}"#), "\(opted.text)")
    #expect(
      opted.text.contains(
        #","seqId":null,"subscription":"\#(ids[1])","event":"heard","latitude":49.058333,"longitude":-72.029167}"#
      ),
      "\(opted.text)")
    let history = fixture.post("/v1/register", registerBody(["want": ["subscriptions"]]))
    #expect(history.messages.count == 3)
    #expect(fixture.post("/v1/register", registerBody()).messages.count == 1)
    // Removing the last bulletin subscription removes its entries; the watch's stay.
    _ = fixture.settings([
      "subscriptions": [["id": ids[1], "kind": "watch", "call": "K1ABC", "heardAfter": 600]]
    ])
    let after = fixture.post("/v1/sync", sync.merging(["want": ["subscriptions"]]) { $1 })
    #expect(after.messages.map { $0["type"]?.stringValue } == ["message", "watch"])
  }
}
