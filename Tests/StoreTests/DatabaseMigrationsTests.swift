// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import Foundation
import TestSupport
import Testing

@testable import Store

/// `Database+Migrations.swift`: the numbered migrations, applied in order, each whole or not at all.
@Suite struct DatabaseMigrationsTests {
  @Test func migrationsAreNumberedFromOneWithAvatarsLater() {
    let all = Migration.all
    #expect(all.map(\.version) == Array(1...all.count))
    #expect(all.first?.name == "001_initial.sql")
    #expect(Database.latestSchemaVersion >= 2)
    #expect(!all[0].sql.contains("avatar"), "avatars must arrive in a later migration")
    #expect(all.dropFirst().contains { $0.sql.contains("ALTER TABLE stations ADD COLUMN avatar") })
  }

  @Test func freshDatabaseMigratesToLatest() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try Database(path: dir.database)
    defer { database.close() }
    #expect(try database.schemaVersion() == 0)
    #expect(throws: StoreError.schemaTooOld(found: 0, required: Database.latestSchemaVersion)) {
      try database.checkSchema()
    }
    #expect(try database.migrate() == Database.latestSchemaVersion)
    #expect(try database.schemaVersion() == Database.latestSchemaVersion)
    try database.checkSchema()
    let tables = try database.columnTexts(
      "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
    #expect(
      tables == [
        "ack_state", "bans", "bulletin_log", "claim_codes", "claim_requests", "dedup", "device_acks",
        "devices", "devices_seen", "drops",
        "forward_targets", "listener_lease",
        "messages", "meta", "net_memberships",
        "outbox", "rate_limits", "read_markers", "receipts", "send_numbers", "sends", "sqlite_sequence",
        "station_audit",
        "station_changes", "station_settings", "station_tombstones", "stations", "subscriptions",
        "watch_states",
      ])
    #expect(try database.integrityCheck() == "ok")
  }

  @Test func rerunningMigrateIsANoOp() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let first = try openStore(dir.database)
    try register(first, "N0CALL-7", token: "tok")
    first.close()
    let second = try Database(path: dir.database)
    defer { second.close() }
    let schemaBefore = try second.columnTexts("SELECT sql FROM sqlite_schema ORDER BY name")
    #expect(try second.migrate() == Database.latestSchemaVersion)
    #expect(try second.migrate() == Database.latestSchemaVersion)
    #expect(try second.columnTexts("SELECT sql FROM sqlite_schema ORDER BY name") == schemaBefore)
    #expect(try second.station("N0CALL-7") != nil)
    #expect(try second.devices(of: "N0CALL-7").count == 1)
  }

  @Test func upgradeFromVersionOneKeepsEveryRow() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let old = try Database(path: dir.database)
    #expect(try old.migrate(upTo: 1) == 1)
    #expect(try count(old, "pragma_table_info('stations')", where: "name LIKE 'avatar%'") == 0)
    try old.execute(
      """
      INSERT INTO stations (address, base, ssid, platform, ack_messages, registered_at, heartbeat_at,
                            last_sync_cursor, last_sync_at)
        VALUES ('N0CALL-7', 'N0CALL', 7, 'ios', 1, 100, 200, 300, 310),
               ('KJ7ABC', 'KJ7ABC', 0, NULL, 0, 110, 210, 0, NULL);
      INSERT INTO devices (token, station, platform, registered_at, refreshed_at)
        VALUES ('apns-token', 'N0CALL-7', 'ios', 100, 200);
      INSERT INTO messages (id, station, direction, peer, text, msgno, timestamp)
        VALUES (1, 'N0CALL-7', 'received', 'KJ7ABC', 'hello', '42', 250),
               (2, 'N0CALL-7', 'received', 'KJ7ABC', 'again', NULL, 260);
      INSERT INTO outbox (station, message_id, created_at, next_attempt_at) VALUES ('N0CALL-7', 2, 260, 260);
      INSERT INTO dedup (key, first_seen, expires_at) VALUES ('k1', 250, 999999);
      INSERT INTO ack_state (key, last_sent_at) VALUES ('k1', 250);
      INSERT INTO listener_lease (id, holder, acquired_at, expires_at) VALUES (1, 'host:1', 10, 999999);
      INSERT INTO rate_limits (key, window_start, count, expires_at) VALUES ('ip:1', 0, 3, 999999);
      UPDATE meta SET value = '260' WHERE key = 'last_message_ts';
      INSERT INTO meta (key, value) VALUES ('operator', 'kept');
      """)
    old.close()

    let database = try Database(path: dir.database)
    defer { database.close() }
    #expect(try database.migrate() == Database.latestSchemaVersion)
    #expect(try database.integrityCheck() == "ok")
    #expect(try database.columnTexts("PRAGMA foreign_key_check").isEmpty)
    #expect(try database.connectionSettings().foreignKeys)

    let station = try #require(try database.station("n0call-7"))
    #expect(station.platform == .ios)
    #expect(station.ackMessages)
    #expect(station.registeredAt == 100 && station.heartbeatAt == 200)
    #expect(station.lastSyncCursor == 300 && station.lastSyncAt == 310)
    #expect(station.avatarHash == "" && station.avatarClearedAt == nil)
    #expect(try database.station("KJ7ABC")?.platform == nil)
    #expect(try database.devices(of: "N0CALL-7").map(\.token) == ["apns-token"])
    let synced = try database.sync(station: "N0CALL-7", since: 0, now: 1_000)
    #expect(synced.messages.map(\.text) == ["hello", "again"])
    #expect(synced.messages.map(\.msgno) == ["42", nil])
    #expect(synced.serverTime == 260)
    #expect(try database.dueOutbox(now: 1_000).map(\.messageID) == [2])
    #expect(try database.lease()?.holder == "host:1")
    #expect(try database.meta("operator") == "kept")
    #expect(try database.ackDue(key: "k1", now: 260, minIntervalMs: 30_000) == false)
    #expect(try database.consumeRate(key: "ip:1", limit: 3, windowMs: 999_999, now: 10) != .allowed)
    // The old dedup row still suppresses a copy; new stores continue after the old cursor.
    let outcomes = try database.storeMessages(
      [
        IncomingMessage(
          station: "N0CALL-7", peer: "KJ7ABC", text: "hello", msgno: "42", dedupKey: "k1",
          dedupWindowMs: 1000),
        incoming("N0CALL-7", "new", from: "KJ7ABC"),
      ], now: 100)
    #expect(outcomes.first == .duplicate)
    #expect(outcomes.last == .stored(messageID: 3, timestamp: 261))
    // The new columns work on the upgraded rows.
    try database.setAvatar("KJ7ABC", icon: "radio", image: nil, hash: "icon:radio", now: 2_000)
    #expect(try database.avatars(for: ["KJ7ABC"])["KJ7ABC"]?.hash == "icon:radio")
  }

  /// 022: a watch in an emergency (the old flags) keeps it from when the call was last heard, so the upgrade
  /// reports none twice; the alerts' index exists.
  @Test func upgradeKeepsAWatchsEmergency() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let old = try Database(path: dir.database)
    #expect(try old.migrate(upTo: 21) == 21)
    try old.execute(
      """
      INSERT INTO stations (address, base, ssid, platform, ack_messages, registered_at, heartbeat_at,
                            last_sync_cursor, last_sync_at)
        VALUES ('N0CALL-7', 'N0CALL', 7, NULL, 0, 100, 200, 0, NULL);
      INSERT INTO subscriptions (station, id, position, kind, target, emergency, created_at)
        VALUES ('N0CALL-7', 's1', 0, 'watch', 'K1ABC', 1, 100), ('N0CALL-7', 's2', 1, 'watch', 'K2ABC', 1, 100);
      INSERT INTO watch_states (station, subscription, last_heard_at, mic_e_emergency)
        VALUES ('N0CALL-7', 's1', 5000, 1), ('N0CALL-7', 's2', 6000, 0);
      """)
    old.close()
    let database = try Database(path: dir.database)
    defer { database.close() }
    #expect(try database.migrate() == Database.latestSchemaVersion)
    #expect(try database.watches(of: "K1ABC", heardSince: 0, now: 9000).first?.state.emergencyAt == 5000)
    #expect(try database.watches(of: "K2ABC", heardSince: 0, now: 9000).first?.state.emergencyAt == nil)
    #expect(try count(database, "sqlite_schema", where: "name = 'messages_alerts'") == 1)
  }

  @Test func newerDatabaseIsRefused() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    // A version past this build's newest migration (7 once, before there were more than 6).
    let newer = max(7, Database.latestSchemaVersion + 1)
    try database.execute("PRAGMA user_version = \(newer)")
    let expected = StoreError.schemaTooNew(found: newer, supported: Database.latestSchemaVersion)
    #expect(throws: expected) { try database.migrate() }
    #expect(throws: expected) { try database.checkSchema() }
    #expect(
      expected.description
        == "database schema version \(newer) is newer than this build supports (\(Database.latestSchemaVersion)); "
        + "upgrade aprs-cloud")
    #expect(try database.schemaVersion() == newer)
  }

  @Test func failedMigrationRollsBackCompletely() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    let latest = Database.latestSchemaVersion
    let broken = Migration(
      version: latest + 1, name: "999_broken.sql",
      sql: "CREATE TABLE half_done (a INTEGER); INSERT INTO no_such_table VALUES (1);")
    #expect {
      try database.apply(Migration.all + [broken], upTo: latest + 1)
    } throws: { error in
      guard case StoreError.migrationFailed(let name, let reason) = error else { return false }
      return name == "999_broken.sql" && reason.contains("no_such_table")
    }
    #expect(try database.schemaVersion() == latest)
    #expect(try count(database, "sqlite_schema", where: "name = 'half_done'") == 0)
    #expect(try database.connectionSettings().foreignKeys)
  }

  @Test func aTargetOutsideTheMigrationsIsRefused() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database, migrate: false)
    defer { database.close() }
    let latest = Database.latestSchemaVersion
    #expect(throws: StoreError.invalidArgument("no migration \(latest + 1); this build has 1...\(latest)")) {
      try database.migrate(upTo: latest + 1)
    }
    #expect(throws: StoreError.self) { try database.migrate(upTo: -1) }
    #expect(try database.migrate(upTo: 0) == 0, "nothing to apply")
    #expect(try database.schemaVersion() == 0)
  }

  @Test func aPartlyMigratedDatabaseIsTooOldUntilTheRest() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database, migrate: false)
    defer { database.close() }
    let latest = Database.latestSchemaVersion
    #expect(try database.migrate(upTo: 5) == 5)
    #expect(try database.migrate(upTo: 3) == 5, "a lower target applies nothing and moves nothing back")
    #expect(throws: StoreError.schemaTooOld(found: 5, required: latest)) { try database.checkSchema() }
    #expect(try database.migrate() == latest)
    try database.checkSchema()
  }
}
