// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import TestSupport
import Testing

@testable import Store

/// `Database+Routine.swift`: the periodic maintenance as one call and its report.
@Suite struct DatabaseRoutineTests {
  private static let day: Int64 = 86_400_000
  private static let t0: Int64 = 1_800_000_000_000

  @Test func oneRunPrunesEveryKindAndReportsEach() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    let now = Self.t0 + 10 * Self.day
    try register(database, "OLD1", token: "old-token", now: Self.t0)
    try register(database, "LIVE1", now: Self.t0)
    _ = try database.claimStation(
      "LIVE1", keyHash: String(repeating: "0", count: 64), client: "t", now: Self.t0)
    try heartbeat(database, "LIVE1", now: now)
    _ = try database.storeMessages([incoming("LIVE1", "hello")], now: Self.t0)
    _ = try database.storeMessages([incoming("OLD1", "gone with it")], now: Self.t0)
    _ = try database.recordReceipts(
      [DeliveryReceipt(station: "LIVE1", peer: "KJ7ABC-7", msgno: "1", kind: .ack, replyAck: nil)],
      now: now - 8 * Self.day)
    _ = try database.recordReceipts(
      [DeliveryReceipt(station: "LIVE1", peer: "KJ7ABC-7", msgno: "2", kind: .ack, replyAck: nil)],
      now: now - Self.day)
    _ = try database.consumeRate(key: "k", limit: 5, windowMs: 1_000, now: Self.t0)
    let report = try database.runMaintenance(
      MaintenancePlan(stationExpiryMs: 7 * Self.day, checkpoint: .leaveToReplication), now: now)
    #expect(report.pruned.dedup == 2, "both windows ended: the bookkeeping goes before the stations")
    #expect(report.pruned.rateLimits == 1)
    #expect(report.receipts == 1, "older than a week")
    #expect(report.stations == StationPruneResult(stations: 1, devices: 1, messages: 1))
    #expect(report.claimsLapsed == 1, "not refreshed by a keyed request within the expiry")
    #expect(report.checkpoint == nil)
    #expect(
      report.fields.map { "\($0.0)=\($0.1)" } == [
        "dedup=2", "acks=0", "rateLimits=1", "receipts=1", "stationsPruned=1", "devicesPruned=1",
        "messagesPruned=1", "claimsLapsed=1", "checkpoint=replication",
      ])
    #expect(try database.receipts(station: "LIVE1").map(\.msgno) == ["2"])
    // A second run finds nothing left.
    let again = try database.runMaintenance(
      MaintenancePlan(stationExpiryMs: 7 * Self.day, checkpoint: .leaveToReplication), now: now)
    #expect(again.fields.map(\.1).allSatisfy { $0 == "0" || $0 == "replication" }, "\(again.fields)")
  }

  @Test func theWindowsAreJudgedByTheirOwnClock() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    try register(database, "N0CALL-7", now: Self.t0)
    _ = try database.storeMessages([incoming("N0CALL-7", "hello", windowMs: 60_000)], now: Self.t0)
    let plan = MaintenancePlan(stationExpiryMs: 7 * Self.day, checkpoint: .leaveToReplication)
    // The wall clock an hour ahead of the steady clock: the window still open on the steady clock stays.
    let ahead = try database.runMaintenance(plan, now: Self.t0 + 3_600_000, windowsNow: Self.t0 + 1_000)
    #expect(ahead.pruned.dedup == 0)
    #expect(try database.runMaintenance(plan, now: Self.t0 + 3_600_000).pruned.dedup == 1)
  }

  @Test func aTruncatingRunEmptiesTheLog() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    try register(database, "N0CALL-7", now: Self.t0)
    let report = try database.runMaintenance(
      MaintenancePlan(stationExpiryMs: 7 * Self.day, checkpoint: .truncate), now: Self.t0)
    #expect(report.checkpoint?.busy == false && report.checkpoint?.walFrames == 0)
    #expect(report.fields.suffix(3).map(\.0) == ["checkpoint", "walFrames", "checkpointBusy"])
    #expect(MaintenancePlan.defaultReceiptRetentionMs == 7 * Self.day)
  }
}
