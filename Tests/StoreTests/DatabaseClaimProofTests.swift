// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import Foundation
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
}
