import API
import APRS
import Foundation
import JSON
import Store
import TestSupport
import Testing

/// Another SSID claimed with the owner's key (`POST /v1/claim` with `sameKey`, docs/design.md "ACKs in the name of
/// another SSID"): the one way an SSID becomes "a station of the same owner", so `ackSsids` may ACK for it.
@Suite struct SiblingClaimTests {
  static func body(ssid: Int, _ extra: [String: Any] = [:]) -> [String: Any] {
    ["callsign": "N0CALL", "ssid": ssid, "auth": "13023"].merging(extra) { $1 }
  }

  /// A fixture whose N0CALL-7 is claimed (first-come), with its key.
  static func owner() throws -> (APIFixture, String) {
    let api = try APIFixture()
    let reply = api.post("/v1/claim", body(ssid: 7), authorization: nil)
    #expect(reply.status == 200 && reply["claim"]?.stringValue == "proven", "\(reply.text)")
    return (api, try #require(reply["stationKey"]?.stringValue))
  }

  @Test func theOwnersKeyClaimsAnotherSSIDAndItsACKsThenGoOut() throws {
    let (api, key) = try Self.owner()
    // N0CALL-7 collects N0CALL-9 and would ACK for it: not yet, N0CALL-9 is nobody's here.
    let settings = api.post(
      "/v1/settings", Self.body(ssid: 7, ["ssids": [9], "ackSsids": [9]]), authorization: "Bearer \(key)")
    #expect(settings.status == 200, "\(settings.text)")
    #expect(try api.database.stationsCollectingOtherSSIDs(heardSince: 0).first?.ackSsids == .empty)

    let sibling = api.post("/v1/claim", Self.body(ssid: 9, ["sameKey": true]), authorization: "Bearer \(key)")
    #expect(sibling.status == 200, "\(sibling.text)")
    #expect(sibling["stationKey"]?.stringValue == key, "the same key, not a new one")
    #expect(sibling["claim"]?.stringValue == "proven")
    let claims = try [
      api.database.stationClaim("N0CALL-7").claim, api.database.stationClaim("N0CALL-9").claim,
    ]
    #expect(claims[0]?.keyHash == claims[1]?.keyHash && claims[1] != nil)
    #expect(try api.database.stationsCollectingOtherSSIDs(heardSince: 0).first?.ackSsids == SSIDSet([9]))
    // The key now works for N0CALL-9's owner's endpoints too.
    #expect(api.post("/v1/settings", Self.body(ssid: 9), authorization: "Bearer \(key)").status == 200)
  }

  @Test func sameKeyIsRefusedWithoutTheOwnersKeyOrOnAClaimedStation() throws {
    let (api, key) = try Self.owner()
    let none = api.post("/v1/claim", Self.body(ssid: 9, ["sameKey": true]), authorization: nil)
    #expect(
      none.status == 400 && none.error?.hasPrefix("sameKey needs the station key") == true, "\(none.text)")
    // The key of another call's claim is no key of N0CALL's.
    let other = api.post(
      "/v1/claim", ["callsign": "W5AGO", "ssid": 1, "auth": "\(Passcode.compute("W5AGO"))"],
      authorization: nil)
    let otherKey = try #require(other["stationKey"]?.stringValue)
    let foreign = api.post(
      "/v1/claim", Self.body(ssid: 9, ["sameKey": true]), authorization: "Bearer \(otherKey)")
    #expect(foreign.status == 403 && foreign.error?.contains("claims no other SSID of N0CALL") == true)
    // An SSID claimed already stays its claimant's, whoever's key comes.
    let taken = api.post("/v1/claim", Self.body(ssid: 3), authorization: nil)
    #expect(taken.status == 200)
    let again = api.post("/v1/claim", Self.body(ssid: 3, ["sameKey": true]), authorization: "Bearer \(key)")
    #expect(again.status == 409, "\(again.text)")
    // One action at a time.
    let both = api.post(
      "/v1/claim", Self.body(ssid: 9, ["sameKey": true, "rotate": true]), authorization: "Bearer \(key)")
    #expect(both.status == 400)
    #expect(try api.database.stationClaim("N0CALL-9").claim == nil)
  }

  @Test func aClaimWithAKeyButWithoutSameKeyStillGetsAKeyOfItsOwn() throws {
    let (api, key) = try Self.owner()
    let reply = api.post("/v1/claim", Self.body(ssid: 9), authorization: "Bearer \(key)")
    #expect(reply.status == 200, "\(reply.text)")
    #expect(reply["stationKey"]?.stringValue != key)
  }

  @Test func aProvisionalClaimsKeyClaimsNoSibling() throws {
    let api = try APIFixture()
    // N0CALL-7 in use by the app's phone for a while: its claim is provisional.
    #expect(api.post("/v1/register", registerBody(["wantHistory": false])).status == 200)
    api.clock.advance(ms: 11 * 60_000)
    let provisional = api.post("/v1/claim", Self.body(ssid: 7), authorization: nil)
    #expect(provisional["claim"]?.stringValue == "provisional", "\(provisional.text)")
    let key = try #require(provisional["stationKey"]?.stringValue)
    let sibling = api.post("/v1/claim", Self.body(ssid: 9, ["sameKey": true]), authorization: "Bearer \(key)")
    #expect(sibling.status == 403, "\(sibling.text)")
  }
}
