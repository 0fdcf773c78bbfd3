// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import Testing

@testable import Store

/// `Database+ClaimReach.swift`: whom a governing claim governs (the keyless devices registered before it).
@Suite struct DatabaseClaimReachTests {
  private static let keyHash = String(repeating: "ef", count: 32)

  @Test func noClaimGovernsAnUnclaimedOrUnknownStation() throws {
    let (database, directory) = try temporaryStore()
    defer { directory.remove() }
    #expect(try database.claimReach("NOBODY-1") == nil)
    try register(database, "N0CALL-7", token: "early")
    #expect(try database.claimReach("N0CALL-7") == nil)
  }

  @Test func theReachCountsTheKeylessDevicesRegisteredBeforeTheClaim() throws {
    let (database, directory) = try temporaryStore()
    defer { directory.remove() }
    try register(database, "N0CALL-7", token: "early-1", ackMessages: false, now: 100)
    try register(database, "N0CALL-7", token: "early-2", ackMessages: nil, now: 200)
    #expect(
      try database.claimStation("N0CALL-7", keyHash: Self.keyHash, client: "t", now: 1_000)
        == .claimed(at: 1_000, proof: .proven))
    try register(database, "N0CALL-7", token: "later", ackMessages: true, now: 2_000)
    var keyed = stationUpsert(
      "N0CALL-7", platform: .android, token: "owner", ackMessages: true, isRegistration: true)
    keyed.keyed = true
    _ = try database.upsertStation(keyed, now: 3_000)
    #expect(
      try database.claimReach("n0call-7")
        == ClaimReach(claimedAt: 1_000, earlierDevices: 2, earlierWantAcks: false),
      "neither the later device nor the keyed one, and only theirs decides the ACKs")
    // One earlier device asking for ACKs is enough.
    try register(database, "N0CALL-7", token: "early-2", ackMessages: true, now: 4_000)
    #expect(
      try database.claimReach("N0CALL-7")
        == ClaimReach(claimedAt: 1_000, earlierDevices: 2, earlierWantAcks: true))
  }

  @Test func aProvisionalClaimGovernsNobody() throws {
    let (database, directory) = try temporaryStore()
    defer { directory.remove() }
    try register(database, "N0CALL-7", token: "early", now: 100)
    _ = try database.claimStation(
      "N0CALL-7", keyHash: Self.keyHash, proof: .provisional, client: "t", now: 1_000)
    #expect(try database.claimReach("N0CALL-7") == nil)
  }

  @Test func theReachesOfManyLeaveTheUngovernedOut() throws {
    let (database, directory) = try temporaryStore()
    defer { directory.remove() }
    try register(database, "N0CALL-7", token: "early", now: 100)
    try register(database, "N0CALL-8", token: "other", now: 100)
    _ = try database.claimStation("N0CALL-7", keyHash: Self.keyHash, client: "t", now: 1_000)
    #expect(try database.claimReaches(of: []).isEmpty)
    let reaches = try database.claimReaches(of: ["N0CALL-7", "N0CALL-8", "NOBODY-1", "N0CALL-7"])
    #expect(reaches == ["N0CALL-7": ClaimReach(claimedAt: 1_000, earlierDevices: 1, earlierWantAcks: false)])
  }
}
