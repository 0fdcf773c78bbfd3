import API
import Foundation
import JSON
import Store
import TestSupport
import Testing

/// Owned stations at handler level (docs/protocol.md "Owned stations"): the claim and its key, what the key guards,
/// the owner's devices beside a keyless pool, register's `ackMessages`, the audit trail, and a claim's lapse.
@Suite struct ClaimAPITests {
  nonisolated(unsafe) static let identity: [String: Any] = ["callsign": "N0CALL", "ssid": 7, "auth": "13023"]

  private static func body(_ extra: [String: Any] = [:]) -> [String: Any] {
    identity.merging(extra) { $1 }
  }

  private static func bearer(_ key: String) -> String { "Bearer \(key)" }

  /// A fixture whose N0CALL-7 was registered by the app (keyless) and then claimed; the key is returned, not kept
  /// by the fixture, so every request says for itself whether it carries it.
  private static func claimed() throws -> (APIFixture, String) {
    let api = try APIFixture()
    #expect(api.post("/v1/register", registerBody(["wantHistory": false])).status == 200)
    let reply = api.post("/v1/claim", body(), authorization: nil, remoteAddress: "2001:db8:1:2::5")
    #expect(reply.status == 200, "\(reply.text)")
    return (api, try #require(reply["stationKey"]?.stringValue))
  }

  @Test func aClaimAnswersAKeyOnceAndTheStoreKeepsOnlyItsHash() throws {
    let api = try APIFixture()
    api.clock.advance(ms: 5)
    // Not registered yet: the claim registers it.
    let reply = api.post("/v1/claim", Self.body(), authorization: nil)
    #expect(reply.status == 200, "\(reply.text)")
    #expect(reply.object?.keys.sorted() == ["claim", "claimedAt", "stationKey"])
    // Nobody used the station: first-come, proven at once.
    #expect(reply["claim"]?.stringValue == "proven")
    let key = try #require(reply["stationKey"]?.stringValue)
    #expect(key.utf8.count == 43)
    #expect(
      key.utf8.allSatisfy {
        $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0)
          || (0x61...0x7A).contains($0)
      })
    #expect(reply["claimedAt"]?.intValue == api.clock.now)
    #expect(try api.database.station("N0CALL-7") != nil)
    let claim = try #require(try api.database.stationClaim("N0CALL-7").claim)
    #expect(claim.keyHash != key && claim.keyHash.utf8.count == 64)
    // A second claim, with or without the key, is a 409 and changes nothing.
    for authorization in [nil, Self.bearer(key)] {
      let again = api.post("/v1/claim", Self.body(), authorization: authorization)
      #expect(again.status == 409, "\(again.text)")
      #expect(again.error?.contains("N0CALL-7 is claimed already") == true, "\(again.text)")
    }
    #expect(try api.database.stationClaim("N0CALL-7").claim == claim)
    // Two claims never hand out the same key.
    let other = try APIFixture()
    let second = other.post("/v1/claim", Self.body(), authorization: nil)
    #expect(second["stationKey"]?.stringValue != key)
    // A wrong passcode claims nothing.
    #expect(api.post("/v1/claim", Self.body(["auth": "1"]), authorization: nil).status == 401)
  }

  @Test func rotatingNeedsTheKeyAndTheOldKeyStopsWorking() throws {
    let (api, key) = try Self.claimed()
    let claimedAt = try #require(try api.database.stationClaim("N0CALL-7").claim?.claimedAt)
    #expect(api.post("/v1/claim", Self.body(["rotate": true]), authorization: nil).status == 403)
    api.clock.advance(ms: 1000)
    let rotated = api.post("/v1/claim", Self.body(["rotate": true]), authorization: Self.bearer(key))
    #expect(rotated.status == 200, "\(rotated.text)")
    let newKey = try #require(rotated["stationKey"]?.stringValue)
    #expect(newKey != key && rotated["claimedAt"]?.intValue == claimedAt)
    let old = api.post("/v1/settings", Self.body(), authorization: Self.bearer(key))
    #expect(old.status == 401, "\(old.text)")
    #expect(old.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
    #expect(api.post("/v1/settings", Self.body(), authorization: Self.bearer(newKey)).status == 200)
    // The key also works as a body field.
    #expect(api.post("/v1/settings", Self.body(["stationKey": newKey]), authorization: nil).status == 200)
  }

  @Test func everyGuardedCallWithoutTheKeyIs403AndChangesNothing() throws {
    let (api, key) = try Self.claimed()
    try api.database.publishListenerStatus(
      ListenerStatus(state: "online", connected: true, verified: true, receiveOnly: false))
    let before = try api.database.stationSettings("N0CALL-7")
    let calls: [(String, [String: Any])] = [
      ("/v1/settings", [:]),
      ("/v1/settings", ["blocked": ["KJ7ABC"], "mutedUntil": 9_000_000_000_000, "ackPolicy": "server"]),
      ("/v1/send", ["to": "KJ7ABC-7", "text": "hi"]),
      ("/v1/unregister", [:]),
    ]
    for (path, fields) in calls {
      let reply = api.post(path, Self.body(fields), authorization: nil)
      #expect(reply.status == 403, "\(path): \(reply.text)")
      #expect(reply.error?.contains("N0CALL-7 is claimed") == true, "\(path): \(reply.text)")
    }
    #expect(try api.database.stationSettings("N0CALL-7") == before)
    #expect(try api.database.station("N0CALL-7") != nil)
    #expect(try api.database.sendStatus().inFlight == 0)
    // What the app does still works with the passcode alone, and answers as before.
    let register = api.post("/v1/register", registerBody(["ackMessages": true]))
    #expect(
      register.status == 200
        && register.object?.keys.sorted() == ["avatarHash", "avatars", "messages", "serverTime"])
    #expect(
      try api.database.stationSettings("N0CALL-7")?.ackPolicy == .never, "a keyless ackMessages is ignored")
    #expect(api.post("/v1/heartbeat", registerBody()).status == 200)
    #expect(api.post("/v1/sync", Self.body(["since": 0])).status == 200)
    #expect(api.post("/v1/avatars", Self.body(["stations": ["KJ7ABC"]])).status == 200)
    // With the key every one of them works.
    let owner = Self.bearer(key)
    #expect(
      api.post("/v1/settings", Self.body(["mutedUntil": 5]), authorization: owner)["mutedUntil"]?.intValue
        == 5)
    #expect(
      api.post("/v1/send", Self.body(["to": "KJ7ABC-7", "text": "hi"]), authorization: owner).status == 200)
    #expect(api.post("/v1/unregister", Self.body(), authorization: owner).status == 200)
    #expect(try api.database.station("N0CALL-7") == nil)
  }

  @Test func anUnclaimedStationNeedsAClaimForSettingsAndSending() throws {
    let api = try APIFixture()
    #expect(api.post("/v1/register", registerBody(["wantHistory": false])).status == 200)
    for path in ["/v1/settings", "/v1/send"] {
      let reply = api.post(path, Self.body(["to": "KJ7ABC-7", "text": "hi"]), authorization: nil)
      #expect(reply.status == 403, "\(reply.text)")
      #expect(reply.error?.contains("POST /v1/claim") == true, "\(reply.text)")
    }
    // The old protocol's whole-station unregister still works on an unclaimed station.
    #expect(api.post("/v1/unregister", Self.body(), authorization: nil).status == 200)
    #expect(try api.database.station("N0CALL-7") == nil)
  }

  @Test func aWrongOrMalformedKeyIs401AndTwoDifferentKeysA400() throws {
    let (api, key) = try Self.claimed()
    let wrong = String(repeating: "A", count: 43)
    for (authorization, field) in [
      (Self.bearer(wrong), nil), (nil, wrong), (Self.bearer("short"), nil), (nil, "not a key at all!"),
      ("Bearer " + String(repeating: "é", count: 43), nil),
    ] as [(String?, String?)] {
      var fields = Self.body()
      if let field { fields["stationKey"] = field }
      for path in ["/v1/register", "/v1/sync", "/v1/settings", "/v1/claim"] where path != "/v1/claim" {
        let reply = api.post(path, fields, authorization: authorization)
        #expect(reply.status == 401, "\(path) \(authorization ?? field ?? ""): \(reply.text)")
        #expect(reply.error != nil)
      }
    }
    let both = api.post("/v1/settings", Self.body(["stationKey": wrong]), authorization: Self.bearer(key))
    #expect(both.status == 400 && both.error?.contains("different keys") == true, "\(both.text)")
    #expect(api.post("/v1/settings", Self.body(["stationKey": 5]), authorization: nil).status == 400)
    // Another scheme (a proxy's Basic credentials) is not a station key.
    #expect(api.post("/v1/sync", Self.body(), authorization: "Basic dXNlcjpwYXNz").status == 200)
    // The key of one station is no key of another.
    let other = api.post(
      "/v1/register", ["callsign": "W5AGO", "auth": "10896", "wantHistory": false],
      authorization: Self.bearer(key))
    #expect(other.status == 401, "\(other.text)")
  }

  @Test func keylessHeartbeatsNeverPushOutTheOwnersDevice() throws {
    let (api, key) = try Self.claimed()
    let owner = Self.bearer(key)
    #expect(
      api.post("/v1/register", registerBody(["pushToken": "owner-phone-token"]), authorization: owner).status
        == 200)
    for index in 0..<12 {
      api.clock.advance(ms: 1000)
      let reply = api.post("/v1/heartbeat", registerBody(["pushToken": "stranger-\(index)"]))
      #expect(reply.status == 200, "\(reply.text)")
    }
    let devices = try api.database.devices(of: "N0CALL-7").map(\.token)
    #expect(devices.contains("owner-phone-token"))
    #expect(devices.count == 1 + 3, "\(devices)")
    #expect(devices.contains("stranger-11") && !devices.contains("stranger-8"))
    #expect(
      try api.database.limitStatus()[.keylessDevicesPerStation] == 10,
      "the app's keyless token and nine strangers")
    #expect(try api.database.limitStatus()[.devicesPerStation] == 0)
    // The owner may refuse keyless devices altogether; sync-only refreshes still keep the station alive.
    #expect(
      api.post("/v1/settings", Self.body(["keylessDevices": "deny"]), authorization: owner).status == 200)
    let refused = api.post("/v1/heartbeat", registerBody(["pushToken": "stranger-x"]))
    #expect(refused.status == 403 && refused.error?.contains("keylessDevices") == true, "\(refused.text)")
    #expect(api.post("/v1/heartbeat", Self.body()).status == 200)
    #expect(
      api.post("/v1/heartbeat", registerBody(["pushToken": "owner-tablet"]), authorization: owner).status
        == 200)
    #expect(
      api.post("/v1/settings", Self.body(["keylessDevices": "maybe"]), authorization: owner).status == 400)
  }

  @Test func registersAckMessagesAppliesOnlyWhenTheAppsSwitchMoved() throws {
    let api = try APIFixture()
    // The app registers with ackMessages:false on every launch.
    #expect(api.post("/v1/register", registerBody(["ackMessages": false])).status == 200)
    let key = api.claim(Self.identity)
    #expect(
      api.post("/v1/settings", Self.body(["ackPolicy": "device"]))["ackPolicy"]?.stringValue == "device")
    for _ in 0..<3 {
      #expect(api.post("/v1/register", registerBody(["ackMessages": false])).status == 200)
      #expect(try api.database.stationSettings("N0CALL-7")?.ackPolicy == .device)
    }
    // The switch moved (with the key): it applies, and is on record.
    #expect(api.post("/v1/register", registerBody(["ackMessages": true])).status == 200)
    #expect(try api.database.stationSettings("N0CALL-7")?.ackPolicy == .server)
    #expect(try api.database.auditTrail(of: "N0CALL-7").first?.action == .ackPolicy)
    // Keyless, the same move changes nothing.
    api.stationKey = nil
    #expect(api.post("/v1/register", registerBody(["ackMessages": false])).status == 200)
    #expect(try api.database.stationSettings("N0CALL-7")?.ackPolicy == .server)
    api.stationKey = key
    #expect(api.post("/v1/register", registerBody(["ackMessages": false])).status == 200)
    #expect(try api.database.stationSettings("N0CALL-7")?.ackPolicy == .never)
  }

  @Test func theAuditTrailRecordsWhoChangedWhatFromWhere() throws {
    let (api, key) = try Self.claimed()
    let owner = Self.bearer(key)
    _ = api.post(
      "/v1/settings", Self.body(["blocked": ["KJ7ABC"], "mutedUntil": 7]), authorization: owner,
      remoteAddress: "203.0.113.9")
    _ = api.post(
      "/v1/settings", Self.body(["blocked": ["KJ7ABC"]]), authorization: owner, remoteAddress: "203.0.113.9")
    let rotated = api.post(
      "/v1/claim", Self.body(["rotate": true]), authorization: owner, remoteAddress: "198.51.100.1")
    let newKey = try #require(rotated["stationKey"]?.stringValue)
    _ = api.post(
      "/v1/unregister", Self.body(), authorization: Self.bearer(newKey), remoteAddress: "198.51.100.1")
    let trail = try api.database.auditTrail(of: "N0CALL-7")
    #expect(trail.map(\.action) == [.unregistered, .rotated, .settings, .claimed], "\(trail)")
    #expect(trail.map(\.client) == ["198.51.100.1", "198.51.100.1", "203.0.113.9", "2001:db8:1:2::/64"])
    #expect(trail[2].detail == "blocked, mutedUntil", "an unchanged setting is no entry")
  }

  @Test func aClaimLapsesWithoutARequestMadeWithTheKeyWithinTheExpiry() throws {
    let (api, key) = try Self.claimed()
    let expiry = APIConfig().stationExpiryMs
    api.clock.advance(ms: expiry - 1000)
    // A keyless heartbeat keeps the station but not the claim; a keyed one keeps the claim.
    #expect(api.post("/v1/heartbeat", Self.body()).status == 200)
    #expect(try api.database.lapseClaims(now: api.clock.now, expiryMs: expiry) == 0)
    api.clock.advance(ms: 2000)
    #expect(try api.database.lapseClaims(now: api.clock.now, expiryMs: expiry) == 1)
    #expect(try api.database.stationClaim("N0CALL-7") == .unclaimed)
    #expect(try api.database.auditTrail(of: "N0CALL-7").first?.action == .lapsed)
    #expect(api.post("/v1/settings", Self.body(), authorization: Self.bearer(key)).status == 401)
    // Unclaimed again: anyone may claim it now.
    #expect(api.post("/v1/claim", Self.body(), authorization: nil).status == 200)
    let second = try Self.claimed()
    second.0.clock.advance(ms: expiry - 1000)
    #expect(second.0.post("/v1/heartbeat", Self.body(), authorization: Self.bearer(second.1)).status == 200)
    second.0.clock.advance(ms: 2000)
    #expect(try second.0.database.lapseClaims(now: second.0.clock.now, expiryMs: expiry) == 0)
  }
}

/// What a review as an attacker found and the fixes hold: keyless reads earn no ACKs, claims are rate limited, the
/// owner may release, `deny` spares the devices already there, and any request with the key keeps a claim alive.
@Suite struct ClaimHardeningTests {
  nonisolated(unsafe) static let identity: [String: Any] = ["callsign": "N0CALL", "ssid": 7, "auth": "13023"]

  private static func body(_ extra: [String: Any] = [:]) -> [String: Any] {
    identity.merging(extra) { $1 }
  }

  @Test func aKeylessSyncOfAClaimedStationMarksNothingPulledAndLeavesTheCursor() throws {
    let api = try APIFixture()
    #expect(api.post("/v1/register", registerBody(["wantHistory": false])).status == 200)
    let key = api.claim(Self.identity)
    #expect(api.post("/v1/settings", Self.body(["ackPolicy": "device"])).status == 200)
    // A device-policy message: its ACK waits for a pull.
    guard
      case .stored(let id, _)? = try api.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "hi", msgno: "42")
        .first
    else { throw TestFailure("not stored") }
    try api.database.recordDeviceAcks([
      PendingDeviceAck(messageID: id, station: "N0CALL-7", key: "k42", line: "ack42\r\n")
    ])
    api.stationKey = nil
    for wait in [0, 1] {
      let stranger = api.post("/v1/sync", Self.body(["since": 0, "wait": wait]))
      #expect(stranger.messages.count == 1, "a keyless sync still reads, as the shipping app does")
    }
    #expect(
      try api.database.takePulledDeviceAcks(now: api.clock.now, minIntervalMs: 30_000).lines.isEmpty,
      "a stranger's read earned an ACK")
    #expect(try api.database.station("N0CALL-7")?.lastSyncCursor == 0)
    api.stationKey = key
    #expect(api.post("/v1/sync", Self.body(["since": 0])).messages.count == 1)
    #expect(
      try api.database.takePulledDeviceAcks(now: api.clock.now, minIntervalMs: 30_000).lines == ["ack42\r\n"])
    #expect(try api.database.station("N0CALL-7")?.lastSyncCursor != 0)
  }

  @Test func claimsArePerAddressAndPerNetworkLimited() throws {
    var config = APIConfig()
    config.claimsPerAddressPerHour = 2
    config.claimsPerNetworkPerHour = 3
    let api = try APIFixture(config: config)
    func claim(_ call: String, from address: String) -> Reply {
      api.post(
        "/v1/claim", ["callsign": call, "auth": SendMannersTests.passcode(call)], authorization: nil,
        remoteAddress: address)
    }
    #expect(claim("W1AW", from: "203.0.113.1").status == 200)
    #expect(claim("K1ABC", from: "203.0.113.1").status == 200)
    let third = claim("N1XYZ", from: "203.0.113.1")
    #expect(third.status == 429 && third.error?.contains("claims from this address") == true, "\(third.text)")
    #expect(third.header("Retry-After") != nil)
    #expect(claim("N1XYZ", from: "203.0.113.2").status == 200, "another address of the /24")
    let network = claim("W2XYZ", from: "203.0.113.3")
    #expect(network.status == 429 && network.error?.contains("203.0.113.0/24") == true, "\(network.text)")
    #expect(try api.database.stationClaim("W2XYZ") == .unclaimed || api.database.station("W2XYZ") == nil)
    #expect(try api.database.limitStatus()[.claimsPerAddressPerHour] == 1)
    #expect(try api.database.limitStatus()[.claimsPerNetworkPerHour] == 1)
  }

  @Test func theOwnerReleasesTheClaimWithTheKeyOnly() throws {
    let api = try APIFixture()
    #expect(api.post("/v1/register", registerBody(["wantHistory": false])).status == 200)
    let key = api.claim(Self.identity)
    api.stationKey = nil
    #expect(api.post("/v1/claim", Self.body(["release": true])).status == 403)
    #expect(
      api.post("/v1/claim", Self.body(["release": true, "rotate": true]), authorization: "Bearer \(key)")
        .status == 400)
    let released = api.post(
      "/v1/claim", ["callsign": "N0CALL", "ssid": 7, "release": true], authorization: "Bearer \(key)")
    #expect(released.status == 200 && released["released"] == .bool(true), "\(released.text)")
    #expect(try api.database.stationClaim("N0CALL-7") == .unclaimed)
    #expect(try api.database.auditTrail(of: "N0CALL-7").first?.action == .released)
    #expect(api.post("/v1/claim", Self.body()).status == 200, "anyone may claim it again")
  }

  @Test func denyRefusesNewKeylessTokensButSparesTheOnesAlreadyThere() throws {
    let api = try APIFixture()
    // The app's phone was there before the claim.
    #expect(api.post("/v1/register", registerBody(["pushToken": "apps-phone"])).status == 200)
    let key = api.claim(Self.identity)
    #expect(api.post("/v1/settings", Self.body(["keylessDevices": "deny"])).status == 200)
    api.stationKey = nil
    #expect(api.post("/v1/heartbeat", registerBody(["pushToken": "apps-phone"])).status == 200)
    #expect(api.post("/v1/heartbeat", registerBody(["pushToken": "a-new-one"])).status == 403)
    api.stationKey = key
    #expect(api.post("/v1/heartbeat", registerBody(["pushToken": "a-new-one"])).status == 200)
  }

  @Test func anyRequestWithTheKeyKeepsTheClaimAlive() throws {
    let api = try APIFixture()
    #expect(api.post("/v1/register", registerBody(["wantHistory": false])).status == 200)
    api.claim(Self.identity)
    let expiry = APIConfig().stationExpiryMs
    for _ in 0..<3 {
      api.clock.advance(ms: expiry / 2)
      #expect(api.post("/v1/sync", Self.body(["since": 0])).status == 200)
    }
    #expect(try api.database.lapseClaims(now: api.clock.now, expiryMs: expiry) == 0)
    #expect(try api.database.stationClaim("N0CALL-7").claim?.refreshedAt == api.clock.now)
    // Within the hour it writes nothing more.
    api.clock.advance(ms: 60_000)
    #expect(api.post("/v1/sync", Self.body(["since": 0])).status == 200)
    #expect(try api.database.stationClaim("N0CALL-7").claim?.refreshedAt == api.clock.now - 60_000)
  }
}
