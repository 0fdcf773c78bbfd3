// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import Testing

@testable import Store

/// The station change log (sql/006_station_changes.sql, Database+StationChanges.swift): what the listener reads
/// instead of the whole station set.
@Suite struct DatabaseStationChangesTests {
  private func addresses(_ changes: [StationChange]) -> [String] { changes.map(\.address) }

  @Test func registerHeartbeatAndUnregisterEachAppendOneRowInCommitOrder() throws {
    try withDatabase { database in
      #expect(try database.stationChangeLog() == StationChangeLog(newest: 0, oldest: nil))
      try register(database, "N0CALL-7", now: 1_000)
      try register(database, "OH7LZB", now: 1_000)
      try heartbeat(database, "N0CALL-7", now: 2_000)
      // Avatars, sync cursors and push tokens are not changes of the station set.
      try database.setAvatar("OH7LZB", icon: "car", image: nil, hash: "icon:car", now: 2_100)
      _ = try database.sync(station: "OH7LZB", since: 0, now: 2_200)
      try database.deleteDevice(token: "nothing", station: "OH7LZB")
      try database.deleteStation("OH7LZB")
      let changes = try database.stationChanges(after: 0, limit: 100, heardSince: 1_500)
      #expect(changes.map(\.seq) == [1, 2, 3, 4])
      #expect(addresses(changes) == ["N0CALL-7", "OH7LZB", "N0CALL-7", "OH7LZB"])
      // Each row carries the station's state now: N0CALL-7 heard at 2,000 is live, OH7LZB is gone.
      #expect(changes.map(\.isLive) == [true, false, true, false])
      #expect(try database.stationChanges(after: 2, limit: 1, heardSince: 1_500).map(\.seq) == [3])
      #expect(try database.stationChanges(after: 0, limit: 100, heardSince: 2_001).allSatisfy { !$0.isLive })
      #expect(try database.stationChangeLog() == StationChangeLog(newest: 4, oldest: 1))
    }
  }

  @Test func pruningTheExpiredAppendsTheirRowsToo() throws {
    try withDatabase { database in
      try register(database, "N0CALL-7", now: 1_000)
      try register(database, "OH7LZB", now: 5_000)
      try database.pruneStations(now: 10_000, expiryMs: 6_000)
      #expect(
        addresses(try database.stationChanges(after: 2, limit: 10, heardSince: 4_000)) == ["N0CALL-7"])
    }
  }

  @Test func aReaderGoesOnOnlyWhileNoRowAfterItIsGoneAndTheLogDidNotGoBack() throws {
    try withDatabase { database in
      for index in 0..<5 { try register(database, "N0CALL-\(index + 1)", now: 1_000) }
      #expect(try database.pruneStationChanges(through: 3) == 3)
      let log = try database.stationChangeLog()
      #expect(log == StationChangeLog(newest: 5, oldest: 4))
      #expect(log.continues(from: 3) && log.continues(from: 4) && log.continues(from: 5))
      #expect(!log.continues(from: 2), "row 3 was never read and is gone")
      #expect(!log.continues(from: 6), "the log went back: a restored backup")
      // Emptied: whoever read everything goes on; whoever did not must read the whole set.
      try database.pruneStationChanges(through: 5)
      let empty = try database.stationChangeLog()
      #expect(empty == StationChangeLog(newest: 5, oldest: nil))
      #expect(empty.continues(from: 5) && !empty.continues(from: 4))
      // Numbers never go back after pruning.
      try register(database, "OH7LZB", now: 2_000)
      #expect(try database.stationChanges(after: 5, limit: 10, heardSince: 0).map(\.seq) == [6])
    }
  }

  @Test func theLogKeepsItsNewest100000RowsByItself() throws {
    try withDatabase { database in
      try database.execute(
        """
        BEGIN IMMEDIATE;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100005)
        INSERT INTO stations (address, base, ssid, registered_at, heartbeat_at)
          SELECT 'S' || i, 'S' || i, 0, 1, 1 FROM n;
        COMMIT;
        """)
      #expect(try count(database, "station_changes") == 100_000)
      #expect(try database.stationChangeLog() == StationChangeLog(newest: 100_005, oldest: 6))
    }
  }

  @Test func liveStationsAndThoseThatCrossedTheExpiryBoundaryByIndexRange() throws {
    try withDatabase { database in
      try register(database, "A1A", now: 1_000)
      try register(database, "B1B", now: 2_000)
      try register(database, "C1C", now: 3_000)
      var live: [String] = []
      try database.forEachLiveStation(heardSince: 2_000) { live.append($0) }
      #expect(live.sorted() == ["B1B", "C1C"])
      #expect(try database.liveStationCount(heardSince: 2_000) == 2)
      var expired: [String] = []
      try database.forEachStation(heardFrom: 1_000, before: 3_000) { expired.append($0) }
      #expect(expired.sorted() == ["A1A", "B1B"])
      expired = []
      try database.forEachStation(heardFrom: 3_000, before: 3_000) { expired.append($0) }
      #expect(expired.isEmpty)
      let explain = try database.prepared(
        "EXPLAIN QUERY PLAN SELECT address FROM stations WHERE heartbeat_at >= ?1 AND heartbeat_at < ?2")
      defer { explain.reset() }
      var plan: [String] = []
      while try explain.step() { plan.append(explain.text(3)) }
      #expect(plan.contains { $0.contains("USING INDEX stations_heartbeat") }, "\(plan)")
    }
  }

  @Test func whichStationsWantAcksIsReadForTheFewAsked() throws {
    try withDatabase { database in
      try register(database, "OH7LZB", ackMessages: true)
      try register(database, "N0CALL-7", ackMessages: false)
      #expect(
        try database.stationsWantingAcks(["OH7LZB", "N0CALL-7", "NOBODY", "OH7LZB"]) == ["OH7LZB"])
      #expect(try database.stationsWantingAcks([]).isEmpty)
    }
  }
}
