import Foundation
import TestSupport
import Testing

@testable import Store

/// `messageActivity(after:)`: which stations got messages after a timestamp (what wakes parked long
/// polls), and the newest timestamp a sync saw (where a parked poll looks from).
@Suite struct MessageActivityTests {
  @Test func stationsWithMessagesAfterATimestampWithTheirNewest() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    for station in ["N0CALL", "K1ABC", "W5AGO-7"] { try register(database, station) }
    #expect(try database.messageActivity(after: 0) == MessageActivity(newestTimestamp: 0, stations: [:]))

    _ = try database.storeMessages([incoming("N0CALL", "a")], now: 1_000)
    _ = try database.storeMessages([incoming("K1ABC", "b"), incoming("N0CALL", "c")], now: 2_000)
    _ = try database.storeMessages([incoming("W5AGO-7", "d")], now: 3_000)
    #expect(
      try database.messageActivity(after: 0)
        == MessageActivity(
          newestTimestamp: 3_000, stations: ["N0CALL": 2_001, "K1ABC": 2_000, "W5AGO-7": 3_000]))
    #expect(
      try database.messageActivity(after: 2_000)
        == MessageActivity(newestTimestamp: 3_000, stations: ["N0CALL": 2_001, "W5AGO-7": 3_000]))
    #expect(
      try database.messageActivity(after: 3_000) == MessageActivity(newestTimestamp: 3_000, stations: [:]))
    #expect(
      try database.messageActivity(after: .max) == MessageActivity(newestTimestamp: 3_000, stations: [:]))
  }

  /// The sync a long poll parks after says how far its read saw: a message committed after that read
  /// is after `newestTimestamp`, and the activity read from there names its station.
  @Test func aSyncsNewestTimestampIsWhereTheNextActivityReadStarts() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let reader = try openStore(dir.database)
    defer { reader.close() }
    let writer = try openStore(dir.database)
    defer { writer.close() }
    try register(writer, "N0CALL")
    try register(writer, "K1ABC")
    _ = try writer.storeMessages([incoming("K1ABC", "old")], now: 1_000)
    var hookError: (any Error)?
    reader.afterSyncMessagesRead = {
      do {
        _ = try writer.storeMessages([incoming("N0CALL", "during")], now: 2_000)
      } catch {
        hookError = error
      }
    }
    let empty = try reader.sync(station: "N0CALL", since: 0, now: 5_000)
    reader.afterSyncMessagesRead = nil
    #expect(hookError == nil)
    #expect(empty.messages.isEmpty && empty.newestTimestamp == 1_000)
    #expect(try reader.messageActivity(after: empty.newestTimestamp).stations == ["N0CALL": 2_000])
  }

  /// Only the new rows are walked: the query searches the unique index on `timestamp`.
  @Test func theActivityReadSearchesTheTimestampIndex() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    let detail = try database.planDetails("SELECT station, timestamp FROM messages WHERE timestamp > 5")
    #expect(
      detail.contains { $0.hasPrefix("SEARCH messages USING") && $0.contains("(timestamp>?)") }, "\(detail)")
  }
}

extension Database {
  /// The `detail` column of `EXPLAIN QUERY PLAN sql`.
  fileprivate func planDetails(_ sql: String) throws -> [String] {
    let statement = try Statement(connection: withConnection { $0 }, sql: "EXPLAIN QUERY PLAN " + sql)
    defer { statement.finalize() }
    var details: [String] = []
    while try statement.step() { details.append(statement.text(3)) }
    return details
  }
}
