import Testing

@testable import Listener
@testable import Store

/// The store functions the listener uses beside `storeMessages` (Database+Receipts.swift, sql/003_receipts.sql,
/// and the meta rows its status is published in).
@Suite struct StoreSupportTests {
  @Test func ackDueForABatchFollowsThe30SecondRule() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    #expect(
      try test.database.ackDue(keys: ["a", "b", "a"], now: 100_000, minIntervalMs: 30_000) == [
        true, true, false,
      ])
    #expect(try test.database.ackDue(keys: ["a"], now: 129_999, minIntervalMs: 30_000) == [false])
    #expect(try test.database.ackDue(keys: ["a", "b"], now: 130_000, minIntervalMs: 30_000) == [true, true])
    // The single-key ackDue shares the table.
    #expect(try test.database.ackDue(key: "a", now: 130_001, minIntervalMs: 30_000) == false)
    #expect(try test.database.ackDue(keys: [], now: 1, minIntervalMs: 1).isEmpty)
  }

  @Test func receiptsAreRecordedForRegisteredStationsOnlyAndRefreshed() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB")
    let ack = DeliveryReceipt(station: "oh7lzb", peer: "OH7AA-1", msgno: "42", kind: .ack, replyAck: nil)
    let stranger = DeliveryReceipt(station: "NOBODY", peer: "OH7AA-1", msgno: "1", kind: .ack, replyAck: nil)
    #expect(try test.database.recordReceipts([ack, stranger], now: 1_000) == 1)
    #expect(try test.database.recordReceipts([ack], now: 2_000) == 1)
    let stored = try test.database.receipts(station: "OH7LZB")
    #expect(stored.count == 1 && stored.first?.receivedAt == 2_000 && stored.first?.station == "OH7LZB")
    // A kind other than ack or rej cannot be expressed.
    #expect(ReceiptKind(rawValue: "msg") == nil)
    #expect(try test.database.pruneReceipts(before: 2_001) == 1)
    // Unregistering drops them with the station.
    try test.database.recordReceipts([ack], now: 3_000)
    try test.database.deleteStation("OH7LZB")
    #expect(try test.database.receipts(station: "OH7LZB").isEmpty)
  }

  @Test func metaValuesAreWrittenAndReadAsAGroup() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.database.setMetaValues([("group.connected", "1"), ("group.server", "a:1"), ("other", "x")])
    #expect(
      try test.database.metaValues(prefix: "group.") == [
        "group.connected": "1", "group.server": "a:1",
      ])
    #expect(throws: StoreError.self) { try test.database.setMetaValues([("last_message_ts", "5")]) }
  }
}
