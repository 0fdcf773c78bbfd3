import API
import Foundation
import JSON
import Store
import TestSupport
import Testing

/// Budgets strangers cannot spend (docs/design.md "Who may do what"): the owner's keyed requests and the refreshes
/// of a token the station already has are counted apart from the keyless budget a stranger can use up; keyless
/// registers of existing stations are also counted per client address across stations; a keyless caller cannot
/// change a claimed station's avatar.
@Suite struct KeylessBudgetTests {
  nonisolated(unsafe) static let identity: [String: Any] = ["callsign": "N0CALL", "ssid": 7, "auth": "13023"]

  private static func body(_ extra: [String: Any] = [:]) -> [String: Any] {
    identity.merging(extra) { $1 }
  }

  @Test func theOwnerAndTheAppRefreshWhileAStrangerSpendsTheKeylessBudget() throws {
    var config = APIConfig()
    config.registrationsPerHour = 5
    config.heartbeatsPerHour = 5
    let api = try APIFixture(config: config)
    // The app's phone, keyless, then the owner's claim (first-come) and its keyed phone.
    #expect(
      api.post(
        "/v1/register", registerBody(["pushToken": "app-phone-token", "wantHistory": false]),
        authorization: nil
      ).status == 200)
    let key = try #require(api.post("/v1/claim", Self.body(), authorization: nil)["stationKey"]?.stringValue)
    #expect(
      api.post(
        "/v1/register", registerBody(["pushToken": "owner-phone-token", "wantHistory": false]),
        authorization: "Bearer \(key)"
      ).status == 200)
    // A stranger spends the station's keyless registers and heartbeats (without a token: none of the station's
    // devices is pushed out here; the app's register and the claim's own counted two registers already).
    var registers = 0
    while registers < 10,
      api.post(
        "/v1/register", Self.body(["wantHistory": false]), authorization: nil, remoteAddress: "203.0.113.9"
      )
      .status == 200
    {
      registers += 1
    }
    #expect(registers == 3)
    var heartbeats = 0
    while heartbeats < 10,
      api.post("/v1/heartbeat", Self.body(), authorization: nil, remoteAddress: "203.0.113.9").status == 200
    {
      heartbeats += 1
    }
    #expect(heartbeats == 5)
    let spent = api.post(
      "/v1/register", Self.body(["wantHistory": false]), authorization: nil, remoteAddress: "203.0.113.9")
    #expect(spent.status == 429 && spent.error?.contains("too many registrations") == true, "\(spent.text)")
    // The owner, with the key, and the app's known token, without it, are not locked out.
    for _ in 0..<3 {
      #expect(
        api.post(
          "/v1/register", registerBody(["pushToken": "owner-phone-token", "wantHistory": false]),
          authorization: "Bearer \(key)"
        ).status == 200)
      #expect(
        api.post(
          "/v1/heartbeat", Self.body(["platform": "android", "pushToken": "owner-phone-token"]),
          authorization: "Bearer \(key)"
        )
        .status == 200)
      #expect(
        api.post(
          "/v1/heartbeat", Self.body(["platform": "android", "pushToken": "app-phone-token"]),
          authorization: nil
        )
        .status == 200)
    }
    // A known token has a budget of its own, which it can spend itself.
    for _ in 0..<2 {
      _ = api.post(
        "/v1/heartbeat", Self.body(["platform": "android", "pushToken": "app-phone-token"]),
        authorization: nil)
    }
    #expect(
      api.post(
        "/v1/heartbeat", Self.body(["platform": "android", "pushToken": "app-phone-token"]),
        authorization: nil
      )
      .status == 429)
  }

  @Test func oneClientCannotSpendEveryStationsKeylessBudget() throws {
    var config = APIConfig()
    config.registrationsPerHour = 3
    let api = try APIFixture(config: config)
    let calls = ["N0CALL", "W5AGO", "KJ7ABC", "OH7LZB", "TESTCALL", "SUCHCALL", "MUCHSIGN", "WOW"]
    for call in calls {
      let reply = api.post(
        "/v1/register",
        ["callsign": call, "ssid": 0, "auth": SendMannersTests.passcode(call), "wantHistory": false],
        authorization: nil, remoteAddress: "203.0.113.9")
      #expect(reply.status == 200, "\(reply.text)")
    }
    // Each station's own budget takes 2 more (its first register counted there too); the address takes 4 × 3
    // keyless registers of existing stations, then is refused naming the address, while the last stations' own
    // budgets still have room, which another address uses.
    var answered = 0
    var refusal = ""
    for call in calls {
      for _ in 0..<2 {
        let reply = api.post(
          "/v1/register",
          ["callsign": call, "ssid": 0, "auth": SendMannersTests.passcode(call), "wantHistory": false],
          authorization: nil, remoteAddress: "203.0.113.9")
        if reply.status == 200 { answered += 1 } else { refusal = reply.error ?? reply.text }
      }
    }
    #expect(answered == 12)
    #expect(refusal.contains("keyless registrations from this address"), "\(refusal)")
    let other = api.post(
      "/v1/register",
      ["callsign": "WOW", "ssid": 0, "auth": SendMannersTests.passcode("WOW"), "wantHistory": false],
      authorization: nil, remoteAddress: "198.51.100.7")
    #expect(other.status == 200, "\(other.text)")
  }

  @Test func aStrangersKeylessTokensNeverEvictADeviceTheStationHadBeforeItsClaim() throws {
    let api = try APIFixture()
    #expect(
      api.post(
        "/v1/register", registerBody(["pushToken": "app-phone-token", "wantHistory": false]),
        authorization: nil
      ).status == 200)
    api.clock.advance(ms: 1000)
    #expect(api.post("/v1/claim", Self.body(), authorization: nil)["claim"]?.stringValue == "proven")
    api.clock.advance(ms: 1000)
    for index in 0..<6 {
      let stranger = api.post(
        "/v1/heartbeat", Self.body(["platform": "android", "pushToken": "stranger-token-\(index)"]),
        authorization: nil, remoteAddress: "203.0.113.9")
      #expect(stranger.status == 200, "\(stranger.text)")
      api.clock.advance(ms: 1000)
    }
    let tokens = try api.database.devices(of: "N0CALL-7").map(\.token)
    #expect(tokens.contains("app-phone-token"), "\(tokens)")
    // The strangers' tokens share the keyless pool among themselves.
    #expect(tokens.filter { $0.hasPrefix("stranger") }.count == APIConfig().keylessDevicesPerStation)
  }

  @Test func aKeylessCallerCannotChangeAClaimedStationsAvatar() throws {
    let api = try APIFixture()
    let key = try #require(api.post("/v1/claim", Self.body(), authorization: nil)["stationKey"]?.stringValue)
    let set = api.post(
      "/v1/heartbeat", Self.body(["avatarUpdate": true, "avatarIcon": "radio"]),
      authorization: "Bearer \(key)")
    #expect(set["avatarHash"]?.stringValue == "icon:radio", "\(set.text)")
    for change in [
      ["avatarUpdate": true, "avatarIcon": "car"], ["avatarUpdate": true, "avatarIcon": NSNull()],
    ] {
      let refused = api.post("/v1/heartbeat", Self.body(change as [String: Any]), authorization: nil)
      #expect(refused.status == 200)
      #expect(refused["avatarHash"]?.stringValue == "icon:radio")
      #expect(
        refused["avatarError"]?.stringValue?.contains("needs its station key") == true, "\(refused.text)")
    }
  }
}
