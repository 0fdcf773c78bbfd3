import Foundation
import JSON
import Testing

@testable import API
@testable import Store

/// The operator's bans at the API: every `/v1` call but `/v1/info` from a banned block, or for a banned call's
/// station, is 403 and changes nothing.
@Suite struct BanAPITests {
  nonisolated(unsafe) static let identity: [String: Any] = [
    "callsign": "N0CALL", "ssid": 7, "auth": "13023", "wantHistory": false, "since": 0,
  ]

  @Test func aBannedAddressBlockGets403OnEveryCallButInfo() throws {
    let fixture = try APIFixture()
    let block = try #require(BanTarget(parsing: "2001:db8:1:2::/64"))
    try fixture.database.ban(Ban(target: block, reason: "abuse", createdAt: 0))
    for path in ["/v1/register", "/v1/sync", "/v1/heartbeat", "/v1/claim", "/v1/settings", "/v1/unregister"] {
      let reply = fixture.post(path, Self.identity, authorization: nil, remoteAddress: "2001:db8:1:2::beef")
      #expect(reply.status == 403, "\(path): \(reply.text)")
      #expect(reply.text.contains("2001:db8:1:2::/64 are banned"), "\(reply.text)")
    }
    #expect(try fixture.database.stationCount() == 0, "nothing was registered")
    let info = fixture.post("/v1/info", [:], authorization: nil, remoteAddress: "2001:db8:1:2::beef")
    #expect(info.status == 200)
    // Outside the block: served.
    let other = fixture.post(
      "/v1/register", Self.identity, authorization: nil, remoteAddress: "2001:db8:1:3::1")
    #expect(other.status == 200, "\(other.text)")
    // Lifted: served again.
    try fixture.database.unban(block)
    let again = fixture.post(
      "/v1/sync", Self.identity, authorization: nil, remoteAddress: "2001:db8:1:2::beef")
    #expect(again.status == 200, "\(again.text)")
  }

  @Test func aBannedCallsStationsGet403UntilTheBanEnds() throws {
    let fixture = try APIFixture()
    let now = fixture.clock.now
    try fixture.database.ban(Ban(target: .call("N0CALL"), createdAt: now, until: now + 1_000_000))
    let reply = fixture.post("/v1/register", Self.identity, authorization: nil, remoteAddress: "203.0.113.9")
    #expect(reply.status == 403 && reply.text.contains("N0CALL-7 is banned"), "\(reply.text)")
    fixture.clock.advance(ms: 1_000_000)
    let later = fixture.post("/v1/register", Self.identity, authorization: nil, remoteAddress: "203.0.113.9")
    #expect(later.status == 200, "\(later.text)")
  }
}
