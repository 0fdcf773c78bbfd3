// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import Testing

@testable import Store

/// `Database+Receipts.swift`: delivery receipts for registered stations, and the 30-second rule of the ACKs sent.
@Suite struct DatabaseReceiptsTests {
  private static func ack(
    _ msgno: String, station: String = "n0call-7", kind: ReceiptKind = .ack, reply: String? = nil
  )
    -> DeliveryReceipt
  {
    DeliveryReceipt(station: station, peer: "KJ7ABC-7", msgno: msgno, kind: kind, replyAck: reply)
  }

  @Test func receiptsAreRecordedForRegisteredStationsOnly() throws {
    let (database, directory) = try temporaryStore(registering: "N0CALL-7")
    defer { directory.remove() }
    #expect(try database.recordReceipts([], now: 1) == 0)
    #expect(
      try database.recordReceipts([Self.ack("1"), Self.ack("2", station: "NOBODY-1")], now: 1_000) == 1)
    #expect(
      try database.receipts(station: "N0CALL-7") == [
        DeliveryReceipt(
          station: "N0CALL-7", peer: "KJ7ABC-7", msgno: "1", kind: .ack, replyAck: nil, receivedAt: 1_000)
      ], "stored upper case, stamped with now")
    #expect(try database.receipts(station: "NOBODY-1").isEmpty)
  }

  @Test func aRepeatedReceiptOnlyMovesItsTime() throws {
    let (database, directory) = try temporaryStore(registering: "N0CALL-7")
    defer { directory.remove() }
    _ = try database.recordReceipts([Self.ack("1"), Self.ack("1", kind: .rej)], now: 1_000)
    #expect(try database.recordReceipts([Self.ack("1", reply: "AB}")], now: 2_000) == 1)
    let receipts = try database.receipts(station: "n0call-7")
    #expect(receipts.count == 2, "an ack and a rej of one number are two receipts")
    #expect(
      receipts[0]
        == DeliveryReceipt(
          station: "N0CALL-7", peer: "KJ7ABC-7", msgno: "1", kind: .ack, replyAck: "AB}", receivedAt: 2_000))
    #expect(receipts[1].kind == .rej && receipts[1].receivedAt == 1_000, "newest first")
  }

  @Test func anAckIsDueOncePerInterval() throws {
    let (database, directory) = try temporaryStore(registering: "N0CALL-7")
    defer { directory.remove() }
    #expect(try database.ackDue(key: "k", now: 10_000, minIntervalMs: 30_000))
    #expect(try !database.ackDue(key: "k", now: 39_999, minIntervalMs: 30_000))
    #expect(try database.ackDue(key: "k", now: 40_000, minIntervalMs: 30_000), "30 s after the last one sent")
    #expect(
      try !database.ackDue(key: "k", now: 40_001, minIntervalMs: 30_000), "a refused one does not move it")
    #expect(try database.ackDue(key: "other", now: 40_001, minIntervalMs: 30_000))
    // A clock that went back: due, and the time goes back with it.
    #expect(try database.ackDue(key: "k", now: 5_000, minIntervalMs: 30_000))
    #expect(try database.scalarText("SELECT last_sent_at FROM ack_state WHERE key = 'k'") == "5000")
  }

  @Test func aBatchAnswersPerKeyAndARepeatedKeyOnce() throws {
    let (database, directory) = try temporaryStore(registering: "N0CALL-7")
    defer { directory.remove() }
    #expect(try database.ackDue(keys: [], now: 1, minIntervalMs: 30_000).isEmpty)
    _ = try database.ackDue(key: "b", now: 1_000, minIntervalMs: 30_000)
    #expect(
      try database.ackDue(keys: ["a", "b", "a", "c"], now: 2_000, minIntervalMs: 30_000) == [
        true, false, false, true,
      ])
    #expect(
      try database.ackDue(keys: ["d", "d"], now: 3_000, minIntervalMs: 0) == [true, false],
      "even without an interval, one ACK per key and batch")
  }
}
