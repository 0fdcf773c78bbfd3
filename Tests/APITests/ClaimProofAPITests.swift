import API
import Foundation
import JSON
import Store
import TestSupport
import Testing

/// A claim proven where the station is in use (docs/design.md "Who may do what"), at handler level: a squatter's
/// claim of a station in use is provisional and changes nothing for the station's devices; a code pushed to a
/// device the station had before proves a claim; a proven claim by an older device takes the station back; a
/// station nobody used is claimed first-come. The push sender's round of codes is stood in for by writing its
/// hashes (the vectors are HMAC-SHA256 computed with Python's `hmac`, an implementation independent of ours).
@Suite struct ClaimProofAPITests {
  typealias F = ClaimFixtures

  private static func keyHash(_ api: APIFixture) throws -> String {
    try #require(try api.database.stationClaim("N0CALL-7").claim?.keyHash)
  }

  @Test func aClaimOfAStationInUseIsProvisionalAndChangesNothingForItsDevices() throws {
    let api = try F.stationInUse()
    let reply = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: "203.0.113.9")
    #expect(reply.status == 200, "\(reply.text)")
    #expect(reply["claim"]?.stringValue == "provisional")
    #expect(reply["codeDevices"]?.intValue == 1)
    let key = try #require(reply["stationKey"]?.stringValue)
    let claim = try #require(try api.database.stationClaim("N0CALL-7").claim)
    #expect(claim.proof == .provisional)

    // What would change the station for its devices needs a proven claim: the 403 says how to prove it.
    for (path, extra) in [
      ("/v1/settings", ["ackPolicy": "never"] as [String: Any]), ("/v1/settings", [:]),
      ("/v1/send", ["to": "W5AGO", "text": "hi"]), ("/v1/audit", [:]), ("/v1/export", [:]),
    ] {
      let refused = api.post(path, F.body(extra), authorization: F.bearer(key))
      #expect(refused.status == 403, "\(path): \(refused.text)")
      #expect(refused.error?.contains("provisional") == true, "\(path): \(refused.text)")
      #expect(refused.error?.contains("POST /v1/claim with code") == true)
    }
    // The key's own devices register (as keyless ones: nothing it brings counts as the owner's yet).
    let keyed = api.post(
      "/v1/register", registerBody(["platform": "android", "pushToken": "squatter", "wantHistory": false]),
      authorization: F.bearer(key))
    #expect(keyed.status == 200, "\(keyed.text)")
    #expect(try api.database.devices(of: "N0CALL-7").allSatisfy { !$0.keyed })
    #expect(try api.database.stationClaim("N0CALL-7").claim?.refreshedAt == claim.refreshedAt)

    // For the station's keyless callers it is as unclaimed: the app's ackMessages still sets the policy, a
    // stranger's three keyless heartbeats evict nobody, and keylessDevices cannot refuse anyone.
    let app = api.post(
      "/v1/register",
      registerBody([
        "platform": "android", "pushToken": "app-token", "wantHistory": false, "ackMessages": true,
      ]),
      authorization: nil)
    #expect(app.status == 200)
    #expect(try api.database.stationSettings("N0CALL-7")?.ackPolicy == .server)
    for token in ["stranger-1", "stranger-2", "stranger-3"] {
      let heartbeat = api.post(
        "/v1/heartbeat", F.body(["platform": "android", "pushToken": token]), authorization: nil)
      #expect(heartbeat.status == 200, "\(heartbeat.text)")
    }
    #expect(try api.database.devices(of: "N0CALL-7").contains { $0.token == "app-token" })
    // A whole-station unregister by the key is refused as a keyless one would be on a station nobody governs:
    // the old protocol's passcode rule, never the claim's.
    #expect(try api.database.stationClaim("N0CALL-7").claim?.proof == .provisional)
  }

  @Test func theCodePushedToTheStationsOwnDeviceProvesTheClaim() throws {
    let api = try F.stationInUse()
    let reply = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: "198.51.100.7")
    let key = try #require(reply["stationKey"]?.stringValue)
    let hash = try Self.keyHash(api)
    // Before the round: the codes are on their way.
    let early = api.post("/v1/claim", F.body(["code": "123456"]), authorization: F.bearer(key))
    #expect(early.status == 409, "\(early.text)")
    try F.pushRound(api, keyHash: hash, codes: [("app-token", 0)])

    let wrong = api.post("/v1/claim", F.body(["code": "000000"]), authorization: F.bearer(key))
    #expect(wrong.status == 403)
    #expect(wrong.error == "code: wrong code; 4 tries left")
    let proven = api.post("/v1/claim", F.body(["code": "123 456"]), authorization: F.bearer(key))
    #expect(proven.status == 200, "\(proven.text)")
    #expect(proven["claim"]?.stringValue == "proven")
    #expect(proven["stationKey"] == nil)
    let claim = try #require(try api.database.stationClaim("N0CALL-7").claim)
    #expect(claim.proof == .proven)
    // The device that proved it is the owner's now, and its registration time is the claim's seniority.
    let app = try #require(try api.database.devices(of: "N0CALL-7").first { $0.token == "app-token" })
    #expect(app.keyed)
    #expect(claim.seniority == app.registeredAt)
    #expect(try api.database.claimRequests(of: "N0CALL-7").isEmpty)
    #expect(
      api.post("/v1/settings", F.body(["ackPolicy": "server"]), authorization: F.bearer(key)).status
        == 200)
    // Proving again is answered as proven; the audit has the proof, and only this claim's entries.
    let again = api.post("/v1/claim", F.body(["code": "123456"]), authorization: F.bearer(key))
    #expect(again.status == 200 && again["claim"]?.stringValue == "proven")
    let trail = api.post("/v1/audit", F.body(), authorization: F.bearer(key))
    let actions = trail["entries"]?.arrayValue?.compactMap { entry -> String? in
      if case .object(let object) = entry { object["action"]?.stringValue } else { nil }
    }
    #expect(actions == ["settings", "proven", "claimed"])
  }

  @Test func wrongCodesAreLimitedAndNewCodesAreAskedFor() throws {
    let api = try F.stationInUse()
    let key = try #require(api.post("/v1/claim", F.body(), authorization: nil)["stationKey"]?.stringValue)
    let hash = try Self.keyHash(api)
    try F.pushRound(api, keyHash: hash, codes: [("app-token", 0)])
    for left in (0..<ClaimRequest.wrongCodesAllowed).reversed() {
      let wrong = api.post("/v1/claim", F.body(["code": "999999"]), authorization: F.bearer(key))
      #expect(wrong.status == 403)
      #expect(wrong.error?.contains(left > 0 ? "\(left) tr" : "no longer work") == true, "\(wrong.text)")
    }
    // The right code no longer works: the round is void.
    let late = api.post("/v1/claim", F.body(["code": "123456"]), authorization: F.bearer(key))
    #expect(late.status == 403)
    #expect(late.error?.contains("resend:true") == true)
    // A new round: asked for, pushed, and its code works; an expired round's code does not.
    #expect(
      api.post("/v1/claim", F.body(["resend": true]), authorization: F.bearer(key))["resent"]
        == .bool(true))
    #expect(try api.database.claimRequest("N0CALL-7", keyHash: hash)?.codesDue == true)
    // A resend while the round is on its way is refused.
    #expect(api.post("/v1/claim", F.body(["resend": true]), authorization: F.bearer(key)).status == 409)
    try F.pushRound(api, keyHash: hash, codes: [("app-token", 1)])
    api.clock.advance(ms: ClaimRequest.codeLifetimeMs + 1)
    let expired = api.post("/v1/claim", F.body(["code": "654321"]), authorization: F.bearer(key))
    #expect(expired.status == 403, "\(expired.text)")
    #expect(expired.error?.contains("expired") == true)
    // The third round is the last.
    #expect(api.post("/v1/claim", F.body(["resend": true]), authorization: F.bearer(key)).status == 200)
    try F.pushRound(api, keyHash: hash, codes: [("app-token", 1)])
    #expect(api.post("/v1/claim", F.body(["resend": true]), authorization: F.bearer(key)).status == 409)
    #expect(
      api.post("/v1/claim", F.body(["code": "654321"]), authorization: F.bearer(key)).status == 200)
  }

  @Test func aDeviceOlderThanTheClaimTakesTheStationBack() throws {
    let api = try F.stationInUse()
    // The squatter registers a device of its own first, so that a code reaches it too, and proves with it.
    #expect(
      api.post(
        "/v1/register", registerBody(["platform": "android", "pushToken": "squatter", "wantHistory": false]),
        authorization: nil
      ).status == 200)
    api.clock.advance(ms: 30 * F.minute)
    let squatter = try #require(
      api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: "203.0.113.9")["stationKey"]?
        .stringValue)
    try F.pushRound(api, keyHash: try Self.keyHash(api), codes: [("app-token", 0), ("squatter", 1)])
    #expect(
      api.post("/v1/claim", F.body(["code": "654321"]), authorization: F.bearer(squatter)).status == 200
    )
    #expect(
      api.post(
        "/v1/settings", F.body(["mutedUntil": api.clock.now + 3_600_000]),
        authorization: F.bearer(squatter)
      ).status == 200)

    // The real user, from the web client: its phone is older than the squatter's device, so it can take the station
    // back. The request's key works for nothing but its proof yet.
    let request = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: "198.51.100.7")
    #expect(request.status == 200, "\(request.text)")
    #expect(request["claim"]?.stringValue == "provisional")
    #expect(request["codeDevices"]?.intValue == 1)
    let owner = try #require(request["stationKey"]?.stringValue)
    let pending = api.post("/v1/settings", F.body(), authorization: F.bearer(owner))
    #expect(pending.status == 403 && pending.error?.contains("provisional") == true, "\(pending.text)")
    let requests = try api.database.claimRequests(of: "N0CALL-7")
    #expect(requests.count == 1)
    try F.pushRound(api, keyHash: requests[0].keyHash, codes: [("app-token", 0)])
    let taken = api.post("/v1/claim", F.body(["code": "123456"]), authorization: F.bearer(owner))
    #expect(taken.status == 200, "\(taken.text)")
    #expect(taken["replaced"] == .bool(true))

    // The squatter's key is refused, and says why; its device is keyless now; the audit records the take-back.
    let refused = api.post("/v1/settings", F.body(), authorization: F.bearer(squatter))
    #expect(refused.status == 401)
    #expect(refused.error?.contains("taken back") == true, "\(refused.text)")
    #expect(try api.database.devices(of: "N0CALL-7").first { $0.token == "squatter" }?.keyed == false)
    #expect(
      api.post("/v1/settings", F.body(["mutedUntil": 0]), authorization: F.bearer(owner)).status == 200)
    let trail = try api.database.auditTrail(of: "N0CALL-7").map(\.action)
    #expect(trail.prefix(3) == [.settings, .replaced, .proven])
    // The owner's audit starts at its own claim: the squatter's address is not in it.
    let audit = api.post("/v1/audit", F.body(), authorization: F.bearer(owner))
    #expect(audit.status == 200)
    #expect(!audit.text.contains("203.0.113.9"), "\(audit.text)")
    // The squatter cannot take it back in turn: no device is older than the owner's phone.
    let again = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: "203.0.113.9")
    #expect(again.status == 409, "\(again.text)")
  }

  @Test func aStationNobodyUsedIsClaimedFirstComeAndKeptAgainstYoungerDevices() throws {
    let api = try APIFixture()
    // The web client registers, then claims at once: its own register does not make the station in use.
    #expect(
      api.post(
        "/v1/register",
        registerBody(["platform": "android", "pushToken": "mine-token", "wantHistory": false]),
        authorization: nil
      ).status == 200)
    api.clock.advance(ms: 5000)
    let first = api.post("/v1/claim", F.body(), authorization: nil)
    #expect(first["claim"]?.stringValue == "proven", "\(first.text)")
    #expect(first["codeDevices"] == nil)
    // A device registered after the claim cannot take the station: the claim is a 409, as before.
    api.clock.advance(ms: 60 * F.minute)
    let stranger = api.post(
      "/v1/register",
      registerBody(["platform": "android", "pushToken": "stranger-token", "wantHistory": false]),
      authorization: nil)
    #expect(stranger.status == 200, "\(stranger.text)")
    api.clock.advance(ms: 60 * F.minute)
    // The device registered 5 s before the claim is older than it, and may still prove a claim of its owner.
    let retry = api.post("/v1/claim", F.body(), authorization: nil)
    #expect(retry.status == 200 && retry["codeDevices"]?.intValue == 1, "\(retry.text)")
    #expect(try api.database.approveClaim("N0CALL-7", now: api.clock.now))
    // Approved by the operator: nobody can take it back.
    #expect(try api.database.claimRequests(of: "N0CALL-7").isEmpty)
    let refused = api.post("/v1/claim", F.body(), authorization: nil)
    #expect(refused.status == 409, "\(refused.text)")
  }

  /// The old protocol lets the passcode wipe a station nobody governs: wiping one in use and claiming it at once
  /// is still a claim of a station in use, and the app's phone registering again can take it back.
  @Test func wipingAStationInUseAndClaimingItAtOnceIsNoFirstComeClaim() throws {
    let api = try F.stationInUse()
    let wiped = api.post("/v1/unregister", F.body(), authorization: nil, remoteAddress: "203.0.113.9")
    #expect(wiped.status == 200, "\(wiped.text)")
    #expect(try api.database.stationClaim("N0CALL-7") == .unregistered)
    let squat = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: "203.0.113.9")
    #expect(squat.status == 200, "\(squat.text)")
    #expect(squat["claim"]?.stringValue == "provisional", "\(squat.text)")
    #expect(squat["codeDevices"]?.intValue == 0)
    let squatter = try #require(squat["stationKey"]?.stringValue)
    #expect(api.post("/v1/settings", F.body(), authorization: F.bearer(squatter)).status == 403)
    // A station registered again keeps its first creation time.
    api.clock.advance(ms: 1000)
    #expect(
      api.post(
        "/v1/register",
        registerBody(["platform": "android", "pushToken": "app-token", "wantHistory": false]),
        authorization: nil
      ).status == 200)
    #expect(
      try api.database.stationInUse("N0CALL-7", now: api.clock.now, expiryMs: APIConfig().stationExpiryMs))
  }

  @Test func malformedProofsAreClearErrors() throws {
    let api = try F.stationInUse()
    let key = try #require(api.post("/v1/claim", F.body(), authorization: nil)["stationKey"]?.stringValue)
    let cases: [([String: Any], String?, Int, String)] = [
      (["code": "12ab56"], key, 400, "code: a claim code is the 6 digits"),
      (["code": "1234567"], key, 400, "code: a claim code is the 6 digits"),
      (["code": ""], key, 400, "code: a claim code is the 6 digits"),
      (["code": 123_456], key, 400, "code"),
      (["code": "123456"], nil, 400, "code: proving a claim needs the stationKey"),
      (["code": "123456", "rotate": true], key, 400, "cannot go together"),
      (["resend": true, "release": true], key, 400, "cannot go together"),
      (["resend": "yes"], key, 400, "resend"),
      (["code": String(repeating: "1", count: 40)], key, 400, "code"),
    ]
    for (extra, bearer, status, message) in cases {
      let reply = api.post("/v1/claim", F.body(extra), authorization: bearer.map(F.bearer))
      #expect(reply.status == status, "\(extra): \(reply.text)")
      #expect(reply.error?.contains(message) == true, "\(extra): \(reply.text)")
    }
    // A key of no claim and no request: 401.
    let stranger = api.post(
      "/v1/claim", F.body(["code": "123456"]),
      authorization: F.bearer(String(repeating: "A", count: 43)))
    #expect(stranger.status == 401, "\(stranger.text)")
    // The provisional claimant gives the claim up: the station is unclaimed again.
    #expect(
      api.post("/v1/claim", F.body(["release": true]), authorization: F.bearer(key)).status == 200)
    #expect(try api.database.stationClaim("N0CALL-7") == .unclaimed)
  }
}
