// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import Foundation
import TestSupport
import Testing

@testable import Store

/// `Database+Limits.swift`, the store's side of the responder's caps: the avatar byte total kept by triggers,
/// device trimming, the station count and the hit counters.
@Suite struct DatabaseLimitsTests {
  /// The total the triggers keep, and what summing the images says.
  private func totals(_ database: Database) throws -> (kept: Int64, summed: Int64) {
    let summed =
      Int64(
        try database.scalarText("SELECT coalesce(sum(length(CAST(avatar_image AS BLOB))), 0) FROM stations")
          ?? "") ?? -1
    return (try database.storedAvatarBytes(), summed)
  }

  @Test func theAvatarByteTotalFollowsEveryWayAnImageComesAndGoes() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    for address in ["N0CALL-7", "W5AGO", "TESTCALL", "OLD"] { try register(database, address, now: 1_000) }
    #expect(try database.storedAvatarBytes() == 0)
    try database.setAvatar(
      "N0CALL-7", icon: nil, image: String(repeating: "A", count: 100), hash: "h1", now: 2)
    try database.setAvatar(
      "W5AGO", icon: "radio", image: String(repeating: "B", count: 40), hash: "h2", now: 2)
    try database.setAvatar("TESTCALL", icon: "dish", image: nil, hash: "icon:dish", now: 2)
    try database.setAvatar("OLD", icon: nil, image: String(repeating: "C", count: 7), hash: "h3", now: 2)
    #expect(try totals(database) == (147, 147))
    // Replaced by a smaller one, by an icon alone, cleared.
    try database.setAvatar(
      "N0CALL-7", icon: nil, image: String(repeating: "D", count: 10), hash: "h4", now: 3)
    try database.setAvatar("W5AGO", icon: "radio", image: nil, hash: "icon:radio", now: 3)
    #expect(try totals(database) == (17, 17))
    // A station refreshed keeps its image counted once.
    try register(database, "N0CALL-7", now: 4_000)
    #expect(try totals(database) == (17, 17))
    // Unregistered, pruned.
    try database.deleteStation("N0CALL-7")
    #expect(try totals(database) == (7, 7))
    try register(database, "W5AGO", now: 10_000_000)
    try register(database, "TESTCALL", now: 10_000_000)
    let pruned = try database.pruneStations(now: 10_000_000, expiryMs: 1_000_000)
    #expect(pruned.stations == 1)
    #expect(try totals(database) == (0, 0))
    // Rows written by hand (an operator's sqlite3) count as well.
    try database.execute(
      """
      INSERT INTO stations (address, base, ssid, registered_at, heartbeat_at, avatar_image, avatar_hash)
      VALUES ('HAND', 'HAND', 0, 1, 1, 'xyz', 'h5')
      """)
    #expect(try totals(database) == (3, 3))
    // Only the store writes it.
    #expect(throws: StoreError.self) { try database.setMeta("avatar_bytes", "0") }
    #expect(throws: StoreError.self) { try database.setMetaValues([("avatar_bytes", "0")]) }
  }

  @Test func migratingADatabaseWithImagesStartsTheTotalFromThem() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let old = try openStore(dir.database, migrate: false)
    try old.migrate(upTo: 3)
    try old.execute(
      """
      INSERT INTO stations (address, base, ssid, registered_at, heartbeat_at, avatar_image, avatar_hash)
      VALUES ('A', 'A', 0, 1, 1, 'abcd', 'h1'), ('B', 'B', 0, 1, 1, NULL, NULL),
             ('C', 'C', 0, 1, 1, 'ef', 'h2');
      """)
    old.close()
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(try database.schemaVersion() == Database.latestSchemaVersion)
    #expect(try totals(database) == (6, 6))
    try database.setAvatar("B", icon: nil, image: "123456789", hash: "h3", now: 5)
    #expect(try totals(database) == (15, 15))
    #expect(try database.integrityCheck() == "ok")
  }

  @Test func trimmingKeepsTheMostRecentlyRefreshedDevicesAndTheSparedOne() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    for (index, token) in ["old-token-1", "old-token-2", "old-token-3", "old-token-4"].enumerated() {
      try register(database, "N0CALL-7", token: token, now: Int64(1_000 + index))
    }
    try register(database, "W5AGO", token: "other-station", now: 1)
    #expect(try database.trimDevices(of: "n0call-7", keeping: 2, sparing: "old-token-4") == 2)
    #expect(try database.devices(of: "N0CALL-7").map(\.token) == ["old-token-4", "old-token-3"])
    // The clock went back: the spared token stays even though it is the oldest.
    try register(database, "N0CALL-7", token: "new-token", now: 500)
    #expect(try database.trimDevices(of: "N0CALL-7", keeping: 2, sparing: "new-token") == 1)
    #expect(Set(try database.devices(of: "N0CALL-7").map(\.token)) == ["new-token", "old-token-4"])
    #expect(try database.trimDevices(of: "N0CALL-7", keeping: 5, sparing: nil) == 0)
    #expect(try database.trimDevices(of: "N0CALL-7", keeping: 1, sparing: nil) == 1)
    #expect(try database.devices(of: "N0CALL-7").map(\.token) == ["old-token-4"])
    #expect(try database.devices(of: "W5AGO").count == 1)
    #expect(throws: StoreError.self) { try database.trimDevices(of: "W5AGO", keeping: 0, sparing: nil) }
  }

  /// A flood registered within one millisecond: the live devices that came first stay, the flood's own
  /// newcomers go (ties of `registered_at` go by arrival, never the other way).
  @Test func liveDevicesRegisteredInTheSameMillisecondKeepTheirArrivalOrder() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    for index in 0..<12 { try register(database, "N0CALL-7", token: "device-\(index)", now: 5_000) }
    #expect(
      try database.trimDevices(of: "N0CALL-7", keeping: 10, sparing: "device-11", freshSince: 1_000) == 2)
    #expect(
      Set(try database.devices(of: "N0CALL-7").map(\.token))
        == Set((0..<9).map { "device-\($0)" } + ["device-11"]))
  }

  @Test func stationsAreCountedAndHitsAddUp() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(try database.stationCount() == 0)
    #expect(try !database.hasStation("N0CALL-7"))
    try register(database, "N0CALL-7")
    try register(database, "W5AGO")
    #expect(try database.stationCount() == 2)
    #expect(try database.hasStation("n0call-7"))
    #expect(try database.limitStatus() == LimitStatus())
    try database.writeBatch { () throws(StoreError) in
      try database.countLimitHit(.maxStations)
      try database.countLimitHit(.devicesPerStation, 3)
      try database.countLimitHit(.devicesPerStation, 0)
    }
    try database.countLimitHit(.maxStations)
    let status = try database.limitStatus()
    #expect(status[.maxStations] == 2)
    #expect(status[.devicesPerStation] == 3)
    #expect(status[.avatarBytesTotal] == 0)
    #expect(
      try database.metaValues(prefix: "limits.") == [
        "limits.maxStations": "2", "limits.devicesPerStation": "3",
      ])
  }
}
