import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The /v1 API through a real nginx (the project's own config) and the real responder, with curl as the
/// client: what `Tests/APITests/` checks at the handler level, checked again on the wire (issue 3, "Tests").
/// Messages are written by a real `aprs-listener` fed by the APRS-IS fake, as in production.
@Suite(.serialized) struct APIThroughNginxTests {
  static let fcmToken = "fcm-token:APA91b-nginx-test"
  static let apnsToken = String(repeating: "ab", count: 32)

  /// The register body the app sends (N0CALL-`ssid`).
  static func appRegister(
    ssid: Int = 7, since: Int64 = 0, wantHistory: Bool = true, token: String = fcmToken,
    auth: String = #""13023""#,
    avatar: String = #","avatarHash":"""#
  ) -> String {
    #"{"callsign":"n0call","ssid":\#(ssid),"platform":"android","pushToken":"\#(token)","ackMessages":false,"wantHistory":\#(wantHistory),"since":\#(since),"auth":\#(auth)\#(avatar)}"#
  }

  static func syncBody(ssid: Int = 7, since: Int64) -> String {
    #"{"callsign":"N0CALL","ssid":\#(ssid),"since":\#(since),"auth":"13023"}"#
  }

  // MARK: 1. Every endpoint, every Must

  @Test func everyEndpointKeepsTheWireContract() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let database = SQLiteFile(path: stack.databasePath)

    // First run of the app: register with history; nothing stored yet.
    let first = try stack.post("/v1/register", json: Self.appRegister())
    expectAPIAnswer(first, status: 200, isError: false)
    let firstObject = try #require(first.jsonObject, "\(first.text)")
    #expect(firstObject["error"] == nil)
    #expect(nginxAPIMessages(firstObject, raw: first.text).isEmpty)
    #expect(nginxAPIServerTime(firstObject, raw: first.text) >= 0)
    #expect(firstObject["avatarHash"] == .string(""), "avatarHash: \(first.text)")
    #expect(nginxAPIAvatarMap(firstObject).isEmpty)
    #expect(try database.int("SELECT count(*) FROM devices WHERE station = 'N0CALL-7'") == 1)

    // Messages committed by the listener: with and without a message number, a reply-ack, numbers that look
    // like JSON numbers.
    let rig = try NginxAPIListenerRig(stack: stack, station: "N0CALL-7")
    defer { rig.stop() }
    let sent: [(peer: String, text: String, seqId: String?)] = [
      ("KJ7ABC-7", "Hello from the radio", "42"),
      ("W5AGO", "no message number", nil),
      ("OH7AA-1", "a reply-ack", "AB}CD"),
      ("W1AW-15", "leading zeros", "007"),
      ("KJ7ABC-7", "12345", "12345"),
    ]
    try rig.deliver(
      sent.map { messageLine(from: $0.peer, to: "N0CALL-7", text: $0.text, msgno: $0.seqId) },
      database: database, station: "N0CALL-7", expectedTotal: sent.count)

    let sync = try stack.post("/v1/sync", json: Self.syncBody(since: 0))
    expectAPIAnswer(sync, status: 200, isError: false)
    let syncObject = try #require(sync.jsonObject, "\(sync.text)")
    #expect(Set(syncObject.keys) == ["messages", "serverTime", "avatars"], "\(syncObject.keys)")
    let messages = nginxAPIMessages(syncObject, raw: sync.text)
    #expect(messages.map(\.peer) == sent.map(\.peer))
    #expect(messages.map(\.text) == sent.map(\.text))
    #expect(messages.map(\.seqId) == sent.map(\.seqId))
    #expect(messages.allSatisfy { $0.direction == "received" })
    let timestamps = messages.map(\.timestamp)
    #expect(zip(timestamps, timestamps.dropFirst()).allSatisfy { $0 < $1 }, "timestamps \(timestamps)")
    let serverTime = nginxAPIServerTime(syncObject, raw: sync.text)
    #expect(serverTime == timestamps.last, "serverTime \(serverTime) is the newest timestamp")
    #expect(nginxAPIAvatarMap(syncObject).isEmpty)

    // The same messages with the same timestamps on every sync (the app dedups on them).
    let again = try stack.post("/v1/sync", json: Self.syncBody(since: 0))
    expectAPIAnswer(again, status: 200, isError: false)
    #expect(nginxAPIMessages(try #require(again.jsonObject), raw: again.text) == messages)

    // `since` picks the newer ones only; the cursor never moves back.
    let newer = try stack.post("/v1/sync", json: Self.syncBody(since: timestamps[2]))
    let newerObject = try #require(newer.jsonObject, "\(newer.text)")
    #expect(nginxAPIMessages(newerObject, raw: newer.text) == Array(messages[3...]))
    #expect(nginxAPIServerTime(newerObject, raw: newer.text) == serverTime)
    let none = try stack.post("/v1/sync", json: Self.syncBody(since: serverTime))
    let noneObject = try #require(none.jsonObject, "\(none.text)")
    #expect(nginxAPIMessages(noneObject, raw: none.text).isEmpty)
    #expect(nginxAPIServerTime(noneObject, raw: none.text) == serverTime)
    let ahead = try stack.post("/v1/sync", json: Self.syncBody(since: serverTime + 5000))
    let aheadObject = try #require(ahead.jsonObject, "\(ahead.text)")
    #expect(nginxAPIServerTime(aheadObject, raw: ahead.text) == serverTime + 5000, "never the wall clock")

    // App launch: register with history since its stored cursor (auth as a JSON number, as curl users send).
    let launch = try stack.post(
      "/v1/register", json: Self.appRegister(since: timestamps[1], auth: "13023"))
    expectAPIAnswer(launch, status: 200, isError: false)
    let launchObject = try #require(launch.jsonObject, "\(launch.text)")
    #expect(nginxAPIMessages(launchObject, raw: launch.text) == Array(messages[2...]))
    #expect(nginxAPIServerTime(launchObject, raw: launch.text) == serverTime)
    #expect(launchObject["avatarHash"] == .string(""))
    #expect(nginxAPIAvatarMap(launchObject).isEmpty)
    // Without history: no messages key, and `serverTime` is the request's `since` unchanged (the app
    // stores it as its cursor: an advanced one would skip messages it never saw).
    let noHistory = try stack.post(
      "/v1/register", json: Self.appRegister(since: timestamps[1], wantHistory: false))
    expectAPIAnswer(noHistory, status: 200, isError: false)
    let noHistoryObject = try #require(noHistory.jsonObject, "\(noHistory.text)")
    #expect(noHistoryObject["messages"] == nil, "\(noHistory.text)")
    #expect(nginxAPIServerTime(noHistoryObject, raw: noHistory.text) == timestamps[1])
    #expect(noHistoryObject["avatarHash"] == .string(""))

    // Heartbeat: only avatarHash, a string.
    let heartbeat = try stack.post(
      "/v1/heartbeat",
      json:
        #"{"callsign":"n0call","ssid":7,"platform":"android","pushToken":"\#(Self.fcmToken)","auth":"13023","avatarHash":""}"#
    )
    expectAPIAnswer(heartbeat, status: 200, isError: false)
    #expect(heartbeat.jsonObject?.keys == ["avatarHash"], "\(heartbeat.text)")
    #expect(heartbeat.jsonObject?["avatarHash"] == .string(""))
    // A heartbeat for a station the server does not know re-creates it (the app never re-registers).
    #expect(try database.int("SELECT count(*) FROM stations WHERE address = 'N0CALL-9'") == 0)
    let recreate = try stack.post(
      "/v1/heartbeat",
      json:
        #"{"callsign":"N0CALL","ssid":9,"platform":"ios","pushToken":"\#(Self.apnsToken)","auth":"13023"}"#)
    expectAPIAnswer(recreate, status: 200, isError: false)
    #expect(recreate.jsonObject?["avatarHash"] == .string(""), "\(recreate.text)")
    #expect(try database.int("SELECT count(*) FROM stations WHERE address = 'N0CALL-9'") == 1)
    #expect(
      try database.int("SELECT count(*) FROM devices WHERE station = 'N0CALL-9' AND platform = 'ios'") == 1)

    // Avatars: nobody has one yet.
    let noAvatars = try stack.post(
      "/v1/avatars", json: #"{"callsign":"N0CALL","ssid":7,"auth":"13023","stations":[]}"#)
    expectAPIAnswer(noAvatars, status: 200, isError: false)
    #expect(noAvatars.text == #"{"avatars":{}}"#)
    let someAvatars = try stack.post(
      "/v1/avatars", json: #"{"callsign":"N0CALL","ssid":7,"auth":"13023","stations":["KJ7ABC-7","w5ago"]}"#)
    expectAPIAnswer(someAvatars, status: 200, isError: false)
    #expect(someAvatars.text == #"{"avatars":{}}"#)

    // Unregister one device (extension): the station stays. Then the whole station: `{}`, and its
    // messages are gone; a sync for it is an empty list, not an error.
    let dropDevice = try stack.post(
      "/v1/unregister",
      json: #"{"callsign":"N0CALL","ssid":9,"auth":"13023","pushToken":"\#(Self.apnsToken)"}"#)
    expectAPIAnswer(dropDevice, status: 200, isError: false)
    #expect(dropDevice.text == "{}")
    #expect(try database.int("SELECT count(*) FROM stations WHERE address = 'N0CALL-9'") == 1)
    #expect(try database.int("SELECT count(*) FROM devices WHERE station = 'N0CALL-9'") == 0)
    let unregister = try stack.post("/v1/unregister", json: #"{"callsign":"N0CALL","ssid":7,"auth":"13023"}"#)
    expectAPIAnswer(unregister, status: 200, isError: false)
    #expect(unregister.text == "{}")
    #expect(try database.int("SELECT count(*) FROM stations WHERE address = 'N0CALL-7'") == 0)
    #expect(try database.int("SELECT count(*) FROM messages WHERE station = 'N0CALL-7'") == 0)
    let gone = try stack.post("/v1/sync", json: Self.syncBody(since: 0))
    expectAPIAnswer(gone, status: 200, isError: false)
    let goneObject = try #require(gone.jsonObject, "\(gone.text)")
    #expect(nginxAPIMessages(goneObject, raw: gone.text).isEmpty)
    #expect(nginxAPIServerTime(goneObject, raw: gone.text) == serverTime)

    // Failures on every endpoint: JSON `error`, the fitting status, the field named.
    let identity = #""callsign":"N0CALL","ssid":7"#
    let endpoints: [(path: String, extra: String)] = [
      (
        "/v1/register", #","platform":"android","pushToken":"\#(Self.fcmToken)","wantHistory":true,"since":0"#
      ),
      ("/v1/heartbeat", #","platform":"android","pushToken":"\#(Self.fcmToken)""#),
      ("/v1/sync", #","since":0"#),
      ("/v1/unregister", ""),
      ("/v1/avatars", #","stations":[]"#),
    ]
    for endpoint in endpoints {
      let wrong = try stack.post(endpoint.path, json: "{\(identity),\"auth\":\"13024\"\(endpoint.extra)}")
      expectAPIAnswer(wrong, status: 401)
      #expect(wrong.errorMessage?.contains("passcode") == true, "\(endpoint.path): \(wrong.text)")
      let noCallsign = try stack.post(endpoint.path, json: "{\"auth\":\"13023\"\(endpoint.extra)}")
      expectAPIAnswer(noCallsign, status: 400)
      #expect(noCallsign.errorMessage?.contains("callsign") == true, "\(endpoint.path): \(noCallsign.text)")
      let badSSID = try stack.post(
        endpoint.path, json: "{\"callsign\":\"N0CALL\",\"ssid\":16,\"auth\":\"13023\"}")
      expectAPIAnswer(badSSID, status: 400)
      #expect(badSSID.errorMessage?.contains("ssid") == true, "\(endpoint.path): \(badSSID.text)")
      let broken = try stack.post(endpoint.path, json: #"{"callsign":"#)
      expectAPIAnswer(broken, status: 400)
      #expect(broken.errorMessage?.contains("JSON") == true, "\(endpoint.path): \(broken.text)")
    }
    // Nothing of that was written: N0CALL-7 is still unregistered.
    #expect(try database.int("SELECT count(*) FROM stations WHERE address = 'N0CALL-7'") == 0)

    let health = try stack.get("/health")
    expectAPIAnswer(health, status: 200, isError: false)

    // The responder down: nginx's own 502, as JSON, on every endpoint and /health.
    rig.stop()
    stack.stopResponder()
    for endpoint in endpoints {
      let down = try stack.post(endpoint.path, json: "{\(identity),\"auth\":\"13023\"\(endpoint.extra)}")
      expectAPIAnswer(down, status: 502)
    }
    expectAPIAnswer(try stack.get("/health"), status: 502)
  }

  // MARK: 2. Avatars

  @Test func avatarsUploadUnchangedClearRefusalsSyncMapAndLookup() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let database = SQLiteFile(path: stack.databasePath)
    let avatarRow = {
      try database.run(
        "SELECT quote(avatar_icon), quote(avatar_image), quote(avatar_hash), quote(avatar_updated_at), "
          + "quote(avatar_cleared_at) FROM stations WHERE address = 'N0CALL-7';")
    }
    func heartbeat(_ avatarFields: String, callsign: String = "N0CALL", ssid: Int = 7, auth: Int = 13023)
      throws
      -> HTTPResponse
    {
      try stack.post(
        "/v1/heartbeat",
        json:
          #"{"callsign":"\#(callsign)","ssid":\#(ssid),"platform":"android","pushToken":"\#(Self.fcmToken)-\#(callsign)","auth":"\#(auth)"\#(avatarFields)}"#
      )
    }

    // Other stations' avatars: W5AGO an icon, TESTCALL cleared, SUCHCALL an image of exactly 24000 characters.
    let dish = try heartbeat(
      #","avatarHash":"icon:dish","avatarUpdate":true,"avatarIcon":"dish","avatarImage":null"#,
      callsign: "W5AGO", ssid: 0, auth: 10896)
    expectAPIAnswer(dish, status: 200, isError: false)
    #expect(dish.jsonObject?["avatarHash"] == .string("icon:dish"), "\(dish.text)")
    let cleared = try heartbeat(
      #","avatarHash":"","avatarUpdate":true,"avatarIcon":null,"avatarImage":null"#, callsign: "TESTCALL",
      ssid: 0, auth: 31742)
    expectAPIAnswer(cleared, status: 200, isError: false)
    #expect(cleared.jsonObject?["avatarHash"] == .string(""), "\(cleared.text)")
    let largest = nginxAPIPNGShaped(padding: 17_992)
    #expect(largest.count == 24_000)
    let largestHash = try nginxAPISHA256("\n" + largest)
    let maximal = try heartbeat(
      #","avatarHash":"\#(largestHash)","avatarUpdate":true,"avatarIcon":null,"avatarImage":"\#(largest)""#,
      callsign: "SUCHCALL", ssid: 0, auth: 27890)
    expectAPIAnswer(maximal, status: 200, isError: false)
    #expect(maximal.jsonObject?["avatarHash"] == .string(largestHash), "\(maximal.text)")
    #expect(maximal.jsonObject?["avatarError"] == nil, "\(maximal.text)")

    // N0CALL-7 registers with no avatar, then uploads an icon.
    let register = try stack.post("/v1/register", json: Self.appRegister())
    expectAPIAnswer(register, status: 200, isError: false)
    #expect(register.jsonObject?["avatarHash"] == .string(""))
    let icon = try heartbeat(
      #","avatarHash":"icon:radio","avatarUpdate":true,"avatarIcon":"radio","avatarImage":null"#)
    expectAPIAnswer(icon, status: 200, isError: false)
    #expect(icon.jsonObject?["avatarHash"] == .string("icon:radio"), "\(icon.text)")
    let iconRow = try avatarRow()
    #expect(iconRow.hasPrefix("'radio'|NULL|'icon:radio'|"), "\(iconRow)")

    // The app's next heartbeat with the unchanged hash carries no image and changes nothing; an old app's
    // (no avatar fields at all) neither.
    let unchanged = try heartbeat(#","avatarHash":"icon:radio""#)
    expectAPIAnswer(unchanged, status: 200, isError: false)
    #expect(unchanged.jsonObject?.keys == ["avatarHash"], "\(unchanged.text)")
    #expect(unchanged.jsonObject?["avatarHash"] == .string("icon:radio"))
    let oldApp = try heartbeat("")
    expectAPIAnswer(oldApp, status: 200, isError: false)
    #expect(oldApp.jsonObject?["avatarHash"] == .string("icon:radio"), "\(oldApp.text)")
    #expect(try avatarRow() == iconRow)

    // A real PNG with the icon, through register: hash = sha256("radio\n" + image).
    let pngHash = try nginxAPISHA256("radio\n" + nginxAPITinyPNG)
    let png = try stack.post(
      "/v1/register",
      json: Self.appRegister(
        avatar:
          #","avatarHash":"\#(pngHash)","avatarUpdate":true,"avatarIcon":"radio","avatarImage":"\#(nginxAPITinyPNG)""#
      ))
    expectAPIAnswer(png, status: 200, isError: false)
    #expect(png.jsonObject?["avatarHash"] == .string(pngHash), "\(png.text)")
    #expect(
      try database.run("SELECT avatar_image FROM stations WHERE address = 'N0CALL-7';") == nginxAPITinyPNG
        + "\n")
    let pngRow = try avatarRow()

    // Too long (PNG-shaped, 24004 characters), in a register that also moves the device to a new token:
    // the avatar is refused, the old hash echoed, the rest of the request done.
    let tooLong = nginxAPIPNGShaped(padding: 17_995)
    #expect(tooLong.count > 24_000)
    let newToken = Self.fcmToken + "-moved"
    let refused = try stack.post(
      "/v1/register",
      json: Self.appRegister(
        token: newToken,
        avatar: #","avatarHash":"x","avatarUpdate":true,"avatarIcon":"radio","avatarImage":"\#(tooLong)""#))
    expectAPIAnswer(refused, status: 200, isError: false)
    let refusedObject = try #require(refused.jsonObject, "\(refused.text)")
    #expect(refusedObject["avatarHash"] == .string(pngHash), "old hash echoed: \(refused.text.prefix(300))")
    #expect(
      nginxAPIString(refusedObject["avatarError"])?.contains("24000") == true, "\(refused.text.prefix(300))")
    #expect(nginxAPIServerTime(refusedObject, raw: refused.text) >= 0)
    #expect(nginxAPIMessages(refusedObject, raw: refused.text).isEmpty)
    #expect(
      try database.int("SELECT count(*) FROM devices WHERE station = 'N0CALL-7' AND token = '\(newToken)'")
        == 1)
    #expect(try avatarRow() == pngRow)

    // Not a PNG (a GIF), and not base64 at all, through heartbeat: refused, old hash echoed, 200.
    for (image, reason) in [("R0lGODlhAQABAAAAACw=", "not a PNG"), ("iVBORw0K!!!", "base64")] {
      let bad = try heartbeat(
        #","avatarHash":"x","avatarUpdate":true,"avatarIcon":null,"avatarImage":"\#(image)""#)
      expectAPIAnswer(bad, status: 200, isError: false)
      #expect(bad.jsonObject?["avatarHash"] == .string(pngHash), "\(bad.text)")
      #expect(nginxAPIString(bad.jsonObject?["avatarError"])?.contains(reason) == true, "\(bad.text)")
      #expect(try avatarRow() == pngRow)
    }

    // Messages from stations with and without avatars: `avatars` in sync and in register with history maps
    // each distinct peer that has one; the cleared one and the one without are left out.
    let rig = try NginxAPIListenerRig(stack: stack, station: "N0CALL-7")
    defer { rig.stop() }
    let peers = ["W5AGO", "TESTCALL", "KJ7ABC-7", "SUCHCALL", "W5AGO"]
    try rig.deliver(
      peers.enumerated().map { messageLine(from: $1, to: "N0CALL-7", text: "hi \($0)", msgno: "\($0 + 1)") },
      database: database, station: "N0CALL-7", expectedTotal: peers.count)
    let expectedMap = ["W5AGO": "icon:dish", "SUCHCALL": largestHash]
    let sync = try stack.post("/v1/sync", json: Self.syncBody(since: 0))
    expectAPIAnswer(sync, status: 200, isError: false)
    let syncObject = try #require(sync.jsonObject, "\(sync.text)")
    #expect(nginxAPIMessages(syncObject, raw: sync.text).map(\.peer) == peers)
    #expect(nginxAPIAvatarMap(syncObject) == expectedMap, "\(sync.text)")
    let history = try stack.post(
      "/v1/register", json: Self.appRegister(token: newToken, avatar: #","avatarHash":"\#(pngHash)""#))
    expectAPIAnswer(history, status: 200, isError: false)
    let historyObject = try #require(history.jsonObject, "\(history.text)")
    #expect(nginxAPIAvatarMap(historyObject) == expectedMap, "\(history.text)")
    #expect(historyObject["avatarHash"] == .string(pngHash))
    // A sync whose messages come from one peer only maps that peer only.
    let last = nginxAPIMessages(syncObject, raw: sync.text)
    let tail = try stack.post("/v1/sync", json: Self.syncBody(since: last[last.count - 2].timestamp))
    #expect(nginxAPIAvatarMap(try #require(tail.jsonObject)) == ["W5AGO": "icon:dish"], "\(tail.text)")

    // Clear: both null → hash "", nothing stored but the clear time.
    let clear = try heartbeat(#","avatarHash":"","avatarUpdate":true,"avatarIcon":null,"avatarImage":null"#)
    expectAPIAnswer(clear, status: 200, isError: false)
    #expect(clear.jsonObject?["avatarHash"] == .string(""), "\(clear.text)")
    let clearedRow = try avatarRow().trimmingCharacters(in: .newlines).split(separator: "|").map(String.init)
    #expect(Array(clearedRow.prefix(3)) == ["NULL", "NULL", "NULL"], "\(clearedRow)")
    #expect(clearedRow.count == 5 && clearedRow[4] != "NULL", "the clear time is kept: \(clearedRow)")
    let afterClear = try heartbeat(#","avatarHash":"""#)
    #expect(afterClear.jsonObject?["avatarHash"] == .string(""), "\(afterClear.text)")

    // /v1/avatars with 0, 50 and 51 stations.
    func lookup(_ stations: [String]) throws -> HTTPResponse {
      let list = stations.map { "\"\($0)\"" }.joined(separator: ",")
      return try stack.post(
        "/v1/avatars", json: #"{"callsign":"N0CALL","ssid":7,"auth":"13023","stations":[\#(list)]}"#)
    }
    let zero = try lookup([])
    expectAPIAnswer(zero, status: 200, isError: false)
    #expect(zero.text == #"{"avatars":{}}"#)
    let fifty = ["w5ago", "TESTCALL", "N0CALL-7", "SUCHCALL", "KJ7ABC-7"] + (1...45).map { "K\($0)ABC" }
    #expect(fifty.count == 50)
    let found = try lookup(fifty)
    expectAPIAnswer(found, status: 200, isError: false)
    let foundObject = try #require(found.jsonObject, "\(found.text)")
    guard case .object(let avatars)? = foundObject["avatars"] else {
      Issue.record("avatars is not an object: \(found.text.prefix(300))")
      return
    }
    #expect(avatars.keys.sorted() == ["SUCHCALL", "W5AGO"], "\(avatars.keys)")
    #expect(
      found.text.contains(#""W5AGO":{"icon":"dish","image":null,"hash":"icon:dish"}"#),
      "\(found.text.prefix(400))")
    for (station, value) in avatars.members {
      guard case .object(let entry) = value else {
        Issue.record("avatars[\(station)] is not an object")
        continue
      }
      #expect(Set(entry.keys) == ["icon", "image", "hash"], "\(station): \(entry.keys)")
      for (key, field) in entry.members {
        switch field {
        case .string, .null: break
        default: Issue.record("avatars[\(station)].\(key) is \(field.typeName)")
        }
      }
    }
    if case .object(let such)? = avatars["SUCHCALL"] {
      #expect(such["image"] == .string(largest))
      #expect(such["icon"] == .null)
      #expect(such["hash"] == .string(largestHash))
    }
    let fiftyOne = try lookup(fifty + ["K46ABC"])
    expectAPIAnswer(fiftyOne, status: 400)
    #expect(fiftyOne.errorMessage?.contains("at most 50") == true, "\(fiftyOne.text)")
  }

  // MARK: 3. The cursor with a writer committing during syncs

  @Test func cursorNeverSkipsWhileTheListenerCommitsDuringSyncs() throws {
    // A ring far larger than the run, for the responder and the listener: roll-off cannot explain a gap.
    let configDirectory = try makeTemporaryDirectory("ringcfg")
    defer { try? FileManager.default.removeItem(atPath: configDirectory) }
    try "[server]\nringSize = 1000\n".write(
      toFile: configDirectory + "/responder.ini", atomically: true, encoding: .utf8)
    let stack = try TestStack(.real(arguments: ["--config", configDirectory + "/responder.ini"]))
    defer { stack.stop() }
    let database = SQLiteFile(path: stack.databasePath)
    // A sync-only station (a desktop): no push token.
    let register = try stack.post(
      "/v1/register",
      json:
        #"{"callsign":"N0CALL","ssid":7,"auth":"13023","ackMessages":false,"wantHistory":false,"since":0}"#)
    expectAPIAnswer(register, status: 200, isError: false)
    let rig = try NginxAPIListenerRig(stack: stack, station: "N0CALL-7", serverSettings: "ringSize = 1000\n")
    defer { rig.stop() }

    let total = 300
    let peers = ["KJ7ABC-7", "W5AGO", "OH7AA-1", "W1AW-15"]
    let expected: [(peer: String, text: String, seqId: String?)] = (1...total).map {
      (peers[$0 % peers.count], "cursor \($0)", String($0))
    }
    let state = NginxAPIWriterState()
    defer { state.cancel() }
    let fake = rig.fake
    // The writer: bursts of 1-12 lines; after most of them it waits until two more syncs (by any phone) have
    // completed, one of which may have been in flight while the burst was committed; after the others it goes
    // straight on. So commits land before, during and after syncs all through the run.
    let writer = Thread {
      var random = SplitMix64(seed: 0x5EED_C0450)
      var next = 1
      while next <= total {
        let size = min(total - next + 1, 1 + Int(random.next() % 12))
        let lines = (next..<(next + size)).map {
          messageLine(from: peers[$0 % peers.count], to: "N0CALL-7", text: "cursor \($0)", msgno: String($0))
        }
        do {
          let delivered = try fake.inject(lines)
          guard delivered == size else {
            state.fail("the fake delivered \(delivered) of \(size) lines")
            return
          }
        } catch {
          state.fail("inject failed: \(error)")
          return
        }
        state.burst(size)
        next += size
        guard random.next() % 4 != 0 else { continue }
        let seen = state.syncCount
        let synced = waitUntil(timeout: 15, interval: 0.001) {
          state.syncCount >= seen + 2 || state.isCancelled
        }
        if state.isCancelled { return }
        if !synced {
          state.fail("no sync completed within 15 s")
          return
        }
      }
      state.finish()
    }
    writer.start()

    // Several phones, each on its own thread following its own cursor (`since` = the last `serverTime`),
    // sync back to back while the writer runs: each must see every message exactly once, in order.
    let phones = (0..<3).map { _ in NginxAPIPhone() }
    let phoneThreads = phones.map { phone in
      Thread { phone.follow(stack: stack, state: state, total: total, timeout: 40) }
    }
    for thread in phoneThreads { thread.start() }
    let phonesDone = waitUntil(timeout: 50, interval: 0.01) { phoneThreads.allSatisfy(\.isFinished) }
    state.cancel()
    #expect(phonesDone, "the phones did not finish within 50 s")
    #expect(waitUntil(timeout: 20) { writer.isFinished }, "the writer thread did not end")
    #expect(state.failureText == nil, "\(state.failureText ?? "")")

    for (index, phone) in phones.enumerated() {
      let result = phone.result
      #expect(result.problems.isEmpty, "phone \(index): \(result.problems.prefix(10))")
      let received = result.received
      // Every message exactly once, in order, with strictly increasing timestamps across the whole run.
      #expect(
        received.count == total,
        "phone \(index) received \(received.count) of \(total) in \(result.syncs) syncs")
      let firstDifference =
        zip(received, expected).enumerated().first { $0.element.0.text != $0.element.1.text }?.offset
        ?? min(received.count, total)
      #expect(
        received.map(\.text) == expected.map(\.text),
        "phone \(index): first difference at index \(firstDifference)")
      #expect(received.map(\.peer) == expected.map(\.peer), "phone \(index)")
      #expect(received.map(\.seqId) == expected.map(\.seqId), "phone \(index)")
      let timestamps = received.map(\.timestamp)
      #expect(zip(timestamps, timestamps.dropFirst()).allSatisfy { $0 < $1 }, "phone \(index): timestamps")
      #expect(
        result.nonEmptySyncs >= 2, "phone \(index): commits and syncs interleaved (\(result.nonEmptySyncs))")
      // Nothing more later.
      let after = try stack.post("/v1/sync", json: Self.syncBody(since: result.since))
      #expect(
        nginxAPIMessages(try #require(after.jsonObject), raw: after.text).isEmpty, "\(after.text.prefix(300))"
      )
    }
    // Every phone saw the same messages with the same timestamps, and so does a full sync now.
    let reference = phones[0].result.received
    #expect(phones.allSatisfy { $0.result.received == reference })
    // The old app's answers hold at most 50 (oldest first): it pages through them by the cursor.
    var whole: [NginxAPIMessage] = []
    var cursor: Int64 = 0
    for _ in 0..<100 {
      let page = try stack.post("/v1/sync", json: Self.syncBody(since: cursor))
      let pageObject = try #require(page.jsonObject)
      let messages = nginxAPIMessages(pageObject, raw: page.text)
      #expect(messages.count <= 50, "an old app's answer held \(messages.count)")
      if messages.isEmpty { break }
      whole += messages
      cursor = try #require(nginxAPIServerTime(pageObject, raw: page.text))
      #expect(cursor == messages.last?.timestamp)
    }
    #expect(whole == reference)
    #expect(try database.int("SELECT count(*) FROM messages WHERE station = 'N0CALL-7'") == total)
    let results = phones.map(\.result)
    print(
      "cursor: \(total) messages in \(state.burstSizes.count) bursts; syncs per phone \(results.map(\.syncs)), "
        + "with messages \(results.map(\.nonEmptySyncs))")
  }

  // MARK: 4. Ring roll-off at 50

  @Test func ringKeepsTheNewest50OldestFirst() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let database = SQLiteFile(path: stack.databasePath)
    let register = try stack.post("/v1/register", json: Self.appRegister(wantHistory: false))
    expectAPIAnswer(register, status: 200, isError: false)
    let rig = try NginxAPIListenerRig(stack: stack, station: "N0CALL-7")
    defer { rig.stop() }

    let lines = (1...55).map {
      messageLine(
        from: $0 % 2 == 0 ? "KJ7ABC-7" : "W5AGO", to: "N0CALL-7", text: "ring \($0)", msgno: "\($0)")
    }
    #expect(try rig.fake.inject(lines) == 55)
    // The listener commits in order: once the 55th is there, all were stored (and 5 rolled off).
    #expect(
      try database.waitUntil(timeout: 15) {
        try $0.int("SELECT count(*) FROM messages WHERE text = 'ring 55'") == 1
      },
      "\(rig.listener.log.suffix(2000))")
    #expect(try database.int("SELECT count(*) FROM messages WHERE station = 'N0CALL-7'") == 50)

    let sync = try stack.post("/v1/sync", json: Self.syncBody(since: 0))
    expectAPIAnswer(sync, status: 200, isError: false)
    let object = try #require(sync.jsonObject, "\(sync.text)")
    let messages = nginxAPIMessages(object, raw: sync.text)
    #expect(messages.map(\.text) == (6...55).map { "ring \($0)" })
    #expect(messages.map(\.seqId) == (6...55).map { Optional("\($0)") })
    let timestamps = messages.map(\.timestamp)
    #expect(zip(timestamps, timestamps.dropFirst()).allSatisfy { $0 < $1 }, "oldest first")
    #expect(nginxAPIServerTime(object, raw: sync.text) == timestamps.last)
    // The same ring through register with history.
    let history = try stack.post("/v1/register", json: Self.appRegister())
    let historyObject = try #require(history.jsonObject, "\(history.text)")
    #expect(nginxAPIMessages(historyObject, raw: history.text) == messages)
  }

  // MARK: 5. Hostile input

  @Test func hostileInputIsAClearErrorAndRandomMutationsNeverA5xx() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let database = SQLiteFile(path: stack.databasePath)
    let ok = #""callsign":"N0CALL","ssid":7,"auth":"13023""#
    func bytes(_ parts: [UInt8]...) -> Data { Data(parts.joined()) }
    func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

    // (label, method, path, body, status, what the error must mention); a nil mention: nginx's own text.
    var cases: [(request: NginxAPIRequest, status: Int, mentions: String)] = []
    func add(
      _ label: String, _ path: String, _ body: Data?, _ status: Int, _ mentions: String,
      method: String = "POST"
    ) {
      cases.append((NginxAPIRequest(label, path, body: body, method: method), status, mentions))
    }
    let endpoints = ["/v1/register", "/v1/heartbeat", "/v1/sync", "/v1/unregister", "/v1/avatars"]
    for path in endpoints {
      add("empty body", path, Data(), 400, "empty")
      add("whitespace body", path, Data("  \n ".utf8), 400, "empty")
      add("not JSON", path, Data("callsign=N0CALL&auth=13023".utf8), 400, "not valid JSON")
      add("array", path, Data("[]".utf8), 400, "JSON object")
      add("string", path, Data(#""N0CALL""#.utf8), 400, "JSON object")
      add("null", path, Data("null".utf8), 400, "JSON object")
      add(
        "wrong passcode", path, Data(#"{"callsign":"N0CALL","ssid":7,"auth":"13024"}"#.utf8), 401, "passcode")
      add(
        "wrong passcode number", path, Data(#"{"callsign":"N0CALL","ssid":7,"auth":31742}"#.utf8), 401,
        "passcode")
      add("deep arrays", path, Data(String(repeating: "[", count: 10_000).utf8), 400, "deeper")
      add("deep objects", path, Data(String(repeating: #"{"a":"#, count: 10_000).utf8), 400, "deeper")
      add(
        "duplicate key", path, Data(#"{"callsign":"N0CALL","callsign":"W5AGO","auth":"13023"}"#.utf8), 400,
        "more than once")
      add(
        "invalid UTF-8", path,
        bytes(utf8(#"{"callsign":"N0CALL","ssid":7,"auth":"13023","x":"ab"#), [0xFF, 0xFE], utf8(#""}"#)),
        400, "UTF-8")
    }
    let register = "/v1/register"
    let sync = "/v1/sync"
    // Wrong shapes and types.
    add(
      "callsign an array", sync, Data(#"{"callsign":["N0CALL"],"auth":"13023"}"#.utf8), 400,
      "callsign must be a string")
    add(
      "callsign a number", sync, Data(#"{"callsign":7,"auth":"13023"}"#.utf8), 400,
      "callsign must be a string")
    add("no callsign", sync, Data(#"{"auth":"13023"}"#.utf8), 400, "callsign is required")
    add("no auth", sync, Data(#"{"callsign":"N0CALL"}"#.utf8), 400, "auth is required")
    add(
      "auth an object", sync, Data(#"{"callsign":"N0CALL","auth":{"code":13023}}"#.utf8), 400, "auth must be")
    add("auth a word", sync, Data(#"{"callsign":"N0CALL","auth":"abc"}"#.utf8), 400, "auth must be")
    add(
      "ssid a string", sync, Data(#"{"callsign":"N0CALL","ssid":"7","auth":"13023"}"#.utf8), 400,
      "ssid must be an integer")
    add("ssid a fraction", sync, Data(#"{"callsign":"N0CALL","ssid":7.5,"auth":"13023"}"#.utf8), 400, "ssid")
    add("since a string", sync, Data("{\(ok),\"since\":\"0\"}".utf8), 400, "since must be an integer")
    add("since a bool", sync, Data("{\(ok),\"since\":true}".utf8), 400, "since must be an integer")
    add("wantHistory a number", register, Data("{\(ok),\"wantHistory\":1}".utf8), 400, "wantHistory")
    add("ackMessages a string", register, Data("{\(ok),\"ackMessages\":\"yes\"}".utf8), 400, "ackMessages")
    add(
      "platform unknown", register,
      Data("{\(ok),\"platform\":\"windows\",\"pushToken\":\"abcdefgh12\"}".utf8), 400, "platform")
    add("platform a number", register, Data("{\(ok),\"platform\":7}".utf8), 400, "platform must be a string")
    add(
      "pushToken an array", register, Data("{\(ok),\"platform\":\"android\",\"pushToken\":[\"x\"]}".utf8),
      400, "pushToken must be a string")
    add(
      "avatarUpdate a string", register, Data("{\(ok),\"avatarUpdate\":\"true\"}".utf8), 400, "avatarUpdate")
    add(
      "avatarIcon a number", "/v1/heartbeat", Data("{\(ok),\"avatarUpdate\":true,\"avatarIcon\":5}".utf8),
      400, "avatarIcon")
    add(
      "stations a string", "/v1/avatars", Data("{\(ok),\"stations\":\"W5AGO\"}".utf8), 400,
      "stations must be an array")
    add(
      "stations with a number", "/v1/avatars", Data("{\(ok),\"stations\":[\"W5AGO\",7]}".utf8), 400,
      "stations[1]")
    add("no stations", "/v1/avatars", Data("{\(ok)}".utf8), 400, "stations is required")
    // Huge and negative numbers.
    add("since 1e400", sync, Data("{\(ok),\"since\":1e400}".utf8), 400, "since")
    add("since 23 digits", sync, Data("{\(ok),\"since\":99999999999999999999999}".utf8), 400, "since")
    add("since Int64.max + 1", sync, Data("{\(ok),\"since\":9223372036854775808}".utf8), 400, "since")
    add("since negative", sync, Data("{\(ok),\"since\":-5}".utf8), 400, "since")
    add("since -Int64.max", sync, Data("{\(ok),\"since\":-9223372036854775808}".utf8), 400, "since")
    add("ssid 1e400", sync, Data(#"{"callsign":"N0CALL","ssid":1e400,"auth":"13023"}"#.utf8), 400, "ssid")
    add("ssid negative", sync, Data(#"{"callsign":"N0CALL","ssid":-1,"auth":"13023"}"#.utf8), 400, "ssid")
    add("ssid 16", sync, Data(#"{"callsign":"N0CALL","ssid":16,"auth":"13023"}"#.utf8), 400, "ssid")
    add(
      "ssid huge", sync, Data(#"{"callsign":"N0CALL","ssid":18446744073709551623,"auth":"13023"}"#.utf8), 400,
      "ssid")
    add(
      "auth 20 digits", sync, Data(#"{"callsign":"N0CALL","auth":"99999999999999999999"}"#.utf8), 400,
      "auth must be")
    add("auth negative", sync, Data(#"{"callsign":"N0CALL","auth":-13023}"#.utf8), 400, "auth must be")
    add("auth 1e400", sync, Data(#"{"callsign":"N0CALL","auth":1e400}"#.utf8), 400, "auth must be")
    // Strings and bytes.
    add("callsign too long", sync, Data(#"{"callsign":"TOOLONGCALL","auth":"13023"}"#.utf8), 400, "callsign")
    add("callsign punctuation", sync, Data(#"{"callsign":"N0CALL!","auth":"13023"}"#.utf8), 400, "callsign")
    add("callsign with NUL", sync, Data(#"{"callsign":"N0C\u0000LL","auth":"13023"}"#.utf8), 400, "callsign")
    add(
      "control character", sync, Data("{\"callsign\":\"N0CALL\u{0001}\",\"auth\":\"13023\"}".utf8), 400,
      "control character")
    add(
      "overlong UTF-8", sync,
      bytes(utf8(#"{"callsign":"N0CALL","auth":"13023","x":""#), [0xC0, 0xAF], utf8(#""}"#)), 400, "UTF-8")
    add(
      "UTF-8 surrogate", sync,
      bytes(utf8(#"{"callsign":"N0CALL","auth":"13023","x":""#), [0xED, 0xA0, 0x80], utf8(#""}"#)), 400,
      "UTF-8")
    add(
      "cut UTF-8 sequence", sync,
      bytes(utf8(#"{"callsign":"N0CALL","auth":"13023","x":""#), [0xE2, 0x82], utf8(#""}"#)), 400, "UTF-8")
    add(
      "invalid UTF-8 in a key", sync,
      bytes(utf8(#"{"callsign":"N0CALL","auth":"13023",""#), [0xC3, 0x28], utf8(#"":1}"#)), 400, "UTF-8")
    add(
      "duplicate auth", sync, Data(#"{"callsign":"N0CALL","auth":"13023","auth":"13023"}"#.utf8), 400,
      "more than once")
    add("trailing data", sync, Data("{\(ok)} {}".utf8), 400, "after the JSON")
    add("unterminated", sync, Data(#"{"callsign":"N0CALL","auth":"13"#.utf8), 400, "JSON")
    // nginx's own and the responder's routing errors.
    add("70 KB body", register, Data(repeating: UInt8(ascii: " "), count: 70_000), 413, "64 KiB")
    add(
      "70 KB JSON", sync, Data(("{\(ok),\"x\":\"" + String(repeating: "a", count: 70_000) + "\"}").utf8), 413,
      "64 KiB")
    add("GET", sync, nil, 405, "method not allowed", method: "GET")
    add("PUT", register, Data("{}".utf8), 405, "method not allowed", method: "PUT")
    add("DELETE", "/v1/unregister", nil, 405, "method not allowed", method: "DELETE")
    add("unknown /v1 path", "/v1/nope", Data("{\(ok)}".utf8), 404, "no such endpoint")
    add("unknown path", "/v2/sync", Data("{\(ok)}".utf8), 404, "no such endpoint")
    add("/v1 alone", "/v1", Data("{\(ok)}".utf8), 404, "no such endpoint")

    let answers = try CurlBatch.run(cases.map(\.request), baseURL: stack.baseURL)
    for (testCase, answer) in zip(cases, answers) {
      let label = "\(testCase.request.method) \(testCase.request.path) \(testCase.request.label)"
      #expect(answer.status == testCase.status, "\(label): \(answer.status) \(answer.text.prefix(200))")
      expectBatchAnswer(answer, label)
      #expect(
        answer.errorMessage?.contains(testCase.mentions) == true,
        "\(label): error '\(answer.errorMessage ?? "none")' does not mention '\(testCase.mentions)'")
      if testCase.status == 405 { #expect(answer.allow == "POST", "\(label): Allow '\(answer.allow)'") }
    }
    // Nothing was written by any of them.
    #expect(try database.int("SELECT count(*) FROM stations") == 0)
    #expect(try database.int("SELECT count(*) FROM rate_limits") == 0)

    // Rate limits: nginx's per-address limit (loopback is exempt, so from 127.0.0.2) and the responder's
    // per-station one, both 429 JSON with Retry-After.
    let burst = try CurlBatch.run(
      (0..<60).map { NginxAPIRequest("burst \($0)", sync, json: "{\(ok),\"since\":0}") },
      baseURL: stack.baseURL,
      interface: "127.0.0.2")
    let limited = burst.filter { $0.status == 429 }
    #expect(!limited.isEmpty, "no 429 from nginx: \(burst.map(\.status))")
    #expect(burst.allSatisfy { $0.status == 200 || $0.status == 429 }, "\(burst.map(\.status))")
    for answer in burst { expectBatchAnswer(answer, "burst \(answer.status)") }
    #expect(limited.allSatisfy { !$0.retryAfter.isEmpty })
    let registrations = try CurlBatch.run(
      (0..<61).map {
        NginxAPIRequest(
          "registration \($0)", register, json: #"{"callsign":"N0CALL","ssid":5,"auth":"13023"}"#)
      }, baseURL: stack.baseURL, parallel: 1)
    #expect(registrations.map(\.status) == Array(repeating: 200, count: 60) + [429])
    if let last = registrations.last {
      expectBatchAnswer(last, "61st registration")
      #expect(last.errorMessage?.contains("too many registrations") == true, "\(last.text)")
      #expect(!last.retryAfter.isEmpty)
    }

    // Random mutations of valid bodies: byte flips, replacements, insertions, deletions, truncations.
    let seeds: [(path: String, body: String)] = [
      (
        register,
        #"{"callsign":"n0call","ssid":7,"platform":"android","pushToken":"fcm:APA91b-x","ackMessages":false,"wantHistory":true,"since":0,"auth":"13023","avatarHash":"","avatarUpdate":true,"avatarIcon":"radio","avatarImage":"\#(nginxAPITinyPNG)"}"#
      ),
      (
        "/v1/heartbeat",
        #"{"callsign":"N0CALL","ssid":7,"platform":"ios","pushToken":"abababababababababababababababab","auth":"13023","avatarHash":"icon:radio"}"#
      ),
      (sync, #"{"callsign":"N0CALL","ssid":7,"since":1800000000000,"auth":"13023"}"#),
      ("/v1/unregister", #"{"callsign":"N0CALL","ssid":7,"auth":"13023","pushToken":"fcm:APA91b-x"}"#),
      ("/v1/avatars", #"{"callsign":"N0CALL","ssid":7,"auth":13023,"stations":["W5AGO","N0CALL-7"]}"#),
    ]
    var random = SplitMix64(seed: 0x4E47_494E_58)
    let alphabet =
      Array(#"{}[]":,\-0123456789.eEtrufalsnN0CALL "#.utf8) + [0x00, 0x0A, 0x7F, 0x80, 0xC3, 0xE2, 0xFF]
    let rounds = 2500
    var mutations: [NginxAPIRequest] = []
    for round in 0..<rounds {
      let seed = seeds[round % seeds.count]
      var body = Array(seed.body.utf8)
      for _ in 0..<(1 + Int(random.next() % 4)) {
        if body.isEmpty { break }
        let position = Int(random.next() % UInt64(body.count))
        switch random.next() % 5 {
        case 0: body[position] ^= UInt8(1) << (random.next() % 8)
        case 1: body[position] = alphabet[Int(random.next() % UInt64(alphabet.count))]
        case 2: body.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: position)
        case 3: body.remove(at: position)
        default: body = Array(body[..<position])
        }
      }
      mutations.append(NginxAPIRequest("mutation \(round)", seed.path, body: Data(body)))
    }
    let started = Date()
    let fuzzed = try CurlBatch.run(mutations, baseURL: stack.baseURL, parallel: 8, timeout: 180)
    let elapsed = Date().timeIntervalSince(started)
    var statuses: [Int: Int] = [:]
    var reported = 0
    for (request, answer) in zip(mutations, fuzzed) {
      statuses[answer.status, default: 0] += 1
      let fine =
        (200..<500).contains(answer.status) && answer.jsonObject != nil
        && answer.contentType.hasPrefix("application/json") && answer.cacheControl == "no-store"
        && (answer.status == 200) == (answer.jsonObject?["error"] == nil)
        && (answer.status == 200 || answer.errorMessage?.isEmpty == false)
      if !fine && reported < 20 {
        reported += 1
        let sent = String(decoding: request.body ?? Data(), as: UTF8.self).prefix(200)
        Issue.record(
          "\(request.path) \(sent) → \(answer.status) [\(answer.contentType)] [\(answer.cacheControl)] \(answer.text.prefix(200))"
        )
      }
    }
    let bad = zip(mutations, fuzzed).filter { !(200..<500).contains($0.1.status) }.count
    #expect(bad == 0, "\(bad) answers outside 200-499: \(statuses)")
    #expect(reported == 0, "answers breaking the contract (first 20 recorded above)")
    #expect(statuses[400, default: 0] > rounds / 4, "the mutations mostly break the bodies: \(statuses)")
    print(
      "mutations: \(rounds) in \(String(format: "%.1f", elapsed)) s, statuses \(statuses.sorted { $0.key < $1.key })"
    )

    // The responder is still up and the database intact.
    expectAPIAnswer(try stack.get("/health"), status: 200, isError: false)
    #expect(try database.run("PRAGMA integrity_check;") == "ok\n")
  }
}
