import Foundation
import TestSupport
import Testing

@testable import Store

/// The station count `maxStations` is held against: a running count in `meta` kept by the triggers of
/// `sql/011_station_count.sql`, read in one row however many stations there are.
@Suite struct StationCountTests {
  /// The count the triggers keep, and what counting the table says.
  private func counts(_ database: Database) throws -> (kept: Int, counted: Int) {
    let kept = Int(try database.scalarText("SELECT value FROM meta WHERE key = 'station_count'") ?? "") ?? -1
    return (kept, try count(database, "stations"))
  }

  @Test func theCountFollowsEveryWayAStationComesAndGoes() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(try counts(database) == (0, 0))
    #expect(try database.stationCount() == 0)
    // Registered, heartbeat-created, refreshed (an upsert that updates counts nothing), with devices.
    try register(database, "N0CALL-7", token: "token-1", now: 1_000)
    try heartbeat(database, "W5AGO", now: 1_000)
    try register(database, "N0CALL-7", token: "token-2", now: 2_000)
    try heartbeat(database, "n0call-7", now: 2_000)
    try register(database, "TESTCALL", ackMessages: true, now: 1_000)
    try database.execute(
      "UPDATE stations SET platform = 'ios', heartbeat_at = 2500 WHERE address = 'TESTCALL'")
    try database.setAvatar("W5AGO", icon: "radio", image: nil, hash: "icon:radio", now: 3_000)
    #expect(try counts(database) == (3, 3))
    #expect(try database.stationCount() == 3)
    // Unregistered: the station with its devices and messages.
    _ = try database.storeMessages([incoming("N0CALL-7", "hello")], now: 4_000)
    try database.deleteStation("N0CALL-7")
    try database.deleteStation("N0CALL-7")
    try database.deleteStation("NOBODY")
    #expect(try counts(database) == (2, 2))
    // Many in one batch, one of them twice.
    func upsert(_ address: String, now: Int64) throws(StoreError) {
      _ = try database.upsertStation(
        stationUpsert(address, platform: nil, token: nil, ackMessages: nil, isRegistration: true), now: now)
    }
    try database.writeBatch { () throws(StoreError) in
      for index in 0..<50 { try upsert("K\(index)ABC", now: 5_000) }
      try upsert("K0ABC", now: 5_001)
    }
    #expect(try counts(database) == (52, 52))
    // A batch that fails leaves the count as it was, with the rows.
    #expect(throws: StoreError.self) {
      try database.writeBatch { () throws(StoreError) in
        try upsert("ROLLED", now: 6_000)
        throw StoreError.invalidArgument("stop")
      }
    }
    #expect(try counts(database) == (52, 52))
    #expect(try !database.hasStation("ROLLED"))
    // Rows written and deleted by hand (an operator's sqlite3) count as well.
    try database.execute(
      """
      INSERT INTO stations (address, base, ssid, registered_at, heartbeat_at)
      VALUES ('HAND', 'HAND', 0, 1, 1), ('HAND-2', 'HAND', 2, 1, 1)
      """)
    try database.execute("DELETE FROM stations WHERE address = 'HAND-2'")
    #expect(try counts(database) == (53, 53))
    // Only the store writes it.
    #expect(throws: StoreError.self) { try database.setMeta("station_count", "0") }
    #expect(throws: StoreError.self) { try database.setMetaValues([("station_count", "0")]) }
  }

  @Test func pruningExpiredStationsAndTheirCascadeKeepsTheCountExact() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    for index in 0..<20 {
      let address = "K\(index)OLD-\(index % 16)"
      try register(database, address, token: "old-\(index)", now: 1_000)
      _ = try database.storeMessages([incoming(address, "message \(index)")], now: 1_000)
    }
    for index in 0..<5 { try register(database, "K\(index)NEW", token: "new-\(index)", now: 9_000_000) }
    try database.setAvatar("K0OLD", icon: "radio", image: nil, hash: "icon:radio", now: 1_000)
    #expect(try counts(database) == (25, 25))
    let pruned = try database.pruneStations(now: 10_000_000, expiryMs: 5_000_000)
    #expect(pruned.stations == 20)
    #expect(pruned.messages == 20)
    #expect(try counts(database) == (5, 5))
    #expect(try count(database, "devices") == 5)
    #expect(try count(database, "messages") == 0)
    // The bookkeeping prune beside it, and a second run that finds nothing.
    _ = try database.pruneExpired(now: 10_000_000)
    #expect(try database.pruneStations(now: 10_000_000, expiryMs: 5_000_000).stations == 0)
    #expect(try counts(database) == (5, 5))
    #expect(try database.pruneStations(now: 100_000_000, expiryMs: 5_000_000).stations == 5)
    #expect(try counts(database) == (0, 0))
    #expect(try database.stationCount() == 0)
    #expect(try database.integrityCheck() == "ok")
  }

  @Test func migratingADatabaseWithStationsStartsTheCountFromThem() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let old = try openStore(dir.database, migrate: false)
    try old.migrate(upTo: 10)
    try old.execute(
      """
      INSERT INTO stations (address, base, ssid, registered_at, heartbeat_at)
      VALUES ('A', 'A', 0, 1, 1), ('B-1', 'B', 1, 1, 1), ('C', 'C', 0, 1, 1);
      """)
    #expect(try old.scalarText("SELECT value FROM meta WHERE key = 'station_count'") == nil)
    // Before the migration the count is the table's.
    #expect(try old.stationCount() == 3)
    old.close()
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(try database.schemaVersion() == Database.latestSchemaVersion)
    #expect(try counts(database) == (3, 3))
    try register(database, "D", now: 2)
    try database.deleteStation("A")
    try database.deleteStation("B-1")
    #expect(try counts(database) == (2, 2))
    #expect(try database.stationCount() == 2)
    #expect(try database.integrityCheck() == "ok")
  }

  @Test func anEmptyDatabaseMigratesToAZeroCount() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(try counts(database) == (0, 0))
  }

  /// A row removed or garbled by hand: the count falls back to counting the table, never to 0.
  @Test func aMissingOrGarbledCountFallsBackToCountingTheTable() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    for address in ["A", "B", "C"] { try register(database, address) }
    try database.execute("UPDATE meta SET value = 'garbled' WHERE key = 'station_count'")
    #expect(try database.stationCount() == 3)
    try database.execute("UPDATE meta SET value = '12abc' WHERE key = 'station_count'")
    #expect(try database.stationCount() == 3)
    try database.execute("UPDATE meta SET value = '-5' WHERE key = 'station_count'")
    #expect(try database.stationCount() == 3)
    try database.execute("DELETE FROM meta WHERE key = 'station_count'")
    #expect(try database.stationCount() == 3)
  }
}
