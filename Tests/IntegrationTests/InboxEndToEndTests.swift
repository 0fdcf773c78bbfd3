import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The inbox end to end, through nginx, the responder, the real `aprs-listener`, the APRS-IS fake and the push
/// fake: `untilPulled` keeps 120 messages across a listener restart until the owner's phone paged through them;
/// the ring says what it dropped and the real push counts it; a marker set on one device answers another's held
/// long poll; an export through nginx imported into a fresh database reproduces the inbox.
@Suite(.serialized) struct InboxEndToEndTests {
  static let ownerToken = "inbox-fcm:APA91bOwner-0123456789"

  /// N0CALL-7 with its passcode and the owner's key (the body field), then `extra` members.
  static func identity(_ rig: SettingsRig, _ extra: String = "") -> String {
    #"{"callsign":"N0CALL","ssid":7,"auth":"13023","stationKey":"\#(rig.stationKey)""#
      + (extra.isEmpty ? "" : "," + extra) + "}"
  }

  /// The owner's phone registers with the key: a keyed device, which has pulled nothing yet.
  static func registerOwnersPhone(_ rig: SettingsRig) throws {
    let registered = try rig.stack.post(
      "/v1/register",
      json: identity(
        rig, #""platform":"android","pushToken":"\#(ownerToken)","wantHistory":false,"since":0"#))
    #expect(registered.status == 200, "\(registered.text)")
  }

  static func texts(_ answer: JSONObject?) -> [String] {
    (answer?.objects("messages") ?? []).compactMap { $0.string("text") }
  }

  /// The `count` of the newest push the fake got for `token` (FCM data values are strings).
  static func lastCount(_ rig: SettingsRig, token: String) throws -> Int? {
    try rig.push.endToEndRequests("fcm")
      .filter { endToEndObject($0, "body", "message")?.string("token") == token }
      .last.flatMap { endToEndObject($0, "body", "message", "data")?.string("count") }.flatMap { Int($0) }
  }

  static func inject(_ rig: SettingsRig, _ range: Range<Int>) throws {
    for start in stride(from: range.lowerBound, to: range.upperBound, by: 20) {
      let lines = (start..<min(start + 20, range.upperBound)).map {
        messageLine(from: "KJ7ABC", to: "N0CALL-7", text: "m\($0)", msgno: String($0 + 1))
      }
      #expect(try rig.aprsis.inject(lines) == lines.count)
    }
  }

  @Test func untilPulledKeepsAHundredAndTwentyAcrossAListenerRestartAndTheOwnerPagesThroughThem() throws {
    // The rig's phone is the app's, from before the claim: only the owner's keyed phone holds the inbox.
    let rig = try SettingsRig(phoneBeforeTheClaim: true)
    defer { rig.stop() }
    _ = try rig.settings(#""retention":{"mode":"untilPulled","max":500}"#)
    try Self.registerOwnersPhone(rig)

    try Self.inject(rig, 0..<60)
    #expect(
      try rig.database.waitUntil(timeout: 20) {
        try $0.int("SELECT count(*) FROM messages WHERE station = 'N0CALL-7'") == 60
      }, "\(rig.listener.log)")
    #expect(rig.listener.terminate() == 0)
    let second = try ListenerProcess(
      database: rig.stack.databasePath, config: SettingsRig.config(rig.aprsis, rig.push), label: "second")
    defer { second.stop() }
    #expect(try rig.aprsis.wait("login", count: 2, timeout: 20), "\(second.log)")
    try Self.inject(rig, 60..<120)
    #expect(
      try rig.database.waitUntil(timeout: 20) {
        try $0.int("SELECT count(*) FROM messages WHERE station = 'N0CALL-7'") == 120
      }, "\(second.log)")
    // The newest push to the owner's phone counts everything waiting.
    #expect(
      waitUntil(timeout: 15, interval: 0.1) { (try? Self.lastCount(rig, token: Self.ownerToken)) == 120 },
      "last count: \(String(describing: try? Self.lastCount(rig, token: Self.ownerToken)))\n\(second.log)")

    // Register with history pages through all 120, oldest first, in two answers.
    let first = try rig.stack.post(
      "/v1/register",
      json: Self.identity(
        rig,
        #""platform":"android","pushToken":"\#(Self.ownerToken)","wantHistory":true,"since":0,"want":["inbox"]"#
      ))
    #expect(Self.texts(first.jsonObject) == (0..<100).map { "m\($0)" }, "\(first.text.prefix(300))")
    #expect(
      first.jsonObject?["more"] == .bool(true) && first.jsonObject?["dropped"] == .number(.init(literal: "0"))
    )
    let cursor = try #require(first.jsonObject?.int("serverTime"))
    let rest = try rig.stack.post(
      "/v1/sync",
      json: Self.identity(rig, #""since":\#(cursor),"want":["inbox"],"pushToken":"\#(Self.ownerToken)""#))
    #expect(Self.texts(rest.jsonObject) == (100..<120).map { "m\($0)" }, "\(rest.text.prefix(300))")
    #expect(rest.jsonObject?["more"] == .bool(false))

    // Every keyed device pulled them: the next message brings the ring (50) back.
    try Self.inject(rig, 120..<121)
    #expect(
      try rig.database.waitUntil(timeout: 20) {
        try $0.int("SELECT count(*) FROM messages WHERE station = 'N0CALL-7'") == 50
      }, "\(second.log)")
    #expect(second.terminate() == 0)
  }

  @Test func theRingSaysWhatItDroppedThePushCountsItAndAMarkerWakesAnotherDevice() throws {
    let rig = try SettingsRig()
    defer { rig.stop() }
    try Self.registerOwnersPhone(rig)
    try Self.inject(rig, 0..<70)
    #expect(
      try rig.database.waitUntil(timeout: 20) {
        try $0.int("SELECT coalesce(sum(count), 0) FROM drops WHERE station = 'N0CALL-7'") == 20
      }, "\(rig.listener.log)")
    #expect(
      waitUntil(timeout: 15, interval: 0.1) {
        ((try? Self.lastCount(rig, token: Self.ownerToken)) ?? 0) >= 70
      },
      "a push's count is never under what came: \(String(describing: try? Self.lastCount(rig, token: Self.ownerToken)))"
    )
    let metrics = try rig.stack.metrics()
    #expect(metrics.text.contains("\naprs_cloud_messages_dropped_unpulled_total 20\n"), "\(metrics.text)")

    let opted = try rig.stack.post("/v1/sync", json: Self.identity(rig, #""since":0,"want":["inbox"]"#))
    #expect(Self.texts(opted.jsonObject) == (20..<70).map { "m\($0)" })
    #expect(opted.jsonObject?.int("dropped") == 20, "\(opted.text.suffix(200))")
    let serverTime = try #require(opted.jsonObject?.int("serverTime"))
    let newest = try #require(opted.jsonObject?.objects("messages").last?.int("timestamp"))

    // The web page holds a long poll; the phone marks the conversation read: the page hears of it at once.
    let page = HeldHTTPRequests(port: rig.stack.port)
    let held = try page.send(
      "/v1/sync", json: Self.identity(rig, #""since":\#(serverTime),"want":["inbox"],"wait":30"#))
    #expect(
      waitUntil(timeout: 10) {
        (try? rig.stack.metrics().text.contains("\naprs_cloud_http_requests_parked 1\n")) == true
      }, "the long poll is held")
    let marked = HeldHTTPRequests.now()
    let read = try rig.stack.post("/v1/read", json: Self.identity(rig, #""peer":"KJ7ABC","upTo":\#(newest)"#))
    #expect(read.status == 200, "\(read.text)")
    #expect(page.collect(timeoutMs: 5_000) { page.answers[held] != nil })
    let answer = try #require(page.answers[held])
    #expect(
      (answer.answeredAt - marked) / 1000 < 1_000, "answered after \((answer.answeredAt - marked) / 1000) ms")
    #expect(answer.text.contains(#""read":{"KJ7ABC":\#(newest)}"#), "\(answer.text)")
    #expect(rig.listener.terminate() == 0)
  }

  @Test func anExportThroughNginxImportedIntoAFreshDatabaseReproducesTheInbox() throws {
    let rig = try SettingsRig()
    defer { rig.stop() }
    _ = try rig.settings(#""blocked":["KJ7BAD"],"subscriptions":[{"kind":"bulletin","match":"BLN*"}]"#)
    try Self.inject(rig, 0..<5)
    #expect(try rig.aprsis.inject(["WX1ABC>APRS,TCPIP*::BLN1WX   :Storm warning tonight"]) == 1)
    #expect(
      try rig.database.waitUntil(timeout: 20) {
        try $0.int("SELECT count(*) FROM messages WHERE station = 'N0CALL-7'") == 6
      }, "\(rig.listener.log)")
    _ = try rig.stack.post("/v1/read", json: Self.identity(rig, #""peer":"*","upTo":5"#))
    let exported = try rig.stack.post("/v1/export", json: Self.identity(rig))
    #expect(exported.status == 200, "\(exported.text)")
    let directory = try makeTemporaryDirectory("import")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try exported.text.write(toFile: directory + "/n0call-7.json", atomically: true, encoding: .utf8)
    let tool = try TestPaths.executable("aprs-cloud")
    let fresh = directory + "/fresh.sqlite"
    #expect(try runProcess(tool, ["migrate", "--db", fresh]).status == 0)
    let imported = try runProcess(
      tool, ["import", directory + "/n0call-7.json", "--with-claim", "--db", fresh])
    #expect(imported.status == 0, "\(String(decoding: imported.stderr, as: UTF8.self))")
    let again = try runProcess(tool, ["stations", "N0CALL-7", "--export", "-", "--db", fresh])
    let reexported = String(decoding: again.stdout, as: UTF8.self)
    let stripped = { (text: String) in
      text.trimmingCharacters(in: .whitespacesAndNewlines)
        .replacingOccurrences(of: #""exportedAt":[0-9]+"#, with: "", options: .regularExpression)
    }
    #expect(stripped(reexported) == stripped(exported.text))
    #expect(exported.text.contains(#""type":"bulletin""#) && exported.text.contains(#""read":{"*":5}"#))
    #expect(rig.listener.terminate() == 0)
  }
}
