import Foundation
import JSON
import Store
import Synchronization
import TestSupport
import Testing

@testable import API

/// An attacker's probes of the claim proof (docs/design.md "Who may do what"). Each test asserts what the design
/// promises; a failing expectation is a hole.
@Suite struct ClaimAttackTests {
  typealias F = ClaimFixtures

  private static func keyHash(_ key: String) -> String { SHA256.hex(key) }

  private static func phoneRefreshes(_ api: APIFixture) -> Reply {
    api.post(
      "/v1/heartbeat", F.body(["platform": "android", "pushToken": "app-token"]), authorization: nil,
      remoteAddress: F.victim)
  }

  // MARK: - Taking a station in use without its code

  /// A whole-station unregister (the passcode may do it on an unclaimed station), a register and a claim: the
  /// claim should not be first-come on a station someone used a minute ago, and the real phone should be able to
  /// take the station back.
  @Test func unregisterThenClaimTakesAStationInUse() throws {
    let api = try F.stationInUse()
    let wipe = api.post("/v1/unregister", F.body(), authorization: nil, remoteAddress: F.attacker)
    #expect(wipe.status == 200, "\(wipe.text)")
    let mine = api.post(
      "/v1/register", registerBody(["platform": "android", "pushToken": "squatter", "wantHistory": false]),
      authorization: nil, remoteAddress: F.attacker)
    #expect(mine.status == 200, "\(mine.text)")
    let claim = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: F.attacker)
    #expect(claim.status == 200, "\(claim.text)")
    #expect(
      claim["claim"]?.stringValue == "provisional", "first-come claim of a station in use: \(claim.text)")
    let key = try #require(claim["stationKey"]?.stringValue)
    // If it is provisional, the only device a code can reach is the attacker's own.
    if claim["claim"]?.stringValue == "provisional" {
      try F.pushRound(api, keyHash: Self.keyHash(key), codes: [("squatter", 1)])
      let proof = api.post("/v1/claim", F.body(["code": "654321"]), authorization: F.bearer(key))
      #expect(proof.status == 200, "\(proof.text)")
    }
    // The attacker governs: it mutes the station and forwards it.
    let muted = api.post(
      "/v1/settings", F.body(["mutedUntil": api.clock.now + 30 * 86_400_000]),
      authorization: F.bearer(key))
    #expect(muted.status == 200, "\(muted.text)")
    // The real phone comes back (its next heartbeat) and the real user tries to take the station back.
    api.clock.advance(ms: 5 * F.minute)
    #expect(Self.phoneRefreshes(api).status == 200)
    let back = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: F.victim)
    #expect(back.status == 200, "the real user cannot take the station back: \(back.text)")
  }

  /// Ten keyless heartbeats evict the real phone from an unclaimed station (devicesPerStation); the claim is then
  /// provisional, but every device its codes reach is the attacker's, and the proof's seniority is younger than
  /// nothing the station will ever have again.
  @Test func evictingThePhoneThenClaimingTakesAStationInUse() throws {
    let api = try F.stationInUse()
    for index in 0..<10 {
      let heartbeat = api.post(
        "/v1/heartbeat", F.body(["platform": "android", "pushToken": "evictor-\(index)"]),
        authorization: nil, remoteAddress: F.attacker)
      #expect(heartbeat.status == 200, "\(heartbeat.text)")
      api.clock.advance(ms: 1000)
    }
    #expect(
      try api.database.devices(of: "N0CALL-7").contains { $0.token == "app-token" },
      "the real phone was evicted by a stranger's heartbeats")
    let claim = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: F.attacker)
    #expect(claim["claim"]?.stringValue == "provisional", "\(claim.text)")
    let key = try #require(claim["stationKey"]?.stringValue)
    let recipients = try api.database.claimCodeRecipients(
      "N0CALL-7", before: api.clock.now, refreshedSince: 0
    ).map(\.token)
    #expect(recipients.contains("app-token"), "the codes go only to the attacker's devices: \(recipients)")
    try F.pushRound(api, keyHash: Self.keyHash(key), codes: [("evictor-0", 0)])
    let proof = api.post("/v1/claim", F.body(["code": "123456"]), authorization: F.bearer(key))
    #expect(proof.status == 200 && proof["claim"]?.stringValue == "proven", "\(proof.text)")
    api.clock.advance(ms: 5 * F.minute)
    #expect(Self.phoneRefreshes(api).status == 200)
    let back = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: F.victim)
    #expect(back.status == 200, "the real user cannot take the station back: \(back.text)")
  }

  /// A squatter who proved with its own device governs; as owner it may wipe the station (whole-station
  /// unregister with its key) and claim it again at once: the real phone is gone, so no older device remains.
  @Test func aSquatterWhoProvedWipesAndReclaimsSoTheRealPhoneIsNeverOlder() throws {
    let api = try F.stationInUse()
    #expect(
      api.post(
        "/v1/register", registerBody(["platform": "android", "pushToken": "squatter", "wantHistory": false]),
        authorization: nil, remoteAddress: F.attacker
      ).status == 200)
    api.clock.advance(ms: 30 * F.minute)
    let key = try #require(
      api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: F.attacker)["stationKey"]?
        .stringValue)
    try F.pushRound(api, keyHash: Self.keyHash(key), codes: [("app-token", 0), ("squatter", 1)])
    #expect(
      api.post("/v1/claim", F.body(["code": "654321"]), authorization: F.bearer(key)).status == 200)
    // The wipe and the new claim.
    let wipe = api.post(
      "/v1/unregister", F.body(), authorization: F.bearer(key), remoteAddress: F.attacker)
    #expect(wipe.status == 200, "\(wipe.text)")
    #expect(
      api.post(
        "/v1/register", registerBody(["platform": "android", "pushToken": "squatter", "wantHistory": false]),
        authorization: nil, remoteAddress: F.attacker
      ).status == 200)
    let again = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: F.attacker)
    #expect(again.status == 200, "\(again.text)")
    if let second = again["stationKey"]?.stringValue, again["claim"]?.stringValue == "provisional" {
      try F.pushRound(api, keyHash: Self.keyHash(second), codes: [("squatter", 1)])
      #expect(
        api.post("/v1/claim", F.body(["code": "654321"]), authorization: F.bearer(second)).status
          == 200)
    }
    api.clock.advance(ms: 5 * F.minute)
    #expect(Self.phoneRefreshes(api).status == 200)
    let back = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: F.victim)
    #expect(back.status == 200, "the real user cannot take the station back: \(back.text)")
  }

  // MARK: - Keeping the real user from taking the station back

  /// A squatter who proved with its own device asks again and again to push the real user's pending take-back
  /// out: a request whose codes are live is never pushed out by another client's, the squatter's extra requests
  /// are refused, and the real user's code still works.
  @Test func theSquatterPushesOutAndStarvesTheRealUsersTakeBack() throws {
    let api = try F.stationInUse()
    #expect(
      api.post(
        "/v1/register", registerBody(["platform": "android", "pushToken": "squatter", "wantHistory": false]),
        authorization: nil, remoteAddress: F.attacker
      ).status == 200)
    api.clock.advance(ms: 30 * F.minute)
    let key = try #require(
      api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: F.attacker)["stationKey"]?
        .stringValue)
    try F.pushRound(api, keyHash: Self.keyHash(key), codes: [("app-token", 0), ("squatter", 1)])
    #expect(
      api.post("/v1/claim", F.body(["code": "654321"]), authorization: F.bearer(key)).status == 200)

    // The real user asks to take it back (round 2) and gets a code on the phone.
    let request = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: F.victim)
    #expect(request.status == 200, "\(request.text)")
    let owner = try #require(request["stationKey"]?.stringValue)
    try F.pushRound(api, keyHash: Self.keyHash(owner), codes: [("app-token", 0)])
    // The squatter makes take-back requests of its own from several addresses: past the pending cap, refused.
    var refused = 0
    for index in 0..<4 {
      api.clock.advance(ms: 1000)
      let spam = api.post(
        "/v1/claim", F.body(), authorization: nil, remoteAddress: "203.0.113.\(20 + index)")
      if spam.status == 429 {
        refused += 1
        #expect(spam.error?.contains("waiting for their codes") == true, "\(spam.text)")
      }
    }
    #expect(refused >= 2, "the pending cap did not hold")
    // The real user enters the code from its phone.
    let taken = api.post("/v1/claim", F.body(["code": "123456"]), authorization: F.bearer(owner))
    #expect(taken.status == 200, "the real user's pending take-back was pushed out: \(taken.text)")
    // Taken back by the oldest device: the squatter's device is younger, so it cannot take it back in turn.
    let retry = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: "203.0.113.30")
    #expect(retry.status == 409, "\(retry.status) \(retry.text)")
  }

  // MARK: - Code pushes beyond the documented limits

  /// "A station's devices get at most 6 rounds a day, whatever asks": count the rounds any 24 h can hold.
  @Test func roundsOfCodesPerDayAcrossTheWindowsEdge() throws {
    let api = try F.stationInUse()
    var rounds: [Int64] = []
    func ask(_ address: String) {
      let reply = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: address)
      if reply.status == 200 { rounds.append(api.clock.now) }
    }
    ask("203.0.113.1")  // the provisional claim: round 1 opens the window
    api.clock.advance(ms: 24 * 60 * F.minute - 10 * F.minute)
    for index in 0..<5 { ask("203.0.113.\(10 + index)") }
    api.clock.advance(ms: 11 * F.minute)
    for index in 0..<6 { ask("203.0.113.\(30 + index)") }
    let last = rounds.last ?? 0
    let inADay = rounds.filter { $0 > last - 86_400_000 }.count
    #expect(
      inADay <= ClaimRequest.roundsPerStationPerDay, "\(inADay) rounds of code pushes within 11 minutes")
  }

  // MARK: - Guessing beyond the limits

  /// Wrong codes are counted after the code is checked, outside any transaction: guesses that arrive together at
  /// several workers (one handler and connection each, as the responder runs them) are all checked.
  @Test(arguments: 0..<12) func parallelGuessesAreCheckedBeyondFiveARound(_ run: Int) throws {
    let api = try F.stationInUse()
    let key = try #require(
      api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: F.attacker)["stationKey"]?
        .stringValue)
    try F.pushRound(api, keyHash: Self.keyHash(key), codes: [("app-token", 0)])
    let workers = 24
    nonisolated(unsafe) var handlers: [APIHandler] = []
    nonisolated(unsafe) var databases: [Database] = []
    let clock = api.clock
    for _ in 0..<workers {
      let database = try Database(path: api.path, options: StoreOptions())
      databases.append(database)
      handlers.append(APIHandler(database: database, config: APIConfig(), clock: { clock.now }))
    }
    defer { for database in databases { database.close() } }
    let data = try JSONSerialization.data(
      withJSONObject: F.body(["code": "000000"]), options: [.sortedKeys])
    let checked = Mutex<[String]>([])
    nonisolated(unsafe) let frozen = handlers
    DispatchQueue.concurrentPerform(iterations: workers) { index in
      let reply = Reply(
        frozen[index].handle(
          APIRequest(
            method: "POST", path: "/v1/claim", contentType: "application/json", body: Array(data),
            authorization: "Bearer \(key)")))
      checked.withLock { $0.append("\(reply.status) \(reply.error ?? "")") }
    }
    let answers = checked.withLock { $0 }
    let compared = answers.filter { $0.contains("wrong code") }.count
    #expect(
      compared <= ClaimRequest.wrongCodesAllowed, "\(compared) guesses checked in one round: \(answers)")
  }

  // MARK: - What held

  @Test func aProvisionalKeyChangesNothingForTheStationsPhone() throws {
    let api = try F.stationInUse()
    // The app's keyed register set ackMessages false; a provisional key's register sending true.
    let claim = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: F.attacker)
    let key = try #require(claim["stationKey"]?.stringValue)
    for (path, extra) in [
      ("/v1/settings", ["mutedUntil": api.clock.now + 3_600_000] as [String: Any]),
      ("/v1/forward/confirm", ["id": "x", "code": "123456"]), ("/v1/send", ["to": "W5AGO", "text": "x"]),
      ("/v1/export", [:]), ("/v1/audit", [:]),
    ] {
      let refused = api.post(path, F.body(extra), authorization: F.bearer(key))
      #expect(refused.status == 403, "\(path): \(refused.text)")
    }
    let rotate = api.post("/v1/claim", F.body(["rotate": true]), authorization: F.bearer(key))
    #expect(rotate.status == 403, "\(rotate.text)")
    // Keyed registers of 5 tokens by the provisional key do not evict the phone (devicesPerStation 10).
    for index in 0..<5 {
      _ = api.post(
        "/v1/register",
        registerBody(["platform": "android", "pushToken": "p-\(index)", "wantHistory": false]),
        authorization: F.bearer(key), remoteAddress: F.attacker)
    }
    #expect(try api.database.devices(of: "N0CALL-7").contains { $0.token == "app-token" })
    #expect(try api.database.devices(of: "N0CALL-7").allSatisfy { !$0.keyed })
  }

  @Test func theTakeBackRequestersKeyIsAGuestForTheOwnersStation() throws {
    let api = try APIFixture()
    #expect(
      api.post(
        "/v1/register",
        registerBody(["platform": "android", "pushToken": "mine-token", "wantHistory": false]),
        authorization: nil
      ).status == 200)
    api.clock.advance(ms: 5000)
    let owner = try #require(
      api.post("/v1/claim", F.body(), authorization: nil)["stationKey"]?.stringValue)
    api.clock.advance(ms: 60 * F.minute)
    let set = api.post("/v1/settings", F.body(["ackPolicy": "never"]), authorization: F.bearer(owner))
    #expect(set.status == 200, "\(set.text)")
    // A stranger's take-back request (the owner's own phone is older than the first-come claim).
    let request = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: F.attacker)
    #expect(request.status == 200 && request["claim"]?.stringValue == "provisional", "\(request.text)")
    let key = try #require(request["stationKey"]?.stringValue)
    let before = try api.database.stationSettings("N0CALL-7")
    let ack = api.post(
      "/v1/register",
      registerBody([
        "platform": "android", "pushToken": "take-back-1", "wantHistory": false, "ackMessages": true,
      ]),
      authorization: F.bearer(key))
    #expect(ack.status == 200)
    #expect(try api.database.stationSettings("N0CALL-7") == before)
    let read = api.post("/v1/read", F.body(["peer": "*", "upTo": 1]), authorization: F.bearer(key))
    #expect(read.status == 403, "\(read.text)")
    let wipe = api.post("/v1/unregister", F.body(), authorization: F.bearer(key))
    #expect(wipe.status == 403, "\(wipe.text)")
    #expect(try api.database.stationClaim("N0CALL-7").claim?.keyHash == Self.keyHash(owner))
    let avatar = api.post(
      "/v1/heartbeat", F.body(["platform": "android", "pushToken": "take-back-1", "avatarIcon": "/>"]),
      authorization: F.bearer(key))
    #expect(avatar.status == 200)
    #expect(try api.database.station("N0CALL-7")?.avatarHash == "")
    // Its release withdraws only its own request.
    let release = api.post("/v1/claim", F.body(["release": true]), authorization: F.bearer(key))
    #expect(release.status == 200, "\(release.text)")
    #expect(try api.database.stationClaim("N0CALL-7").claim?.keyHash == Self.keyHash(owner))
    // The owner's register and heartbeat budget is its own: strangers spend theirs.
    for index in 0..<70 {
      _ = api.post(
        "/v1/heartbeat", F.body(["platform": "android", "pushToken": "s\(index)"]), authorization: nil,
        remoteAddress: "203.0.113.\(index % 50)")
    }
    let mine = api.post(
      "/v1/heartbeat", F.body(["platform": "android", "pushToken": "mine-token"]),
      authorization: F.bearer(owner))
    #expect(mine.status == 200, "\(mine.text)")
    let phone = api.post(
      "/v1/heartbeat", F.body(["platform": "android", "pushToken": "mine-token"]), authorization: nil)
    #expect(phone.status == 200, "\(phone.text)")
  }

  @Test func aReplacedKeyAndGuessesStayRefused() throws {
    let api = try F.stationInUse()
    #expect(
      api.post(
        "/v1/register", registerBody(["platform": "android", "pushToken": "squatter", "wantHistory": false]),
        authorization: nil, remoteAddress: F.attacker
      ).status == 200)
    api.clock.advance(ms: 30 * F.minute)
    let squatter = try #require(
      api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: F.attacker)["stationKey"]?
        .stringValue)
    try F.pushRound(api, keyHash: Self.keyHash(squatter), codes: [("app-token", 0), ("squatter", 1)])
    #expect(
      api.post("/v1/claim", F.body(["code": "654321"]), authorization: F.bearer(squatter)).status == 200
    )
    let request = api.post("/v1/claim", F.body(), authorization: nil, remoteAddress: F.victim)
    let owner = try #require(request["stationKey"]?.stringValue)
    try F.pushRound(api, keyHash: Self.keyHash(owner), codes: [("app-token", 0)])
    #expect(
      api.post("/v1/claim", F.body(["code": "123456"]), authorization: F.bearer(owner))["replaced"]
        == .bool(true))
    for extra in [
      ["rotate": true], ["release": true], ["resend": true], ["code": "123456"], [:],
    ] as [[String: Any]] {
      let reply = api.post("/v1/claim", F.body(extra), authorization: F.bearer(squatter))
      if extra.isEmpty {
        // A fresh claim with the old key presented: a new key, or a 409, never the station back.
        #expect(reply.status == 409 || reply.status == 401, "\(reply.text)")
      } else {
        #expect(reply.status == 401, "\(extra): \(reply.text)")
      }
    }
    for path in ["/v1/settings", "/v1/unregister", "/v1/read", "/v1/export"] {
      let reply = api.post(path, F.body(), authorization: F.bearer(squatter))
      #expect(reply.status == 401, "\(path): \(reply.text)")
    }
    // A guesser gets 5 tries a round whichever key it spreads them over.
    #expect(try api.database.stationClaim("N0CALL-7").claim?.keyHash == Self.keyHash(owner))
  }

  @Test func malformedClaimsAre4xxNever500() throws {
    let api = try F.stationInUse()
    let key = try #require(api.post("/v1/claim", F.body(), authorization: nil)["stationKey"]?.stringValue)
    let cases: [[String: Any]] = [
      ["code": NSNull()], ["code": ["123456"]], ["code": "１２３４５６"], ["code": "١٢٣٤٥٦"],
      ["code": "12345\u{0}6"], ["code": "1 2 3 4 5 6"], ["code": "------123456"], ["resend": 1],
      ["rotate": NSNull()], ["release": "true"], ["stationKey": 5],
      ["stationKey": String(repeating: "é", count: 43)],
      ["code": "123456", "stationKey": key + "x"], ["ssid": 99],
      ["callsign": String(repeating: "A", count: 5000)],
      ["resend": true, "auth": NSNull()],
    ]
    for extra in cases {
      let reply = api.post("/v1/claim", F.body(extra), authorization: F.bearer(key))
      #expect(reply.status < 500, "\(extra): \(reply.status) \(reply.text)")
      #expect(reply.error != nil || reply.status == 200, "\(extra): \(reply.text)")
    }
    for raw in ["", "[]", "null", "{\"callsign\":\"N0CALL\",\"ssid\":7,\"auth\":\"13023\",\"code\":1e400}"] {
      let reply = Reply(
        api.handler.handle(
          APIRequest(
            method: "POST", path: "/v1/claim", contentType: "application/json", body: Array(raw.utf8),
            authorization: F.bearer(key))))
      #expect(reply.status < 500, "\(raw): \(reply.status) \(reply.text)")
    }
  }
}
