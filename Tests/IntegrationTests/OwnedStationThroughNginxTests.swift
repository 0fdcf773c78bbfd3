import Foundation
import JSON
import TestSupport
import Testing

/// Owned stations through real nginx and the real responder (docs/protocol.md "Owned stations"): the claim and the
/// key travel through nginx (the `Authorization` header and the `stationKey` field), and keyless long polls of
/// a claimed station, however many, never answer the owner's held one early.
@Suite(.serialized) struct OwnedStationThroughNginxTests {
  typealias Polls = LongPollThroughNginxTests

  /// Claims `station` (`CALL-SSID`) through nginx and returns its key.
  static func claim(_ stack: TestStack, _ station: String) throws -> String {
    let parts = station.split(separator: "-")
    let body = #"{"callsign":"\#(parts[0])","ssid":\#(parts[1]),"auth":"\#(aprsPasscode(String(parts[0])))"}"#
    let answer = try stack.post("/v1/claim", json: body)
    try #require(answer.status == 200, "claim: \(answer.status) \(answer.text)")
    return try #require(answer.jsonObject?.string("stationKey"))
  }

  /// Thirty keyless long polls of a claimed station after the owner's: the station's cap (8) churns only the
  /// keyless ones; the owner's stays held and is woken by the station's message.
  @Test func thirtyKeylessLongPollsNeverAnswerTheOwnersEarly() throws {
    let stack = try TestStack.real(config: "")
    defer { stack.stop() }
    let database = SQLiteFile(path: stack.databasePath)
    try database.register(["OWNED-5"])
    let key = try Self.claim(stack, "OWNED-5")

    let owner = HeldHTTPRequests(port: stack.port)
    var body = Polls.syncBody("OWNED-5", wait: 60)
    body.removeLast()
    let poll = try owner.send("/v1/sync", json: body + #","stationKey":"\#(key)"}"#)
    #expect(waitUntil(timeout: 10) { Polls.parked(stack) == 1 }, "parked: \(Polls.parked(stack) ?? -1)")

    let strangers = HeldHTTPRequests(port: stack.port)
    for _ in 0..<30 { _ = try strangers.send("/v1/sync", json: Polls.syncBody("OWNED-5", wait: 60)) }
    #expect(
      strangers.collect(timeoutMs: 15_000) { strangers.answers.count == 22 },
      "keyless answered: \(strangers.answers.count)")
    #expect(waitUntil(timeout: 10) { Polls.parked(stack) == 9 }, "parked: \(Polls.parked(stack) ?? -1)")
    owner.collect(timeoutMs: 300) { false }
    #expect(owner.answers.isEmpty, "the owner's poll was answered: \(owner.answers[poll]?.text ?? "")")

    try LongPollCapsThroughNginxTests.store(database, for: "OWNED-5", text: "for the owner")
    #expect(owner.collect(timeoutMs: 10_000) { owner.answers[poll] != nil })
    let answer = try #require(owner.answers[poll])
    guard answer.status == 200, case .object(let object)? = try? JSONParser.parse(answer.body),
      case .array(let messages)? = object["messages"], messages.count == 1
    else {
      Issue.record("\(answer.status) \(answer.text)")
      return
    }
    #expect(try Self.claimState(stack, key: key) == 200)
  }

  /// Every guarded call without the key through nginx is a 403 that changes nothing; the key in the
  /// `Authorization` header (which nginx passes on) opens them; a wrong one is a 401.
  @Test func guardedCallsThroughNginxNeedTheKeyInTheHeader() throws {
    let stack = try TestStack.real(config: "")
    defer { stack.stop() }
    try SQLiteFile(path: stack.databasePath).register(["OWNED-6"])
    let key = try Self.claim(stack, "OWNED-6")
    let identity = #""callsign":"OWNED","ssid":6,"auth":"\#(aprsPasscode("OWNED"))""#
    let again = try stack.post("/v1/claim", json: "{\(identity)}")
    #expect(again.status == 409 && again.jsonObject?.string("error") != nil, "\(again.text)")
    for path in ["/v1/settings", "/v1/unregister"] {
      let refused = try stack.post(path, json: #"{\#(identity),"mutedUntil":99}"#)
      #expect(refused.status == 403 && refused.jsonObject?.string("error") != nil, "\(path): \(refused.text)")
    }
    let wrong = try stack.post(
      "/v1/settings", json: "{\(identity)}",
      headers: ["Authorization: Bearer " + String(repeating: "x", count: 43)])
    #expect(wrong.status == 401 && wrong.jsonObject?.string("error") != nil, "\(wrong.text)")
    let settings = try stack.post(
      "/v1/settings", json: "{\(identity)}", headers: ["Authorization: Bearer \(key)"])
    #expect(settings.status == 200 && settings.jsonObject?.int("mutedUntil") == 0, "\(settings.text)")
  }

  /// The status of a settings read with `key` for OWNED-5.
  static func claimState(_ stack: TestStack, key: String) throws -> Int {
    try stack.post(
      "/v1/settings", json: #"{"callsign":"OWNED","ssid":5,"auth":"\#(aprsPasscode("OWNED"))"}"#,
      headers: ["Authorization: Bearer \(key)"]
    ).status
  }
}
