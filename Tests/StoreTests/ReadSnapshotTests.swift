import TestSupport
import Testing

@testable import Store

/// `readSnapshot`: several reads, one read transaction and one snapshot; writes are refused inside.
@Suite struct ReadSnapshotTests {
  private func upsert(_ address: String) -> StationUpsert {
    stationUpsert(address, platform: .android, token: nil, ackMessages: false, isRegistration: true)
  }

  @Test func readsInsideSeeOneSnapshotInOneTransaction() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    let other = try openStore(dir.database)
    defer { other.close() }
    try register(database, "N0CALL", token: "token-1")
    _ = try database.storeMessages([incoming("N0CALL", "first")], now: 1_000)
    let before = database.transactionCounts
    let (count, devices, later) = try database.readSnapshot { () throws(StoreError) in
      let count = try database.unpulledCount(station: "N0CALL")
      // Another connection commits a message and a device between the reads: the snapshot does not see them.
      _ = try other.storeMessages([incoming("N0CALL", "second")], now: 2_000)
      _ = try other.upsertStation(
        stationUpsert(
          "N0CALL", platform: .android, token: "token-2", ackMessages: nil, isRegistration: false),
        now: 2_000)
      return (count, try database.devices(of: "N0CALL"), try database.unpulledCount(station: "N0CALL"))
    }
    #expect(count == 1 && later == 1)
    #expect(devices.map(\.token) == ["token-1"])
    #expect(database.transactionCounts == TransactionCounts(writes: before.writes, reads: before.reads + 1))
    // After it, the commits are visible.
    #expect(try database.unpulledCount(station: "N0CALL") == 2)
    #expect(try database.devices(of: "N0CALL").count == 2)
  }

  @Test func aWriteInsideIsRefusedAndTheConnectionStaysUsable() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(throws: StoreError.invalidArgument("a write inside readSnapshot")) {
      try database.readSnapshot { () throws(StoreError) in
        _ = try database.upsertStation(upsert("N0CALL"), now: 1_000)
      }
    }
    #expect(!database.isInTransaction)
    try register(database, "N0CALL")
    #expect(try database.station("N0CALL") != nil)
    // Inside a write batch it joins the batch's transaction (which may write).
    let before = database.transactionCounts
    try database.writeBatch { () throws(StoreError) in
      _ = try database.readSnapshot { () throws(StoreError) in try database.station("N0CALL") }
      _ = try database.upsertStation(upsert("W5AGO"), now: 1_000)
    }
    #expect(database.transactionCounts == TransactionCounts(writes: before.writes + 1, reads: before.reads))
  }
}
