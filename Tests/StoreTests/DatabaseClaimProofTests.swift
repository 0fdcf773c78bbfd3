// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import Foundation
import TestSupport
import Testing

@testable import Store

/// Proving claims in the store (sql/020_claim_proof.sql): when a station counts as in use, the devices a round
/// of codes goes to, and what maintenance lets lapse.
@Suite struct DatabaseClaimProofTests {
  static let hash = String(repeating: "0f", count: 32)
  static let day: Int64 = 86_400_000

  @Test func aStationIsInUseOnceItIsOlderThanTheGraceAndSomethingHappenedWithinTheExpiry() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    let expiry = 7 * Self.day
    #expect(try !database.stationInUse("N0CALL-7", now: 10 * Self.day, expiryMs: expiry), "not stored")
    _ = try register(database, "N0CALL-7", token: "phone-token", now: 10 * Self.day)
    // The claimant's own register moments ago does not make it in use.
    #expect(try !database.stationInUse("N0CALL-7", now: 10 * Self.day + 60_000, expiryMs: expiry))
    #expect(
      try database.stationInUse("N0CALL-7", now: 10 * Self.day + ClaimRequest.graceMs + 1, expiryMs: expiry))
    // A later register moves `registered_at`, never the station's creation time.
    _ = try register(database, "N0CALL-7", token: "phone-token", now: 11 * Self.day)
    #expect(try database.stationInUse("N0CALL-7", now: 11 * Self.day + 1, expiryMs: expiry))
    // Nothing within the expiry: not in use.
    #expect(try !database.stationInUse("N0CALL-7", now: 30 * Self.day, expiryMs: expiry))
  }

  @Test func codesGoToThePushDevicesOlderThanTheSeniorityAndRefreshedWithinTheExpiry() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    _ = try register(database, "N0CALL-7", token: "old-phone", now: 1_000)
    _ = try register(database, "N0CALL-7", token: "stale-phone", now: 2_000)
    _ = try register(database, "N0CALL-7", token: "new-phone", now: 9_000)
    _ = try heartbeat(database, "N0CALL-7", token: "old-phone", now: 8_000)
    let recipients = try database.claimCodeRecipients("N0CALL-7", before: 5_000, refreshedSince: 3_000)
    #expect(recipients.map(\.token) == ["old-phone"])
  }

  @Test func aProvisionalClaimNotProvenWithinADayLapsesAndItsRequestsGo() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    _ = try register(database, "N0CALL-7")
    #expect(
      try database.claimStation("N0CALL-7", keyHash: Self.hash, proof: .provisional, client: "a", now: 1_000)
        == .claimed(at: 1_000, proof: .provisional))
    #expect(try database.claimRequests(of: "N0CALL-7").count == 1)
    #expect(try database.pruneClaimRequests(now: 1_000 + Self.day - 1) == 0)
    #expect(try database.stationClaim("N0CALL-7").claim?.proof == .provisional)
    try database.pruneClaimRequests(now: 2_000 + Self.day)
    #expect(try database.stationClaim("N0CALL-7") == .unclaimed)
    #expect(try database.claimRequests(of: "N0CALL-7").isEmpty)
    #expect(try database.auditTrail(of: "N0CALL-7").first?.action == .lapsed)
  }

  @Test func migrationMakesOlderClaimsUnprovenWithTheirOwnTimeAsSeniority() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try Database(path: dir.database)
    defer { database.close() }
    _ = try database.migrate(upTo: 19)
    // A station and its phone as schema 19 stored them, claimed before claims were proven.
    try database.execute(
      """
      INSERT INTO stations (address, base, ssid, platform, registered_at, heartbeat_at, claim_key_hash, claimed_at,
        claim_refreshed_at)
      VALUES ('N0CALL-7', 'N0CALL', 7, 'android', 500, 500, '\(Self.hash)', 700, 700);
      INSERT INTO devices (token, station, platform, registered_at, refreshed_at) VALUES ('phone', 'N0CALL-7',
        'android', 500, 500);
      """)
    _ = try database.migrate()
    let claim = try #require(try database.stationClaim("N0CALL-7").claim)
    #expect(claim.proof == .unproven && claim.seniority == 700)
    #expect(try database.stationInUse("N0CALL-7", now: 500 + ClaimRequest.graceMs + 1, expiryMs: Self.day))
    // The phone that was there before the claim may take it back.
    #expect(
      try database.claimCodeRecipients("N0CALL-7", before: claim.seniority, refreshedSince: 0).count == 1)
  }

  // MARK: the requests' round trip

  private static let owner = String(repeating: "aa", count: 32)

  /// The hash of another key, `n` telling them apart.
  private static func key(_ n: Int) -> String { String(repeating: String(n % 10), count: 64) }

  /// N0CALL-7 claimed provisionally by ``owner`` at 1_000, with a device registered at 500.
  private static func claimedStation() throws -> (Database, TempDirectory) {
    let directory = try TempDirectory()
    let database = try openStore(directory.database)
    try register(database, "N0CALL-7", token: "phone", now: 500)
    _ = try database.claimStation(
      "N0CALL-7", keyHash: owner, proof: .provisional, client: "owner", now: 1_000)
    return (database, directory)
  }

  private static func request(_ keyHash: String, at time: Int64, client: String = "c") -> ClaimRequest {
    ClaimRequest(station: "n0call-7", keyHash: keyHash, requestedAt: time, seniority: 400, client: client)
  }

  @Test func aRequestIsAddedReplacedAndWithdrawn() throws {
    let (database, directory) = try Self.claimedStation()
    defer { directory.remove() }
    #expect(throws: StoreError.invalidArgument("a key hash is 64 hex characters")) {
      try database.requestClaim(
        ClaimRequest(station: "N0CALL-7", keyHash: "ab", requestedAt: 1, seniority: 1, client: "c"))
    }
    #expect(try database.requestClaim(Self.request(Self.key(1), at: 2_000)))
    #expect(
      try database.requestClaim(Self.request(Self.key(1), at: 3_000, client: "again")),
      "the same key replaces it")
    let stored = try #require(try database.claimRequest("n0call-7", keyHash: Self.key(1)))
    #expect(stored.station == "N0CALL-7" && stored.requestedAt == 3_000 && stored.client == "again")
    #expect(stored.codesDue && stored.codesPushed == 0 && stored.codesExpireAt == nil && stored.wrong == 0)
    // The owner's own provisional request and this one, oldest first.
    #expect(try database.claimRequests(of: "N0CALL-7").map(\.keyHash) == [Self.owner, Self.key(1)])
    #expect(try database.withdrawClaimRequest("n0call-7", keyHash: Self.key(1)))
    #expect(
      try !database.withdrawClaimRequest("N0CALL-7", keyHash: Self.key(1)), "a second withdrawal finds none")
    #expect(try database.claimRequest("N0CALL-7", keyHash: Self.key(1)) == nil)
  }

  @Test func aFullStationTakesANewRequestOnlyInPlaceOfAStaleOne() throws {
    let (database, directory) = try Self.claimedStation()
    defer { directory.remove() }
    // With the owner's, three wait: the station takes no fourth key while every round is due or live.
    #expect(try database.requestClaim(Self.request(Self.key(1), at: 2_000, client: "a")))
    #expect(try database.requestClaim(Self.request(Self.key(2), at: 2_001, client: "b")))
    #expect(try database.claimRequests(of: "N0CALL-7").count == ClaimRequest.pendingPerStation)
    #expect(try !database.requestClaim(Self.request(Self.key(3), at: 2_002, client: "x")))
    #expect(try database.claimRequests(of: "N0CALL-7").count == 3, "nothing was pushed out")
    // The same client asking again with another key replaces its own oldest.
    #expect(try database.requestClaim(Self.request(Self.key(4), at: 2_003, client: "a")))
    #expect(
      Set(try database.claimRequests(of: "N0CALL-7").map(\.keyHash)) == [
        Self.owner, Self.key(2), Self.key(4),
      ])
    // A round that was pushed and expired makes room for anyone.
    let b = try #require(try database.claimRequest("N0CALL-7", keyHash: Self.key(2)))
    #expect(try database.beginClaimCodes(b, codes: [], expiresAt: 2_500))
    #expect(try database.requestClaim(Self.request(Self.key(5), at: 3_000, client: "y")))
    #expect(try database.claimRequest("N0CALL-7", keyHash: Self.key(2)) == nil)
  }

  @Test func aRoundOfCodesIsDueBegunTriedAndResent() throws {
    let (database, directory) = try Self.claimedStation()
    defer { directory.remove() }
    _ = try database.requestClaim(Self.request(Self.key(1), at: 2_000))
    #expect(try database.dueClaimRequests().map(\.keyHash) == [Self.owner, Self.key(1)])
    #expect(try database.dueClaimRequests(limit: 1).map(\.keyHash) == [Self.owner])
    #expect(try database.dueClaimRequests(limit: -1).isEmpty)
    let request = try #require(try database.claimRequest("N0CALL-7", keyHash: Self.key(1)))
    #expect(try database.takeClaimAttempt("N0CALL-7", keyHash: Self.key(1)) == nil, "no codes yet")
    #expect(try !database.resendClaimCodes("N0CALL-7", keyHash: Self.key(1)), "a round is due already")
    // A round that cannot be stored (a hash that is none) leaves the request as it was: still due.
    #expect(throws: StoreError.self) {
      try database.beginClaimCodes(
        request, codes: [ClaimCode(token: "phone", registeredAt: 500, salt: "s", codeHash: "short")],
        expiresAt: 9_000)
    }
    let after = try #require(try database.claimRequest("N0CALL-7", keyHash: Self.key(1)))
    #expect(after.codesDue && after.codesPushed == 0 && after.codesExpireAt == nil)
    #expect(try database.claimCodes("N0CALL-7", keyHash: Self.key(1)).isEmpty)
    #expect(after.wrong == 1, "the try taken before any code counted; a round starts the count again")
    let codes = [
      ClaimCode(token: "phone", registeredAt: 500, salt: "s", codeHash: String(repeating: "c", count: 64))
    ]
    #expect(try database.beginClaimCodes(request, codes: codes, expiresAt: 9_000))
    #expect(try database.claimCodes("n0call-7", keyHash: Self.key(1)) == codes)
    let begun = try #require(try database.claimRequest("N0CALL-7", keyHash: Self.key(1)))
    #expect(!begun.codesDue && begun.codesPushed == 1 && begun.codesExpireAt == 9_000)
    #expect(try database.dueClaimRequests().map(\.keyHash) == [Self.owner])
    // Five tries a round, counted before the code is compared.
    for attempt in 1...ClaimRequest.wrongCodesAllowed {
      let taken = try #require(try database.takeClaimAttempt("N0CALL-7", keyHash: Self.key(1)))
      #expect(taken.attempt == attempt && taken.codes == codes)
    }
    #expect(try database.takeClaimAttempt("N0CALL-7", keyHash: Self.key(1)) == nil, "no try left")
    try database.voidClaimCodes("N0CALL-7", keyHash: Self.key(1))
    #expect(try database.claimCodes("N0CALL-7", keyHash: Self.key(1)).isEmpty)
    // Another round: due again, its tries start again; after three rounds no more.
    for round in 2...ClaimRequest.roundsPerRequest {
      #expect(try database.resendClaimCodes("N0CALL-7", keyHash: Self.key(1)))
      let due = try #require(try database.claimRequest("N0CALL-7", keyHash: Self.key(1)))
      #expect(try database.beginClaimCodes(due, codes: codes, expiresAt: 9_000 + Int64(round)))
      #expect(try database.takeClaimAttempt("N0CALL-7", keyHash: Self.key(1))?.attempt == 1)
    }
    #expect(try !database.resendClaimCodes("N0CALL-7", keyHash: Self.key(1)))
    #expect(try !database.resendClaimCodes("N0CALL-7", keyHash: Self.key(9)), "no such request")
    try database.withdrawClaimRequest("N0CALL-7", keyHash: Self.key(1))
    #expect(try !database.beginClaimCodes(request, codes: codes, expiresAt: 1), "a request gone")
    #expect(try database.claimCodes("N0CALL-7", keyHash: Self.key(1)).isEmpty)
  }

  @Test func theOwnersProofMakesTheClaimProvenAndEndsEveryRequest() throws {
    let (database, directory) = try Self.claimedStation()
    defer { directory.remove() }
    _ = try database.requestClaim(Self.request(Self.key(1), at: 2_000))
    #expect(
      try database.proveClaim(
        "N0CALL-7", keyHash: Self.key(2), token: "phone", seniority: 500, client: "t", now: 3_000)
        == .gone, "no request of that key")
    let outcome = try database.proveClaim(
      "n0call-7", keyHash: Self.owner, token: "phone", seniority: 500, client: "t", now: 3_000)
    #expect(outcome == .proven)
    let claim = try #require(try database.stationClaim("N0CALL-7").claim)
    #expect(claim.keyHash == Self.owner && claim.proof == .proven && claim.seniority == 500)
    #expect(claim.claimedAt == 1_000 && claim.refreshedAt == 3_000 && claim.replacedKeyHash == nil)
    #expect(
      try database.devices(of: "N0CALL-7").first?.keyed == true, "the device that proved it is the owner's")
    #expect(try database.claimRequests(of: "N0CALL-7").isEmpty)
    #expect(try database.auditTrail(of: "N0CALL-7").first?.action == .proven)
  }

  @Test func anotherKeysProofReplacesTheClaimAndItsForwardTargets() throws {
    let (database, directory) = try Self.claimedStation()
    defer { directory.remove() }
    _ = try database.replaceForwardTargets(
      of: "N0CALL-7", with: [ForwardDraft(kind: .ntfy, address: "https://ntfy.example/t")], now: 1_500)
    _ = try database.requestClaim(Self.request(Self.key(1), at: 2_000))
    let outcome = try database.proveClaim(
      "N0CALL-7", keyHash: Self.key(1), token: "phone", seniority: 500, client: "t", now: 3_000)
    #expect(outcome == .replaced(previousKeyHash: Self.owner))
    let claim = try #require(try database.stationClaim("N0CALL-7").claim)
    #expect(claim.keyHash == Self.key(1) && claim.claimedAt == 3_000 && claim.replacedKeyHash == Self.owner)
    #expect(try database.forwardTargets(of: "N0CALL-7").isEmpty, "they were the replaced owner's addresses")
    #expect(
      try database.auditTrail(of: "N0CALL-7").prefix(2).map(\.action).sorted { $0.rawValue < $1.rawValue }
        == [.proven, .replaced].sorted { $0.rawValue < $1.rawValue })
    #expect(
      try database.proveClaim(
        "N0CALL-7", keyHash: Self.key(1), token: "phone", seniority: 500, client: "t", now: 4_000)
        == .gone, "its request is done")
  }

  @Test func theOperatorsApprovalIsFinal() throws {
    let (database, directory) = try Self.claimedStation()
    defer { directory.remove() }
    try register(database, "N0CALL-8")
    #expect(try !database.approveClaim("N0CALL-8", now: 2_000), "not claimed")
    #expect(try !database.approveClaim("NOBODY-1", now: 2_000))
    _ = try database.requestClaim(Self.request(Self.key(1), at: 1_500))
    #expect(try database.approveClaim("n0call-7", now: 2_000))
    let claim = try #require(try database.stationClaim("N0CALL-7").claim)
    #expect(claim.proof == .proven && claim.seniority == 0 && claim.refreshedAt == 2_000)
    #expect(try database.claimRequests(of: "N0CALL-7").isEmpty)
    #expect(try database.auditTrail(of: "N0CALL-7").first?.client == AuditEntry.operatorClient)
  }
}
