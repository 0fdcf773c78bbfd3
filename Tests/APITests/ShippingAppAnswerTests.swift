import API
import Foundation
import JSON
import Store
import Testing

/// The shipping app's answers stay byte for byte what they were, whatever the station's owner turned on since
/// (retention `untilPulled`, every SSID, subscriptions, read markers): the app sends none of `want`, the key
/// or the new endpoints, so nothing new may reach it. The answers of a scripted session on a fixed clock are
/// recorded in `Tests/fixtures/shipping-app-answers.txt` (one `name<TAB>body` line each, made from the shapes
/// docs/protocol.md's "Must" parts give); any change to them fails here.
@Suite struct ShippingAppAnswerTests {
  static let fixturePath =
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("fixtures/shipping-app-answers.txt").path

  /// The app's calls, as HTCommander makes them: register with history on launch, sync, heartbeat.
  static func session() throws -> [(String, String)] {
    let api = try APIFixture()
    var answers: [(String, String)] = []
    func record(_ name: String, _ path: String, _ body: [String: Any]) {
      let key = api.stationKey
      api.stationKey = nil
      answers.append((name, api.post(path, body).text))
      api.stationKey = key
    }
    record("first register", "/v1/register", registerBody())
    api.claim(APIFixture.settingsIdentity)
    let settings = api.settings([
      "retention": ["mode": "untilPulled", "max": 500], "ssids": "all", "ackSsids": [9],
      "subscriptions": [["kind": "bulletin", "match": "BLN*"]],
    ])
    precondition(settings.status == 200, settings.text)
    try api.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "Hello", msgno: "1")
    try api.deliver(to: "N0CALL-7", from: "OH7LZB-9", text: "Unnumbered \"quoted\" ünï", msgno: nil)
    api.clock.advance(ms: 1)
    _ = try api.database.storeMessages(
      [
        IncomingMessage(
          station: "N0CALL-7", peer: "DL1XYZ", text: "To nine", msgno: "7", dedupKey: "nine",
          dedupWindowMs: 1_000, to: "N0CALL-9"),
        IncomingMessage(
          station: "N0CALL-7", peer: "WX1ABC", text: "Storm", msgno: nil, dedupKey: "bln",
          dedupWindowMs: 1_000,
          to: "BLN1WX", entry: SubscriptionEntry(kind: .bulletin, subscription: "s1")),
      ], now: api.clock.now)
    try api.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "Third", msgno: "2")
    _ = api.post("/v1/read", APIFixture.settingsIdentity.merging(["peer": "KJ7ABC", "upTo": 1]) { $1 })
    api.clock.advance(ms: 10)
    record("launch register", "/v1/register", registerBody())
    record("sync since 0", "/v1/sync", APIFixture.settingsIdentity.merging(["since": 0]) { $1 })
    record(
      "sync since the second", "/v1/sync",
      APIFixture.settingsIdentity.merging(["since": 1_800_000_000_002]) { $1 })
    record(
      "heartbeat", "/v1/heartbeat",
      [
        "callsign": "N0CALL", "ssid": 7, "platform": "android", "pushToken": "fcm-token:APA91b-test",
        "auth": "13023",
      ])
    record("register no history", "/v1/register", registerBody(["wantHistory": false]))
    return answers
  }

  @Test func theAppsRegisterSyncAndHeartbeatAnswersAreTheRecordedBytes() throws {
    let recorded = try String(contentsOfFile: Self.fixturePath, encoding: .utf8)
      .split(separator: "\n").filter { !$0.hasPrefix("#") }
      .map { line -> (String, String) in
        let parts = line.split(separator: "\t", maxSplits: 1)
        return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
      }
    let answers = try Self.session()
    #expect(answers.map(\.0) == recorded.map(\.0))
    for ((name, answer), (_, expected)) in zip(answers, recorded) {
      #expect(answer == expected, "\(name)")
    }
  }
}
