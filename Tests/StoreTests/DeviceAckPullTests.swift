import Foundation
import TestSupport
import Testing

@testable import Store

/// The device-ACK rows of a station with `ackPolicy:"device"` across the store (`Database+DeviceAcks.swift` and
/// the sync of `Database+Messages.swift`): kept by the listener, marked by the pull in the transaction that reads
/// them, taken through the 30 s rule.
@Suite struct DeviceAckPullTests {
  /// Stores a numbered message for N0CALL-7 at `now` with its kept ACK; returns the message id.
  @discardableResult
  private func storeWithDeviceAck(_ database: Database, _ msgno: String, now: Int64) throws -> Int64 {
    let message = incoming("N0CALL-7", "text \(msgno)", msgno: msgno, key: "key-\(msgno)")
    return try database.writeBatch { () throws(StoreError) -> Int64 in
      guard case .stored(let id, _) = try database.storeMessages([message], now: now).first else {
        throw StoreError.invalidArgument("not stored")
      }
      try database.recordDeviceAcks([
        PendingDeviceAck(messageID: id, station: "N0CALL-7", key: "key-\(msgno)", line: "ack\(msgno)\r\n")
      ])
      return id
    }
  }

  @Test func aSyncMarksWhatItReadInItsOwnWriteTransactionWithinThirtyMinutes() throws {
    try withDatabase { database in
      let t0: Int64 = 10_000_000
      try register(database, "N0CALL-7", now: t0)
      try database.updateStationSettings("N0CALL-7", StationSettingsUpdate(ackPolicy: .device), now: t0)
      try storeWithDeviceAck(database, "1", now: t0)
      try storeWithDeviceAck(database, "2", now: t0 + 1_000)
      // Nothing pulled: nothing to send, and no write transaction for it.
      let idle = database.transactionCounts
      #expect(try database.takePulledDeviceAcks(now: t0 + 2_000, minIntervalMs: 30_000) == TakenDeviceAcks())
      #expect(database.transactionCounts == idle)

      // A sync 30 min after the first arrival pulls both: one write transaction, both marked.
      let pullAt = t0 + DeviceAckRule.pullWindowMs
      let before = database.transactionCounts
      let first = try database.sync(station: "N0CALL-7", since: 0, now: pullAt)
      #expect(first.messages.map(\.msgno) == ["1", "2"])
      #expect(database.transactionCounts.writes == before.writes + 1)
      #expect(database.transactionCounts.reads == before.reads)
      #expect(try count(database, "device_acks", where: "pulled_at = \(pullAt)") == 2)
      var taken = try database.takePulledDeviceAcks(now: pullAt + 10, minIntervalMs: 30_000)
      #expect(taken.lines == ["ack1\r\n", "ack2\r\n"])
      #expect(try database.takePulledDeviceAcks(now: pullAt + 20, minIntervalMs: 30_000) == TakenDeviceAcks())

      // A message pulled more than 30 min after its arrival is never marked.
      try storeWithDeviceAck(database, "3", now: pullAt)
      let late = pullAt + DeviceAckRule.pullWindowMs + 1
      #expect(try database.sync(station: "N0CALL-7", since: first.serverTime, now: late).messages.count == 1)
      #expect(try count(database, "device_acks", where: "pulled_at IS NULL") == 1)
      taken = try database.takePulledDeviceAcks(now: late + 10, minIntervalMs: 30_000)
      #expect(taken.lines.isEmpty)
    }
  }

  @Test func onlyStationsWithTheDevicePolicyMarkAndOnlyWhatTheSyncReturned() throws {
    try withDatabase { database in
      let t0: Int64 = 10_000_000
      try register(database, "N0CALL-7", ackMessages: true, now: t0)
      try storeWithDeviceAck(database, "1", now: t0)
      // Policy server: a sync stays one read transaction and marks nothing.
      let before = database.transactionCounts
      let answer = try database.sync(station: "N0CALL-7", since: 0, now: t0 + 10)
      #expect(database.transactionCounts.reads == before.reads + 1)
      #expect(try count(database, "device_acks", where: "pulled_at IS NOT NULL") == 0)
      // Policy device: a sync from the cursor returns nothing new and marks nothing; one from 0 marks.
      try database.updateStationSettings("N0CALL-7", StationSettingsUpdate(ackPolicy: .device), now: t0)
      #expect(try database.sync(station: "N0CALL-7", since: answer.serverTime, now: t0 + 20).messages.isEmpty)
      #expect(try count(database, "device_acks", where: "pulled_at IS NOT NULL") == 0)
      #expect(try database.sync(station: "N0CALL-7", since: 0, now: t0 + 30).messages.count == 1)
      #expect(try count(database, "device_acks", where: "pulled_at = \(t0 + 30)") == 1)
      // A second pull does not move the first pull's time.
      _ = try database.sync(station: "N0CALL-7", since: 0, now: t0 + 40)
      #expect(try count(database, "device_acks", where: "pulled_at = \(t0 + 30)") == 1)
    }
  }

  @Test func takenAcksFollowTheThirtySecondRuleAndStalePullsAreDropped() throws {
    try withDatabase { database in
      let t0: Int64 = 10_000_000
      try register(database, "N0CALL-7", now: t0)
      try database.updateStationSettings("N0CALL-7", StationSettingsUpdate(ackPolicy: .device), now: t0)
      try storeWithDeviceAck(database, "1", now: t0)
      // The listener ACKed a copy of this message 10 s before the pull's ACK would go.
      #expect(try database.ackDue(key: "key-1", now: t0 + 5_000, minIntervalMs: 30_000))
      _ = try database.sync(station: "N0CALL-7", since: 0, now: t0 + 10_000)
      var taken = try database.takePulledDeviceAcks(now: t0 + 15_000, minIntervalMs: 30_000)
      #expect(taken.lines.isEmpty && taken.suppressed == 1)
      #expect(try database.pulledDeviceAckKeys(station: "N0CALL-7", keys: ["key-1", "key-2"]) == ["key-1"])

      // A pull the listener only sees after the window: dropped, not sent.
      try storeWithDeviceAck(database, "2", now: t0 + 20_000)
      _ = try database.sync(station: "N0CALL-7", since: 0, now: t0 + 30_000)
      taken = try database.takePulledDeviceAcks(
        now: t0 + 30_000 + DeviceAckRule.pullWindowMs + 1, minIntervalMs: 30_000)
      #expect(taken.lines.isEmpty && taken.stale == 1)
    }
  }

  @Test func keptAcksGoWithTheirMessages() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database, options: StoreOptions(ringSize: 2))
    defer { database.close() }
    try register(database, "N0CALL-7")
    for number in 1...3 { try storeWithDeviceAck(database, String(number), now: Int64(number) * 1_000) }
    #expect(
      try database.columnTexts("SELECT ack_key FROM device_acks ORDER BY message_id") == ["key-2", "key-3"])
    #expect(try database.deleteStation("N0CALL-7"))
    #expect(try count(database, "device_acks") == 0)
  }
}
