import TestSupport
import Testing

@testable import Store

/// `sql/026_bulletin_sends.sql`: the `sends` table rebuilt with `kind` and a nullable `msgno`, the same rows and
/// indexes, and `bulletin_log`.
@Suite struct DatabaseMigrationsBulletinTests {
  @Test func theUpgradeKeepsEverySendAsAMessageAndItsIndexes() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let old = try Database(path: dir.database)
    #expect(try old.migrate(upTo: 25) == 25)
    try old.execute(
      """
      INSERT INTO stations (address, base, ssid, platform, ack_messages, registered_at, heartbeat_at,
                            last_sync_cursor, last_sync_at)
        VALUES ('N0CALL-7', 'N0CALL', 7, NULL, 0, 100, 200, 0, NULL);
      INSERT INTO messages (id, station, direction, peer, text, msgno, timestamp)
        VALUES (1, 'N0CALL-7', 'sent', 'KJ7ABC-7', 'Hello', '3', 1000),
               (2, 'N0CALL-7', 'sent', 'KJ7ABC-7', 'Again', '4', 1001);
      INSERT INTO sends (message_id, station, addressee, msgno, client_id, state, created_at, transmissions,
                         last_sent_at, next_at, expires_at, finished_at, budget_delay_ms)
        VALUES (1, 'N0CALL-7', 'KJ7ABC-7', '3', 'a1', 'pending', 900, 2, 950, 2000, 3000, NULL, 500),
               (2, 'N0CALL-7', 'KJ7ABC-7', '4', NULL, 'cancelled', 901, 1, 960, NULL, NULL, 970, 0);
      """)
    old.close()
    let database = try Database(path: dir.database)
    defer { database.close() }
    #expect(try database.migrate() == Database.latestSchemaVersion)
    #expect(
      try database.columnTexts(
        """
        SELECT message_id || '|' || kind || '|' || msgno || '|' || coalesce(client_id, '-') || '|' || state || '|'
               || created_at || '|' || transmissions || '|' || last_sent_at || '|' || coalesce(next_at, '-') || '|'
               || coalesce(expires_at, '-') || '|' || coalesce(finished_at, '-') || '|' || budget_delay_ms
        FROM sends ORDER BY message_id
        """)
        == [
          "1|message|3|a1|pending|900|2|950|2000|3000|-|500",
          "2|message|4|-|cancelled|901|1|960|-|-|970|0",
        ])
    #expect(
      try database.columnTexts(
        "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'sends' ORDER BY name")
        == ["sends_client_id", "sends_expiry", "sends_in_flight", "sends_next"])
    // A bulletin has no number, a message always one; the new state is taken.
    try database.execute(
      """
      INSERT INTO messages (id, station, direction, peer, text, msgno, timestamp)
        VALUES (3, 'N0CALL-7', 'sent', 'BLN1', 'All', NULL, 1002);
      INSERT INTO sends (message_id, station, addressee, kind, msgno, state, created_at)
        VALUES (3, 'N0CALL-7', 'BLN1', 'bulletin', NULL, 'completed', 902);
      """)
    #expect(throws: StoreError.self) {
      try database.execute(
        "UPDATE sends SET msgno = NULL WHERE message_id = 1")
    }
    #expect(throws: StoreError.self) {
      try database.execute("UPDATE sends SET msgno = '9' WHERE message_id = 3")
    }
    #expect(throws: StoreError.self) {
      try database.execute("UPDATE sends SET kind = 'net' WHERE message_id = 3")
    }
    #expect(
      try database.columnTexts("SELECT name FROM sqlite_schema WHERE name = 'bulletin_log'") == [
        "bulletin_log"
      ])
  }
}
