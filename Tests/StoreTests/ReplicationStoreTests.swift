import Foundation
import TestSupport
import Testing

@testable import Store

private let day: Int64 = 86_400_000
private let t0: Int64 = 1_800_000_000_000

/// The store's side of replication: the maintenance run and its checkpoint policy, the lease a restore
/// clears, and Litestream's own tables in the file.
@Suite struct ReplicationStoreTests {
  /// The tables Litestream 0.5 adds to every database it replicates (as it creates them).
  static let litestreamTables = """
    CREATE TABLE IF NOT EXISTS _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER);
    CREATE TABLE IF NOT EXISTS _litestream_lock (id INTEGER);
    INSERT INTO _litestream_seq (id, seq) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET seq = seq + 1;
    """

  @Test func theMaintenanceRunPrunesAndTruncatesTheLogWithoutReplication() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "OLD1", token: "token-old", now: t0)
    try register(database, "NEW1", now: t0 + 6 * day)
    _ = try database.storeMessages([incoming("OLD1", "one"), incoming("NEW1", "two")], now: t0 + 6 * day)
    #expect(database.walFileBytes() > 0)

    let report = try database.runMaintenance(
      MaintenancePlan(stationExpiryMs: 7 * day, checkpoint: .truncate), now: t0 + 7 * day + 1)
    #expect(report.stations == StationPruneResult(stations: 1, devices: 1, messages: 1))
    #expect(report.checkpoint?.busy == false)
    #expect(report.checkpoint?.walFrames == 0)
    #expect(database.walFileBytes() == 0)
    #expect(report.fields.first { $0.0 == "checkpoint" }?.1 == "truncate")
  }

  /// With replication on, Litestream owns the checkpoints: the run prunes but never touches the log, so it
  /// neither waits on Litestream's read transaction nor resets the log under it.
  @Test func withReplicationTheMaintenanceRunLeavesTheLogAlone() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "OLD1", now: t0)
    _ = try database.storeMessages([incoming("OLD1", "one")], now: t0 + 1)
    // Litestream holds a read transaction all the time; a TRUNCATE checkpoint would wait the whole busy
    // timeout for it, blocking every writer meanwhile.
    let litestream = try Database(path: dir.database)
    defer { litestream.close() }
    try litestream.execute(Self.litestreamTables)
    try litestream.execute("BEGIN")
    _ = try litestream.scalarText("SELECT count(*) FROM _litestream_seq")
    let walBefore = database.walFileBytes()
    #expect(walBefore > 0)

    let report = try database.runMaintenance(
      MaintenancePlan(stationExpiryMs: 7 * day, checkpoint: .leaveToReplication), now: t0 + 8 * day)
    #expect(report.stations.stations == 1)
    #expect(report.checkpoint == nil)
    #expect(report.fields.first { $0.0 == "checkpoint" }?.1 == "replication")
    #expect(report.fields.map(\.0).contains("walFrames") == false)
    #expect(database.walFileBytes() >= walBefore)
    try litestream.execute("COMMIT")
    #expect(try count(database, "stations") == 0)
  }

  @Test func aRestoredCopyLosesTheLostMachinesLease() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(try database.clearListenerLease() == nil)
    #expect(try database.acquireLease(holder: "lost:1:a", now: t0, ttlMs: 30_000))
    let cleared = try database.clearListenerLease()
    #expect(cleared == LeaseRecord(holder: "lost:1:a", acquiredAt: t0, expiresAt: t0 + 30_000))
    #expect(try database.lease() == nil)
    // The new listener takes it at once, long before the old one would have lapsed.
    #expect(try database.acquireLease(holder: "new:2:b", now: t0 + 1, ttlMs: 30_000))
  }

  /// Litestream's `_litestream_*` tables trip nothing: migrations (from an old schema), the integrity
  /// check, the counts of `status` and `/metrics`, the backup and the maintenance.
  @Test func litestreamsTablesTripNothing() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database, migrate: false)
    defer { database.close() }
    try database.migrate(upTo: 1)
    try database.execute(Self.litestreamTables)
    #expect(try database.migrate() == Database.latestSchemaVersion)
    try database.checkSchema()
    #expect(try database.integrityCheck() == "ok")
    try register(database, "N0CALL-7", token: "token", now: t0)
    _ = try database.storeMessages([incoming("N0CALL-7", "hello")], now: t0 + 1)
    let stats = try database.stats(now: t0 + 2, expiryMs: 7 * day)
    #expect(stats.stations == 1 && stats.totalMessages == 1)
    _ = try database.runMaintenance(
      MaintenancePlan(stationExpiryMs: 7 * day, checkpoint: .leaveToReplication), now: t0 + 2)

    let copyPath = dir.path + "/backup.sqlite"
    _ = try database.backup(to: copyPath)
    let copy = try Database(path: copyPath, options: StoreOptions(readOnly: true))
    defer { copy.close() }
    #expect(try copy.integrityCheck() == "ok")
    try copy.checkSchema()
    #expect(try copy.stats(now: t0 + 2, expiryMs: 7 * day).totalMessages == 1)
  }
}
