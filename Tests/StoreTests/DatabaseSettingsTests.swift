// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import Foundation
import TestSupport
import Testing

@testable import Store

/// `Database+Settings.swift`, station settings in the database: defaults, partial updates in one transaction, the
/// ACK policy beside register's ackMessages, deletion with the station, the upgrade from before migration 008.
@Suite struct DatabaseSettingsTests {
  @Test func aNewStationHasTheDefaultsAndAnUnknownOneNone() throws {
    try withDatabase { database in
      try register(database, "N0CALL-7")
      #expect(try database.stationSettings("n0call-7") == .defaults)
      #expect(try database.stationSettings("NOBODY") == nil)
      #expect(
        try database.updateStationSettings("NOBODY", StationSettingsUpdate(mutedUntil: 5), now: 1) == nil)
      #expect(try count(database, "station_settings") == 0)
    }
  }

  @Test func partialUpdatesKeepTheOtherFieldsAndAnswerTheWholeSet() throws {
    try withDatabase { database in
      try register(database, "N0CALL-7")
      let blocked = try CallList(validating: ["KJ7ABC", "OH7AA-1"], field: "blocked")
      let quiet = try QuietHours(start: 1320, end: 420, utcOffsetMinutes: -300)
      let before = database.transactionCounts
      let first = try database.updateStationSettings(
        "N0CALL-7", StationSettingsUpdate(blocked: blocked, quietHours: .some(quiet)), now: 10)
      #expect(database.transactionCounts.writes == before.writes + 1)
      #expect(first == StationSettings(blocked: blocked, quietHours: quiet))
      let second = try database.updateStationSettings(
        "N0CALL-7", StationSettingsUpdate(mutedUntil: 99, ackPolicy: .device), now: 20)
      #expect(
        second == StationSettings(blocked: blocked, mutedUntil: 99, quietHours: quiet, ackPolicy: .device))
      #expect(try database.stationSettings("N0CALL-7") == second)
      let third = try database.updateStationSettings(
        "N0CALL-7", StationSettingsUpdate(quietHours: .some(nil), quietBypass: blocked), now: 30)
      #expect(
        third
          == StationSettings(
            blocked: blocked, mutedUntil: 99, quietHours: nil, quietBypass: blocked, ackPolicy: .device))
      #expect(try database.stationSettings("N0CALL-7") == third)
      // An empty update reads the set and writes nothing.
      let writes = database.transactionCounts.writes
      #expect(try database.updateStationSettings("N0CALL-7", StationSettingsUpdate(), now: 40) == third)
      #expect(try database.scalarText("SELECT updated_at FROM station_settings") == "30")
      #expect(database.transactionCounts.writes == writes + 1)
      // Several stations at once, as the listener asks.
      try register(database, "KJ7ABC")
      let found = try database.stationSettings(of: ["N0CALL-7", "KJ7ABC", "NOBODY", "N0CALL-7"])
      #expect(found == ["N0CALL-7": third, "KJ7ABC": .defaults])
    }
  }

  @Test func theAckPolicyAndRegistersAckMessagesAreOneSetting() throws {
    try withDatabase { database in
      #expect(try register(database, "N0CALL-7", ackMessages: true).ackMessages)
      #expect(try database.stationSettings("N0CALL-7")?.ackPolicy == .server)
      #expect(try database.stationsWantingAcks(["N0CALL-7"]) == ["N0CALL-7"])
      try database.updateStationSettings("N0CALL-7", StationSettingsUpdate(ackPolicy: .device), now: 1)
      #expect(try database.station("N0CALL-7")?.ackMessages == false)
      #expect(try database.stationsWantingAcks(["N0CALL-7"]).isEmpty)
      // A heartbeat (and a register without ackMessages) keeps the policy.
      try heartbeat(database, "N0CALL-7", now: 2)
      try register(database, "N0CALL-7", ackMessages: nil, now: 3)
      #expect(try database.stationSettings("N0CALL-7")?.ackPolicy == .device)
      // Register's ackMessages sets server or never.
      try register(database, "N0CALL-7", ackMessages: false, now: 4)
      #expect(try database.stationSettings("N0CALL-7")?.ackPolicy == .never)
      try register(database, "N0CALL-7", ackMessages: true, now: 5)
      #expect(try database.stationSettings("N0CALL-7")?.ackPolicy == .server)
      try database.updateStationSettings("N0CALL-7", StationSettingsUpdate(ackPolicy: .never), now: 6)
      #expect(try database.station("N0CALL-7")?.ackMessages == false)
      try database.updateStationSettings("N0CALL-7", StationSettingsUpdate(ackPolicy: .server), now: 7)
      #expect(try database.station("N0CALL-7")?.ackMessages == true)
      #expect(try register(database, "KJ7ABC", ackMessages: nil).ackMessages == false)
      #expect(try database.stationSettings("KJ7ABC")?.ackPolicy == .never)
    }
  }

  @Test func aWriteOfAckMessagesAloneSetsThePolicyToMatch() throws {
    try withDatabase { database in
      try database.execute(
        """
        INSERT INTO stations (address, base, ssid, ack_messages, registered_at, heartbeat_at)
          VALUES ('OH7LZB', 'OH7LZB', 0, 1, 1, 1), ('KJ7ABC', 'KJ7ABC', 0, 0, 1, 1)
        """)
      #expect(try database.stationSettings("OH7LZB")?.ackPolicy == .server)
      #expect(try database.stationSettings("KJ7ABC")?.ackPolicy == .never)
      try database.execute("UPDATE stations SET ack_messages = 0 WHERE address = 'OH7LZB'")
      #expect(try database.stationSettings("OH7LZB")?.ackPolicy == .never)
      try database.updateStationSettings("KJ7ABC", StationSettingsUpdate(ackPolicy: .device), now: 1)
      // Rewriting the same value changes nothing; a change to 1 means ACK when stored.
      try database.execute("UPDATE stations SET ack_messages = 0, heartbeat_at = 2 WHERE address = 'KJ7ABC'")
      #expect(try database.stationSettings("KJ7ABC")?.ackPolicy == .device)
      try database.execute("UPDATE stations SET ack_messages = 1 WHERE address = 'KJ7ABC'")
      #expect(try database.stationSettings("KJ7ABC")?.ackPolicy == .server)
    }
  }

  @Test func settingsAreDeletedWithTheStation() throws {
    try withDatabase { database in
      try register(database, "N0CALL-7")
      try database.updateStationSettings(
        "N0CALL-7",
        StationSettingsUpdate(
          blocked: try CallList(validating: ["KJ7ABC"], field: "blocked"), ackPolicy: .device),
        now: 1)
      #expect(try count(database, "station_settings") == 1)
      #expect(try database.deleteStation("N0CALL-7"))
      #expect(try count(database, "station_settings") == 0)
      try register(database, "N0CALL-7")
      #expect(try database.stationSettings("N0CALL-7") == .defaults)
    }
  }

  @Test func theUpgradeGivesStationsThatAckedTheServerPolicy() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let old = try Database(path: dir.database)
    #expect(try old.migrate(upTo: 7) == 7)
    try old.execute(
      """
      INSERT INTO stations (address, base, ssid, platform, ack_messages, registered_at, heartbeat_at)
        VALUES ('N0CALL-7', 'N0CALL', 7, 'ios', 1, 100, 200), ('KJ7ABC', 'KJ7ABC', 0, NULL, 0, 110, 210);
      """)
    old.close()
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(try database.stationSettings("N0CALL-7") == StationSettings(ackPolicy: .server))
    #expect(try database.stationSettings("KJ7ABC") == .defaults)
    #expect(try database.integrityCheck() == "ok")
  }

  @Test func storedCallListsAndQuietHoursThatDoNotReadAreDefaults() throws {
    try withDatabase { database in
      try register(database, "N0CALL-7")
      try database.execute(
        """
        INSERT INTO station_settings (station, blocked, muted_until, quiet_start, quiet_end, quiet_utc_offset,
          quiet_bypass, updated_at) VALUES ('N0CALL-7', 'KJ7ABC bad*call  OH7AA-1', -5, 60, 60, 0, '', 1)
        """)
      let settings = try #require(try database.stationSettings("N0CALL-7"))
      #expect(settings.blocked.calls == ["KJ7ABC", "OH7AA-1"])
      #expect(settings.mutedUntil == 0 && settings.quietHours == nil)
    }
  }

}
