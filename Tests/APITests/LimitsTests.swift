import API
import APRS
import Foundation
import JSON
import Store
import Testing

extension APIFixture {
  /// POSTs `fields` as the web server would pass a request from `remoteAddress`.
  func post(_ path: String, _ fields: [String: Any], from remoteAddress: String) -> Reply {
    let data = try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
    return Reply(
      handler.handle(
        APIRequest(
          method: "POST", path: path, contentType: "application/json", body: Array(data),
          remoteAddress: remoteAddress)))
  }

  /// The hits of `limit` as the store counts them.
  func hits(_ limit: LimitName) throws -> Int { try database.limitStatus()[limit] }
}

/// A heartbeat body for `call` (its own passcode), with `extra` fields.
private func heartbeat(_ call: String, ssid: Int = 0, _ extra: [String: Any] = [:]) -> [String: Any] {
  var body: [String: Any] = ["callsign": call, "ssid": ssid, "auth": String(Passcode.compute(call))]
  body.merge(extra) { $1 }
  return body
}

/// `count` distinct base calls `KA0AA`, `KA1AA`, … (valid, each with its own passcode).
private func calls(_ count: Int, prefix: String = "K") -> [String] {
  (0..<count).map { prefix + "A\($0)AA" }
}

/// Base64 of a PNG signature followed by filler: exactly `characters` characters (a multiple of 4).
func pngShapedImage(characters: Int, fill: UInt8 = 0x41) -> String {
  let bytes =
    [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: fill, count: characters / 4 * 3 - 8)
  return Data(bytes).base64EncodedString()
}

@Suite struct ClientAddressTests {
  @Test(
    arguments: [
      ("203.0.113.7", "203.0.113.7"),
      (" 203.0.113.7 ", "203.0.113.7"),
      ("127.0.0.1", "127.0.0.1"),
      ("::ffff:203.0.113.7", "203.0.113.7"),
      ("2001:db8:0:1:aaaa:bbbb:cccc:dddd", "2001:db8:0:1::/64"),
      ("2001:0DB8:0000:0001::1", "2001:db8:0:1::/64"),
      ("[2001:db8:0:1::2]", "2001:db8:0:1::/64"),
      ("fe80::1%eth0", "fe80::/64"),
      ("::1", "::/64"),
      ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
      ("", "unknown"),
      ("unix:", "unknown"),
      ("not an address", "unknown"),
      ("999.1.1.1", "unknown"),
    ])
  func keys(remote: String, key: String) {
    #expect(ClientAddress(remote).key == key, "\(remote)")
  }
}

@Suite struct LimitsTests {
  // MARK: New stations per address

  @Test func oneAddressCreatesAtMostItsNewStationsPerHour() throws {
    var config = APIConfig()
    config.newStationsPerAddressPerHour = 3
    let api = try APIFixture(config: config)
    let stations = calls(5)
    for call in stations.prefix(3) {
      #expect(api.post("/v1/register", heartbeat(call), from: "203.0.113.7").status == 200)
    }
    let refused = api.post("/v1/register", heartbeat(stations[3]), from: "203.0.113.7")
    #expect(refused.status == 429)
    #expect(refused.error?.contains("too many new stations from this address") == true, "\(refused.text)")
    let retryAfter = try #require(refused.header("Retry-After").flatMap { Int($0) })
    #expect(retryAfter > 0 && retryAfter <= 3600)
    // A heartbeat that would re-create a station counts as a new station too.
    #expect(api.post("/v1/heartbeat", heartbeat(stations[4]), from: "203.0.113.7").status == 429)
    #expect(try api.database.stationCount() == 3)
    #expect(try api.hits(.newStationsPerAddressPerHour) == 2)
    // Stations that exist go on refreshing from that address; other addresses still create.
    #expect(api.post("/v1/heartbeat", heartbeat(stations[0]), from: "203.0.113.7").status == 200)
    #expect(api.post("/v1/register", heartbeat(stations[3]), from: "198.51.100.1").status == 200)
    // An hour later the address may create again.
    api.clock.advance(ms: 3_600_000)
    #expect(api.post("/v1/heartbeat", heartbeat(stations[4]), from: "203.0.113.7").status == 200)
    #expect(try api.database.stationCount() == 5)
  }

  @Test func ipv6CountsPerSlash64AndLoopbackAndUnknownAreAddressesLikeAnyOther() throws {
    var config = APIConfig()
    config.newStationsPerAddressPerHour = 2
    let api = try APIFixture(config: config)
    let stations = calls(12)
    #expect(api.post("/v1/register", heartbeat(stations[0]), from: "2001:db8:0:1::1").status == 200)
    #expect(api.post("/v1/register", heartbeat(stations[1]), from: "2001:db8:0:1:ffff::9").status == 200)
    #expect(api.post("/v1/register", heartbeat(stations[2]), from: "2001:db8:0:1::abcd").status == 429)
    #expect(api.post("/v1/register", heartbeat(stations[2]), from: "2001:db8:0:2::1").status == 200)
    for (index, remote) in ["127.0.0.1", "", "::1"].enumerated() {
      let first = stations[3 + index * 3]
      #expect(api.post("/v1/register", heartbeat(first), from: remote).status == 200)
      #expect(api.post("/v1/register", heartbeat(stations[4 + index * 3]), from: remote).status == 200)
      let third = api.post("/v1/register", heartbeat(stations[5 + index * 3]), from: remote)
      #expect(third.status == 429, "\(remote): \(third.text)")
    }
    // The fixture's own requests carry no address: they share the "unknown" key used up above.
    #expect(api.post("/v1/register", heartbeat("W5AGO")).status == 429)
  }

  // MARK: maxStations

  @Test func aFullServerRefusesNewStationsWith503AndKeepsServingOthers() throws {
    var config = APIConfig()
    config.maxStations = 2
    let api = try APIFixture(config: config)
    #expect(api.post("/v1/register", heartbeat("N0CALL"), from: "203.0.113.1").status == 200)
    #expect(api.post("/v1/heartbeat", heartbeat("W5AGO"), from: "203.0.113.2").status == 200)
    let full = api.post("/v1/register", heartbeat("TESTCALL"), from: "203.0.113.3")
    #expect(full.status == 503)
    #expect(full.error?.contains("the server is full") == true, "\(full.text)")
    #expect(full.error?.contains("2 stations") == true)
    #expect(full.header("Retry-After") == "3600")
    #expect(api.post("/v1/heartbeat", heartbeat("TESTCALL"), from: "203.0.113.3").status == 503)
    #expect(try api.hits(.maxStations) == 2)
    // Known stations still register, heartbeat and sync.
    #expect(api.post("/v1/register", heartbeat("N0CALL"), from: "203.0.113.3").status == 200)
    #expect(api.post("/v1/sync", heartbeat("W5AGO")).status == 200)
    // Room again once one is gone.
    #expect(api.post("/v1/unregister", heartbeat("W5AGO")).status == 200)
    #expect(api.post("/v1/register", heartbeat("TESTCALL"), from: "203.0.113.3").status == 200)
    #expect(try api.database.stationCount() == 2)
  }

  // MARK: devicesPerStation

  /// A full station pushes out its stale devices first, then the youngest: a flood of new tokens pushes out
  /// each other, never a phone that has been there longer and still checks in (docs/design.md "Who may do what").
  @Test func aNewTokenPushesOutStaleDevicesThenTheYoungestNeverALiveOlderPhone() throws {
    var config = APIConfig()
    config.devicesPerStation = 3
    config.registrationsPerHour = 1000
    let api = try APIFixture(config: config)
    func register(_ token: String) -> Reply {
      api.clock.advance(ms: 1000)
      return api.post(
        "/v1/register", heartbeat("N0CALL", ["platform": "android", "pushToken": "fcm:tok-" + token]))
    }
    for token in ["t1", "t2", "t3"] { #expect(register(token).status == 200) }
    #expect(register("t1").status == 200)
    // All live: the youngest other than the newcomer goes.
    #expect(register("t4").status == 200)
    #expect(
      Set(try api.database.devices(of: "N0CALL").map(\.token)) == ["fcm:tok-t1", "fcm:tok-t2", "fcm:tok-t4"])
    for index in 0..<100 { #expect(register("flood-\(index)").status == 200) }
    let kept = Set(try api.database.devices(of: "N0CALL").map(\.token))
    #expect(kept == ["fcm:tok-flood-99", "fcm:tok-t1", "fcm:tok-t2"])
    // A day later t2 has not checked in: the next newcomer pushes it out before the live t1.
    api.clock.advance(ms: 86_400_000)
    #expect(register("t1").status == 200)
    #expect(register("t5").status == 200)
    #expect(!Set(try api.database.devices(of: "N0CALL").map(\.token)).contains("fcm:tok-t2"))
    #expect(
      Set(try api.database.devices(of: "N0CALL").map(\.token)).isSuperset(of: ["fcm:tok-t1", "fcm:tok-t5"]))
    #expect(try api.hits(.devicesPerStation) == 102)
    // A sync-only refresh (no token) trims nothing.
    #expect(api.post("/v1/heartbeat", heartbeat("N0CALL")).status == 200)
    #expect(try api.database.devices(of: "N0CALL").count == 3)
  }

  // MARK: Avatars

  @Test func avatarBytesTotalRefusesOnlyTheAvatarAndFreesRoomOnClear() throws {
    let image = pngShapedImage(characters: 1000)
    var config = APIConfig()
    config.avatarBytesTotal = 2000
    let api = try APIFixture(config: config)
    let upload: [String: Any] = [
      "avatarUpdate": true, "avatarIcon": NSNull(), "avatarImage": image, "platform": "ios",
      "pushToken": "abcdef0123456789",
    ]
    let hash = try #require(api.post("/v1/heartbeat", heartbeat("N0CALL", upload))["avatarHash"]?.stringValue)
    #expect(hash.count == 64)
    #expect(api.post("/v1/heartbeat", heartbeat("W5AGO", upload))["avatarHash"] == .string(hash))
    #expect(try api.database.storedAvatarBytes() == 2000)
    // Full: the third station's request succeeds, its avatar is refused with the old hash echoed.
    _ = api.post("/v1/heartbeat", heartbeat("TESTCALL", ["avatarUpdate": true, "avatarIcon": "dish"]))
    let refused = api.post("/v1/register", heartbeat("TESTCALL", upload))
    #expect(refused.status == 200)
    #expect(refused["avatarHash"] == .string("icon:dish"))
    #expect(
      refused["avatarError"]?.stringValue?.contains("avatar storage is full") == true, "\(refused.text)")
    #expect(refused.serverTime != nil)
    #expect(try api.database.devices(of: "TESTCALL").map(\.token) == ["abcdef0123456789"])
    #expect(try api.hits(.avatarBytesTotal) == 1)
    // Replacing an image with one no larger fits; an icon alone never counts.
    let other = pngShapedImage(characters: 1000, fill: 0x42)
    var replace = upload
    replace["avatarImage"] = other
    #expect(api.post("/v1/heartbeat", heartbeat("N0CALL", replace))["avatarError"] == nil)
    #expect(
      api.post("/v1/heartbeat", heartbeat("SUCHCALL", ["avatarUpdate": true, "avatarIcon": "radio"]))[
        "avatarError"] == nil)
    // A clear frees its bytes.
    let clear: [String: Any] = ["avatarUpdate": true, "avatarIcon": NSNull(), "avatarImage": NSNull()]
    #expect(api.post("/v1/heartbeat", heartbeat("W5AGO", clear))["avatarHash"] == .string(""))
    #expect(try api.database.storedAvatarBytes() == 1000)
    #expect(api.post("/v1/heartbeat", heartbeat("TESTCALL", upload))["avatarHash"] == .string(hash))
    #expect(try api.database.storedAvatarBytes() == 2000)
  }

  @Test func avatarUploadsPerAddressRefuseOnlyTheAvatar() throws {
    var config = APIConfig()
    config.avatarUploadsPerAddressPerHour = 2
    let api = try APIFixture(config: config)
    let upload: [String: Any] = ["avatarUpdate": true, "avatarIcon": "radio"]
    #expect(api.post("/v1/heartbeat", heartbeat("N0CALL", upload), from: "203.0.113.9")["avatarError"] == nil)
    #expect(api.post("/v1/heartbeat", heartbeat("W5AGO", upload), from: "203.0.113.9")["avatarError"] == nil)
    let refused = api.post("/v1/heartbeat", heartbeat("TESTCALL", upload), from: "203.0.113.9")
    #expect(refused.status == 200)
    #expect(refused["avatarHash"] == .string(""))
    #expect(
      refused["avatarError"]?.stringValue?.contains("too many avatar uploads from this address") == true,
      "\(refused.text)")
    #expect(try api.database.hasStation("TESTCALL"))
    #expect(try api.hits(.avatarUploadsPerAddressPerHour) == 1)
    #expect(
      api.post("/v1/heartbeat", heartbeat("TESTCALL", upload), from: "203.0.113.10")["avatarError"] == nil)
  }

  @Test(arguments: [33, 4097, 60_000])
  func anAvatarIconOfAnyLengthIsRefusedLikeAnyBadAvatar(length: Int) throws {
    let api = try APIFixture()
    _ = api.post("/v1/heartbeat", heartbeat("N0CALL", ["avatarUpdate": true, "avatarIcon": "dish"]))
    let long = String(repeating: "a", count: length)
    let reply = api.post(
      "/v1/register", heartbeat("N0CALL", ["avatarUpdate": true, "avatarIcon": long, "wantHistory": true]))
    #expect(reply.status == 200, "\(reply.text.prefix(200))")
    #expect(reply["avatarHash"] == .string("icon:dish"))
    #expect(reply["avatarError"]?.stringValue?.contains("avatarIcon") == true)
    #expect(reply["messages"] != nil)
  }

  // MARK: /v1/avatars

  @Test func avatarsAnswersAtMost256KBLeavingOutImagesPastTheBudget() throws {
    let api = try APIFixture()
    let stations = calls(50)
    for (index, call) in stations.enumerated() {
      _ = try api.database.upsertStation(
        StationUpsert(
          address: call, base: call, ssid: 0, platform: nil, pushToken: nil, ackMessages: nil,
          isRegistration: true), now: 1)
      let image = pngShapedImage(characters: 24_000, fill: UInt8(index))
      try api.database.setAvatar(call, icon: "radio", image: image, hash: "hash-\(index)", now: 1)
    }
    let reply = api.post("/v1/avatars", heartbeat("N0CALL", ["stations": stations]))
    #expect(reply.status == 200)
    #expect(reply.text.utf8.count <= 262_144, "\(reply.text.utf8.count) bytes")
    #expect(reply["truncated"] == .bool(true))
    guard case .object(let avatars)? = reply["avatars"] else {
      Issue.record("no avatars: \(reply.text.prefix(200))")
      return
    }
    #expect(avatars.keys.count == 50)
    var withImage: [String] = []
    for call in stations {
      guard case .object(let entry)? = avatars[call] else {
        Issue.record("\(call) missing")
        continue
      }
      #expect(entry["icon"] == .string("radio"))
      #expect(entry["hash"]?.stringValue?.hasPrefix("hash-") == true)
      switch entry["image"] {
      case .string(let image)?:
        #expect(image.utf8.count == 24_000)
        withImage.append(call)
      case .null?: break
      default: Issue.record("\(call): image is neither a string nor null")
      }
    }
    // The first ones asked for, as many as fit: 10 images of 24000 characters.
    #expect(withImage == Array(stations.prefix(10)))

    // Within the budget nothing is left out and nothing is said.
    let few = api.post("/v1/avatars", heartbeat("N0CALL", ["stations": Array(stations.suffix(3))]))
    #expect(few["truncated"] == nil)
    #expect(few.text.contains(pngShapedImage(characters: 24_000, fill: 49)))
  }

  // MARK: The cursor

  @Test func registerWithoutHistoryAnswersItsOwnSinceAndLeavesTheCursor() throws {
    let api = try APIFixture()
    _ = api.post("/v1/register", registerBody(["wantHistory": false]))
    try api.deliver(to: "N0CALL-7", from: "KJ7ABC-7", text: "unseen")
    let since: Int64 = 5
    let reply = api.post("/v1/register", registerBody(["wantHistory": false, "since": since]))
    #expect(reply.status == 200)
    #expect(reply.serverTime == since)
    #expect(reply["messages"] == nil)
    #expect(try api.database.station("N0CALL-7")?.lastSyncCursor == 0)
    // The message is still there for the next sync from that cursor.
    let sync = api.post("/v1/sync", ["callsign": "N0CALL", "ssid": 7, "since": since, "auth": "13023"])
    #expect(sync.messages.map { $0["text"] } == [.string("unseen")])
  }

  // MARK: Metrics

  @Test func metricsCountEveryLimitAndShowTheSettings() throws {
    var config = APIConfig()
    config.maxStations = 1
    let api = try APIFixture(config: config)
    _ = api.post("/v1/register", heartbeat("N0CALL"))
    _ = api.post("/v1/register", heartbeat("W5AGO"))
    let text = Reply(
      api.handler.handle(APIRequest(method: "GET", path: "/metrics", viaMetricsListener: true))
    ).text
    #expect(text.contains("# TYPE aprs_cloud_limit_hits_total counter"))
    #expect(text.contains(#"aprs_cloud_limit_hits_total{limit="maxStations"} 1"#))
    for limit in LimitName.allCases {
      #expect(text.contains(#"aprs_cloud_limit_hits_total{limit="\#(limit.rawValue)"}"#))
      #expect(text.contains(#"aprs_cloud_limit_setting{limit="\#(limit.rawValue)"}"#))
    }
    #expect(text.contains(#"aprs_cloud_limit_setting{limit="avatarBytesTotal"} 268435456"#))
    #expect(text.contains("aprs_cloud_avatar_bytes 0"))
  }
}
