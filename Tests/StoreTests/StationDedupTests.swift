import TestSupport
import Testing

@testable import Store

/// Dedup follows the station: a duplicate is only ever a copy of a message stored for the station as registered
/// now, so "ACK every copy" never ACKs a message nobody has.
@Suite struct StationDedupTests {
  private let copy = incoming("N0CALL", "hello", from: "KJ7ABC-7", msgno: "7", key: "KJ7ABC-7|N0CALL|7|hello")

  @Test func unregisterThenRegisterStoresTheNextCopyAgain() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL", ackMessages: true)
    guard case .stored = try database.storeMessages([copy], now: 10_000)[0] else {
      Issue.record("first copy not stored")
      return
    }
    #expect(try database.storeMessages([copy], now: 20_000) == [.duplicate])
    #expect(try database.deleteStation("n0call"))
    #expect(try count(database, "dedup") == 0)
    #expect(try database.storeMessages([copy], now: 30_000) == [.unknownStation])
    try register(database, "N0CALL", ackMessages: true, now: 40_000)
    let again = try database.storeMessages([copy], now: 50_000)
    guard case .stored = again[0] else {
      Issue.record("the copy after re-registering was not stored: \(again)")
      return
    }
    #expect(try database.sync(station: "N0CALL", since: 0, now: 60_000).messages.map(\.text) == ["hello"])
    #expect(try database.storeMessages([copy], now: 70_000) == [.duplicate])
  }

  /// Only the deleted station's rows go: neighbours in key order (a longer call, another SSID) keep theirs.
  @Test func deletingOneStationKeepsTheOthersRows() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    let stations = ["N0CALL", "N0CALL-1", "N0CALLA", "N0CAL", "N0CALL-10"]
    for station in stations { try register(database, station) }
    for station in stations {
      _ = try database.storeMessages(
        [
          incoming(station, "a", key: "S|\(station)|1|a"),
          incoming(station, "b", key: "S|\(station)|2|b"),
          incoming(station, "sent", key: "sent|\(station)|X|3|c", direction: .sent),
        ], now: 1_000)
    }
    #expect(try count(database, "dedup") == 15)
    try database.deleteStation("N0CALL")
    #expect(try count(database, "dedup") == 12)
    for station in stations.dropFirst() {
      #expect(
        try database.storeMessages([incoming(station, "a", key: "S|\(station)|1|a")], now: 2_000) == [
          .duplicate
        ])
    }
  }

  @Test func expiringAStationDeletesItsRows() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    let day: Int64 = 86_400_000
    try register(database, "N0CALL", now: 1_000)
    try register(database, "K1ABC", now: 1_000)
    try heartbeat(database, "K1ABC", now: 5 * day)
    _ = try database.storeMessages([copy, incoming("K1ABC", "x", key: "k1")], now: 2_000)
    let pruned = try database.pruneStations(now: 7 * day + 1_001, expiryMs: 7 * day)
    #expect(pruned.stations == 1)
    #expect(try database.scalarText("SELECT group_concat(key) FROM dedup") == "K1ABC\u{1F}k1")
    try register(database, "N0CALL", now: 7 * day + 2_000)
    guard case .stored = try database.storeMessages([copy], now: 7 * day + 3_000)[0] else {
      Issue.record("the copy to the expired and re-registered station was not stored")
      return
    }
  }

  /// A row an older build wrote (the bare key, no station) still counts until it expires: an upgrade does not
  /// store a retransmission twice.
  @Test func aBareKeyFromAnOlderBuildStillCounts() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL")
    try database.execute(
      "INSERT INTO dedup (key, first_seen, expires_at) VALUES ('KJ7ABC-7|N0CALL|7|hello', 1000, 3601000)")
    #expect(try database.storeMessages([copy], now: 2_000) == [.duplicate])
    guard case .stored = try database.storeMessages([copy], now: 3_601_000)[0] else {
      Issue.record("not stored once the old row expired")
      return
    }
  }
}
