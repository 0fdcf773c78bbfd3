// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import Foundation
import TestSupport
import Testing

@testable import Store

/// Claims, keyed devices and the audit trail in the store (sql/010_station_claims.sql).
@Suite struct DatabaseClaimsTests {
  static let hash = String(repeating: "0f", count: 32)
  static let other = String(repeating: "e1", count: 32)

  @Test func ofTwoClaimsOnlyTheFirstWinsAndTheStationMustExist() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(try database.claimStation("N0CALL-7", keyHash: Self.hash, client: "a", now: 5) == .unregistered)
    _ = try register(database, "N0CALL-7")
    #expect(try database.stationClaim("N0CALL-7") == .unclaimed)
    #expect(
      try database.claimStation("n0call-7", keyHash: Self.hash, client: "a", now: 5)
        == .claimed(at: 5, proof: .proven))
    #expect(
      try database.claimStation("N0CALL-7", keyHash: Self.other, client: "b", now: 6) == .alreadyClaimed)
    #expect(
      try database.stationClaim("N0CALL-7")
        == .claimed(StationClaim(keyHash: Self.hash, claimedAt: 5, refreshedAt: 5)))
    #expect(throws: StoreError.self) {
      try database.claimStation("N0CALL-7", keyHash: "short", client: "a", now: 7)
    }
    // A rotation needs the stored hash; the claim time stays.
    #expect(try !database.rotateStationKey("N0CALL-7", from: Self.other, to: Self.hash, client: "b", now: 8))
    #expect(try database.rotateStationKey("N0CALL-7", from: Self.hash, to: Self.other, client: "a", now: 9))
    #expect(
      try database.stationClaim("N0CALL-7").claim
        == StationClaim(keyHash: Self.other, claimedAt: 5, refreshedAt: 9))
    #expect(try database.auditTrail(of: "N0CALL-7").map(\.action) == [.rotated, .claimed])
  }

  @Test func aReleaseMakesTheOwnersDevicesKeylessAndAKeyedRefreshKeepsTheClaim() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    _ = try register(database, "N0CALL-7")
    _ = try database.claimStation("N0CALL-7", keyHash: Self.hash, client: "a", now: 10)
    var upsert = stationUpsert(
      "N0CALL-7", platform: .android, token: "owner", ackMessages: nil, isRegistration: false)
    upsert.keyed = true
    _ = try database.upsertStation(upsert, now: 50)
    // A keyless refresh of the owner's token leaves it the owner's.
    upsert.keyed = false
    _ = try database.upsertStation(upsert, now: 60)
    #expect(try database.devices(of: "N0CALL-7").first { $0.token == "owner" }?.keyed == true)
    #expect(try database.stationClaim("N0CALL-7").claim?.refreshedAt == 50)
    // Keyless trims never touch the owner's devices.
    for index in 0..<5 {
      _ = try database.upsertStation(
        stationUpsert(
          "N0CALL-7", platform: .android, token: "guest-\(index)", ackMessages: nil, isRegistration: false),
        now: 70 + Int64(index))
    }
    #expect(try database.trimDevices(of: "N0CALL-7", keeping: 2, sparing: "guest-4", keyed: false) == 3)
    #expect(try Set(database.devices(of: "N0CALL-7").map(\.token)) == ["owner", "guest-3", "guest-4"])
    // The owner's forward targets go with the claim: the next owner's messages never reach them.
    _ = try database.replaceForwardTargets(
      of: "N0CALL-7",
      with: [
        ForwardDraft(kind: .webhook, address: "https://hooks.example.org/a", secret: "s3cret-s3cret-s3cret")
      ],
      now: 90)
    #expect(try database.forwardTargets(of: "N0CALL-7").count == 1)
    #expect(try database.releaseClaim("N0CALL-7", now: 100))
    #expect(try database.forwardTargets(of: "N0CALL-7").isEmpty)
    #expect(try !database.releaseClaim("N0CALL-7", now: 101))
    #expect(try database.devices(of: "N0CALL-7").allSatisfy { !$0.keyed })
    #expect(
      try database.auditTrail(of: "N0CALL-7").first
        == AuditEntry(
          station: "N0CALL-7", at: 100, action: .released, client: AuditEntry.operatorClient))
  }

  @Test func theTrailKeepsTheNewestHundredAndOutlivesTheStation() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    _ = try register(database, "N0CALL-7")
    for index in 0..<130 {
      try database.recordAudit(
        AuditEntry(station: "N0CALL-7", at: Int64(index), action: .settings, client: "c", detail: "#\(index)")
      )
    }
    let trail = try database.auditTrail(of: "N0CALL-7")
    #expect(trail.count == AuditEntry.keptPerStation)
    #expect(trail.first?.detail == "#129" && trail.last?.detail == "#30")
    #expect(try database.unregisterStation("N0CALL-7", client: "d", now: 500))
    #expect(try database.auditTrail(of: "N0CALL-7").first?.action == .unregistered)
    // A year later maintenance drops what is older than a year.
    #expect(try database.pruneAuditTrail(now: 500 + AuditEntry.retentionMs) == 99)
    #expect(try database.auditTrail(of: "N0CALL-7").map(\.at) == [500])
  }

  /// The upgrade to schema 10: register's last `ackMessages` starts from what each policy stands for, a
  /// `device` policy unknown (so the app's next register only records its value), and nothing is claimed.
  @Test func theUpgradeStartsRegistersAckMessagesFromThePolicy() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let old = try Database(path: dir.database)
    #expect(try old.migrate(upTo: 9) == 9)
    try old.execute(
      """
      INSERT INTO stations (address, base, ssid, platform, ack_messages, ack_policy, registered_at, heartbeat_at)
        VALUES ('A-1', 'A', 1, NULL, 1, 'server', 1, 2), ('B-1', 'B', 1, NULL, 0, 'device', 1, 2),
               ('C-1', 'C', 1, NULL, 0, 'never', 1, 2);
      """)
    old.close()
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(
      try database.scalarText(
        "SELECT group_concat(coalesce(register_ack_messages, 'null'), ',') FROM stations ORDER BY address")
        == "1,null,0")
    #expect(try database.stationClaim("A-1") == .unclaimed)
    // The app's register with ackMessages:false leaves the device policy alone.
    _ = try database.upsertStation(
      stationUpsert("B-1", platform: nil, token: nil, ackMessages: false, isRegistration: true), now: 10)
    #expect(try database.stationSettings("B-1")?.ackPolicy == .device)
    #expect(try database.integrityCheck() == "ok")
  }
}
