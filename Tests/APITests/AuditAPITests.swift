import API
import Foundation
import JSON
import Store
import Testing

/// `POST /v1/audit`: the owner reads the station's audit trail (who changed what from where), newest first.
@Suite struct AuditAPITests {
  @Test func theOwnerReadsWhatChangedFromWhereNewestFirst() throws {
    let fixture = try APIFixture()
    #expect(fixture.post("/v1/register", registerBody(["wantHistory": false])).status == 200)
    let key = fixture.claim(APIFixture.settingsIdentity)
    fixture.clock.advance(ms: 60_000)
    let changed = fixture.post(
      "/v1/settings", APIFixture.settingsIdentity.merging(["blocked": ["KJ7BAD"], "mutedUntil": 5]) { $1 },
      authorization: "Bearer \(key)", remoteAddress: "2001:db8:1:2::7")
    #expect(changed.status == 200, "\(changed.text)")
    let reply = fixture.post("/v1/audit", APIFixture.settingsIdentity)
    #expect(reply.status == 200, "\(reply.text)")
    guard case .array(let entries)? = reply["entries"] else {
      Issue.record("no entries: \(reply.text)")
      return
    }
    let objects = entries.compactMap { if case .object(let entry) = $0 { entry } else { nil } }
    #expect(objects.map { $0["action"]?.stringValue } == ["settings", "claimed"])
    #expect(objects.first?.keys == ["at", "action", "client", "detail"])
    #expect(objects.first?["client"]?.stringValue == "2001:db8:1:2::/64")
    #expect(objects.first?["detail"]?.stringValue == "blocked, mutedUntil")
    #expect(objects.first?["at"]?.intValue == fixture.clock.now)
  }

  @Test func onlyTheOwnerReadsIt() throws {
    let fixture = try APIFixture()
    #expect(fixture.post("/v1/register", registerBody(["wantHistory": false])).status == 200)
    let unclaimed = fixture.post("/v1/audit", APIFixture.settingsIdentity)
    #expect(unclaimed.status == 403 && unclaimed.error?.contains("/v1/claim") == true, "\(unclaimed.text)")
    let key = fixture.claim(APIFixture.settingsIdentity)
    fixture.stationKey = nil
    #expect(fixture.post("/v1/audit", APIFixture.settingsIdentity).status == 403)
    #expect(
      fixture.post(
        "/v1/audit", APIFixture.settingsIdentity, authorization: "Bearer " + String(key.reversed())
      )
      .status == 401)
    #expect(
      fixture.post("/v1/audit", ["callsign": "N0CALL", "ssid": 3, "auth": "13023"], authorization: nil).status
        == 404)
    #expect(
      fixture.post("/v1/audit", APIFixture.settingsIdentity, authorization: "Bearer \(key)", method: "GET")
        .status
        == 405)
  }
}
