import Foundation
import JSON
import TestSupport
import Testing

/// A hostile client through the real nginx (the project's own config) and the real responder: what one
/// address can make the server store is bounded by the responder's per-address and global caps, and
/// every refusal is JSON with `error` (issue "The API on the open internet", Tests).
@Suite(.serialized) struct HostileClientTests {
  /// `[ratelimit] newStationsPerAddressPerHour` left at its default.
  static let newStationsPerAddress = 30
  /// `[limits] maxStations` for this run: room for everything below, then full.
  static let maxStations = 90
  /// `[limits] devicesPerStation` left at its default.
  static let devicesPerStation = 10

  /// A register body for `call` (its own passcode) with `extra` raw members after the usual ones.
  static func register(_ call: String, ssid: Int = 0, token: String? = nil, extra: String = "") -> String {
    let pushToken = token ?? "fcm:hostile-\(call)-\(ssid)"
    return
      #"{"callsign":"\#(call)","ssid":\#(ssid),"auth":"\#(aprsPasscode(call))","platform":"android","pushToken":"\#(pushToken)","ackMessages":false,"wantHistory":true,"since":0\#(extra)}"#
  }

  /// Avatar fields uploading `image` with the icon `radio`.
  static func avatar(_ image: String) -> String {
    #","avatarHash":"x","avatarUpdate":true,"avatarIcon":"radio","avatarImage":"\#(image)""#
  }

  /// `count` distinct two-character keys, each `"ab":0`, joined by commas.
  static func keys(_ count: Int) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    return (0..<count).map { #""\#(alphabet[$0 / alphabet.count])\#(alphabet[$0 % alphabet.count])":0"# }
      .joined(separator: ",")
  }

  @Test func oneHostileAddressIsBoundedAndEveryRefusalIsJSON() throws {
    let configDirectory = try makeTemporaryDirectory("hostilecfg")
    defer { try? FileManager.default.removeItem(atPath: configDirectory) }
    try """
    [ratelimit]
    registrationsPerHour = 1000

    [limits]
    maxStations = \(Self.maxStations)

    """.write(toFile: configDirectory + "/responder.ini", atomically: true, encoding: .utf8)
    let stack = try TestStack(.real(arguments: ["--config", configDirectory + "/responder.ini"]))
    defer { stack.stop() }
    let database = SQLiteFile(path: stack.databasePath)
    func databaseBytes() throws -> Int {
      try database.int("PRAGMA page_count;") * database.int("PRAGMA page_size;")
    }
    func hits(_ limit: String) throws -> Int {
      let value = try database.run("SELECT value FROM meta WHERE key = 'limits.\(limit)';")
      return Int(value.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
    var everything: [(label: String, answer: NginxAPIAnswer)] = []

    // 1. One address (127.0.0.2: not exempt from nginx's per-address limit) registers new stations, each
    // with a 24 KB avatar, a little faster than nginx lets through, until 10 s after the cap was reached.
    let image = nginxAPIPNGShaped(padding: 17_992)
    #expect(image.utf8.count == 24_000)
    let bytesBefore = try databaseBytes()
    let started = Date()
    var capReachedAt: Date?
    var flood: [NginxAPIAnswer] = []
    while true {
      let batch = (flood.count..<(flood.count + 24)).map {
        NginxAPIRequest(
          "new station \($0)", "/v1/register", json: Self.register("HX\($0)", extra: Self.avatar(image)))
      }
      flood += try CurlBatch.run(
        batch, baseURL: stack.baseURL, parallel: 1, interface: "127.0.0.2", rate: "12/s")
      if capReachedAt == nil, flood.filter({ $0.status == 200 }).count >= Self.newStationsPerAddress {
        capReachedAt = Date()
      }
      if let capReachedAt, Date().timeIntervalSince(capReachedAt) >= 10 { break }
      if Date().timeIntervalSince(started) > 60 {
        Issue.record("the cap was not reached within 60 s: \(flood.map(\.status))")
        break
      }
    }
    let elapsed = Date().timeIntervalSince(started)
    let bytesAfter = try databaseBytes()
    let created = flood.filter { $0.status == 200 }.count
    let byResponder = flood.filter {
      $0.status == 429 && $0.errorMessage?.contains("too many new stations from this address") == true
    }.count
    let byNginx = flood.filter { $0.status == 429 }.count - byResponder
    print(
      "hostile flood from one address: \(flood.count) registrations in \(Int(elapsed)) s, \(created) created,"
        + " \(byResponder) refused by the responder, \(byNginx) by nginx; database \(bytesBefore) -> "
        + "\(bytesAfter) bytes (+\(bytesAfter - bytesBefore))")
    #expect(created == Self.newStationsPerAddress)
    #expect(
      flood.prefix(Self.newStationsPerAddress).allSatisfy { $0.status == 200 }, "\(flood.map(\.status))")
    #expect(
      flood.dropFirst(Self.newStationsPerAddress).allSatisfy { $0.status == 429 }, "\(flood.map(\.status))")
    #expect(byResponder >= 20, "the responder refused \(byResponder)")
    #expect(flood.filter { $0.status == 429 }.allSatisfy { !$0.retryAfter.isEmpty })
    #expect(try database.int("SELECT count(*) FROM stations WHERE address LIKE 'HX%';") == created)
    #expect(try hits("newStationsPerAddressPerHour") == byResponder)
    // A refused new station leaves nothing behind: the rate windows are the 30 stations' registrations and
    // avatar uploads, the address's two, and its /24's new stations.
    #expect(try database.int("SELECT count(*) FROM rate_limits;") == 2 * created + 3)
    // 30 stations with their 24 KB avatars, and little else: however long the flood goes on.
    #expect(bytesAfter - bytesBefore < 2_000_000, "the database grew by \(bytesAfter - bytesBefore) bytes")
    everything += flood.enumerated().map { ("new station \($0.offset)", $0.element) }

    // 2. 9,000-key bodies: flat (past nginx's 64 KiB), in nine objects of 1000 (under 64 KiB: parsed and
    // ignored), and with one object over the parser's 1024 members.
    let flat = "{" + (0..<9000).map { #""k\#($0)":0"# }.joined(separator: ",") + "}"
    let nested = (0..<9).map { #","x\#($0)":{\#(Self.keys(1000))}"# }.joined()
    let overfull =
      (0..<8).map { #","x\#($0)":{\#(Self.keys(1000))}"# }.joined() + #","x8":{\#(Self.keys(1025))}"#
    let wide = [
      NginxAPIRequest("9000 keys flat", "/v1/register", json: flat),
      NginxAPIRequest("9000 keys nested", "/v1/register", json: Self.register("N0CALL", extra: nested)),
      NginxAPIRequest(
        "9025 keys, 1025 in one", "/v1/register", json: Self.register("N0CALL", extra: overfull)),
    ]
    #expect(wide[1].body!.count < 65_536 && wide[2].body!.count < 65_536)
    let wideAnswers = try CurlBatch.run(wide, baseURL: stack.baseURL, parallel: 1)
    #expect(wideAnswers.map(\.status) == [413, 200, 400], "\(wideAnswers.map(\.text))")
    #expect(wideAnswers[2].errorMessage?.contains("more than 1024 members") == true)
    everything += zip(wide.map(\.label), wideAnswers).map { ($0, $1) }

    // 3. 100 devices for one station: 10 are kept, the first 9 (live, and older than every newcomer: a flood
    // pushes out its own newcomers, never a live older phone) and the newest.
    let devices = (0..<100).map {
      NginxAPIRequest(
        "device \($0)", "/v1/register",
        json: Self.register("N0CALL", ssid: 7, token: "fcm:hostile-device-\($0)"))
    }
    let deviceAnswers = try CurlBatch.run(devices, baseURL: stack.baseURL, parallel: 1)
    #expect(deviceAnswers.allSatisfy { $0.status == 200 }, "\(deviceAnswers.map(\.status))")
    #expect(
      try database.int("SELECT count(*) FROM devices WHERE station = 'N0CALL-7';") == Self.devicesPerStation)
    let kept =
      (0..<(Self.devicesPerStation - 1)).map { "'fcm:hostile-device-\($0)'" } + ["'fcm:hostile-device-99'"]
    #expect(
      try database.int(
        "SELECT count(*) FROM devices WHERE station = 'N0CALL-7' AND token IN (\(kept.joined(separator: ",")));"
      )
        == Self.devicesPerStation)
    #expect(try hits("devicesPerStation") == 100 - Self.devicesPerStation)
    everything += zip(devices.map(\.label), deviceAnswers).map { ($0, $1) }

    // 4. /v1/avatars for 50 stations holding 24 KB images (registered from five more addresses).
    let avatarStations = (0..<50).map { "AV\($0)" }
    for group in 0..<5 {
      let uploads = avatarStations[(group * 10)..<(group * 10 + 10)].map {
        NginxAPIRequest("avatar \($0)", "/v1/register", json: Self.register($0, extra: Self.avatar(image)))
      }
      let answers = try CurlBatch.run(
        uploads, baseURL: stack.baseURL, parallel: 1, interface: "127.0.0.\(3 + group)")
      #expect(
        answers.allSatisfy { $0.status == 200 && $0.jsonObject?["avatarError"] == nil },
        "\(answers.map(\.text))")
      everything += zip(uploads.map(\.label), answers).map { ($0, $1) }
    }
    let list = avatarStations.map { "\"\($0)\"" }.joined(separator: ",")
    let lookup = try CurlBatch.run(
      [
        NginxAPIRequest(
          "avatars of 50", "/v1/avatars",
          json: #"{"callsign":"N0CALL","ssid":7,"auth":"13023","stations":[\#(list)]}"#)
      ], baseURL: stack.baseURL)[0]
    everything.append(("avatars of 50", lookup))
    #expect(lookup.status == 200)
    #expect(lookup.body.count <= 262_144, "\(lookup.body.count) bytes")
    let lookupObject = try #require(lookup.jsonObject, "\(lookup.text.prefix(300))")
    #expect(lookupObject["truncated"] == .bool(true))
    guard case .object(let avatars)? = lookupObject["avatars"] else {
      Issue.record("no avatars: \(lookup.text.prefix(300))")
      return
    }
    #expect(avatars.keys.count == 50)
    var images = 0
    for station in avatarStations {
      guard case .object(let entry)? = avatars[station] else {
        Issue.record("\(station) missing")
        continue
      }
      #expect(entry["icon"] == .string("radio"))
      #expect(entry["hash"].flatMap(nginxAPIString)?.count == 64)
      if case .string(let stored)? = entry["image"] {
        #expect(stored == image)
        images += 1
      } else {
        #expect(entry["image"] == .null)
      }
    }
    #expect(images == 10)

    // 5. The server fills up: new stations get a 503 with `error`; known ones go on.
    let stations = try database.int("SELECT count(*) FROM stations;")
    #expect(stations == Self.newStationsPerAddress + 2 + 50)
    let filling = (0..<15).map {
      NginxAPIRequest("filling \($0)", "/v1/register", json: Self.register("FL\($0)"))
    }
    let fillAnswers = try CurlBatch.run(filling, baseURL: stack.baseURL, parallel: 1, interface: "127.0.0.8")
    let room = max(0, min(15, Self.maxStations - stations))
    #expect(
      fillAnswers.map(\.status) == Array(repeating: 200, count: room)
        + Array(repeating: 503, count: 15 - room))
    for answer in fillAnswers.dropFirst(room) {
      #expect(answer.errorMessage?.contains("the server is full") == true, "\(answer.text)")
      #expect(answer.retryAfter == "3600")
    }
    #expect(try hits("maxStations") == 15 - room)
    let known = try CurlBatch.run(
      [NginxAPIRequest("known station", "/v1/register", json: Self.register("HX0"))], baseURL: stack.baseURL)
    #expect(known.first?.status == 200)
    everything += zip(filling.map(\.label), fillAnswers).map { ($0, $1) } + [("known station", known[0])]
    #expect(try database.int("SELECT count(*) FROM stations;") == Self.maxStations)

    // Every answer: JSON, no-store, `error` exactly on failure; the database is sound.
    for (label, answer) in everything { expectBatchAnswer(answer, label) }
    #expect(
      try database.run("PRAGMA integrity_check;").trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
  }
}
