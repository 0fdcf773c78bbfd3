import Foundation
import JSON
import Push
import Store
import Testing

/// Pushes of the all-SSID inbox through the real sender and the fake providers: a device registered with
/// `want:["ssids"]` gets other-SSID entries, its payload naming `to` and counting them; a device without it gets
/// nothing for them and its push stays exactly as before; one token registered for two stations gets each one's
/// push.
@Suite(.serialized) struct AllSSIDPushTests {
  private func register(_ rig: PushRig, _ station: String, token: String, wants: Wants) throws {
    let parts = station.split(separator: "-", maxSplits: 1)
    try rig.database.upsertStation(
      StationUpsert(
        address: station, base: String(parts[0]), ssid: parts.count > 1 ? Int(parts[1]) ?? 0 : 0,
        platform: .android, pushToken: token, ackMessages: false, isRegistration: true, wants: wants),
      now: rig.clock.now())
  }

  private func other(_ station: String, _ text: String, to: String) -> IncomingMessage {
    IncomingMessage(
      station: station, peer: "OH7AA-1", text: text, msgno: "9",
      dedupKey: "\(to)|\(text)|\(UUID().uuidString)",
      dedupWindowMs: 3_600_000, to: to)
  }

  private func data(_ request: JSONObject) throws -> [String: String] {
    let data = try object(request.value(at: ["body", "message", "data"]))
    var result: [String: String] = [:]
    for (key, value) in data.members { if case .string(let text) = value { result[key] = text } }
    return result
  }

  @Test func onlyOptedInDevicesGetOtherSSIDEntriesNamingTo() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    try register(rig, "N0CALL-7", token: "new-app", wants: .ssids)
    try register(rig, "N0CALL-7", token: "old-app", wants: [])
    try rig.start()
    // A burst of one own message and then one for N0CALL-9.
    _ = try rig.database.storeMessages(
      [message("N0CALL-7", "to me", msgno: "1"), other("N0CALL-7", "to nine", to: "N0CALL-9")],
      now: rig.clock.now())
    rig.service?.notify()
    #expect(try rig.fake.wait("fcm", count: 2, status: 200))
    #expect(try rig.eventuallyEmpty())
    let new = try #require(try rig.fake.requests("fcm", token: "new-app").first)
    let old = try #require(try rig.fake.requests("fcm", token: "old-app").first)
    #expect(try data(new)["to"] == "N0CALL-9" && data(new)["fromCall"] == "OH7AA-1")
    #expect(try data(new)["count"] == "2" && data(new)["seqId"] == "9")
    // The old app's push is what it always was: its own message, its own address, its count.
    #expect(try data(old)["to"] == "N0CALL-7" && data(old)["fromCall"] == "KJ7ABC-7")
    #expect(try data(old)["count"] == "1" && data(old)["seqId"] == "1")
    #expect(try data(old).keys.sorted() == ["count", "fromCall", "seqId", "to"])
    #expect(old.string(at: ["body", "message", "notification", "body"]) == "to me")

    // Only an other-SSID entry: the old app gets nothing at all.
    _ = try rig.database.storeMessages(
      [other("N0CALL-7", "nine again", to: "N0CALL-9")], now: rig.clock.now())
    rig.service?.notify()
    #expect(try rig.fake.wait("fcm", count: 3, status: 200))
    #expect(try rig.eventuallyEmpty())
    #expect(try rig.fake.requests("fcm", token: "old-app").count == 1)
    #expect(try rig.fake.requests("fcm", token: "new-app").count == 2)
  }

  @Test func oneTokenRegisteredForTwoStationsGetsEachOnesPush() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    try register(rig, "N0CALL-7", token: "shared", wants: .ssids)
    try register(rig, "KJ7ABC", token: "shared", wants: .ssids)
    #expect(try rig.tokens("N0CALL-7") == ["shared"] && rig.tokens("KJ7ABC") == ["shared"])
    try rig.start()
    try rig.store("N0CALL-7", ["for seven"])
    try rig.store("KJ7ABC", ["for the bare call"], from: "OH7AA-1")
    #expect(try rig.fake.wait("fcm", count: 2, status: 200))
    let tos = try rig.fake.requests("fcm", token: "shared").map { try data($0)["to"] ?? "" }
    #expect(Set(tos) == ["N0CALL-7", "KJ7ABC"])
  }
}
