// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import Foundation
import TestSupport
import Testing

@testable import Store

private let day: Int64 = 86_400_000
private let t0: Int64 = 1_800_000_000_000

/// Pruning, checkpoints and the online backup (`Database+Maintenance.swift`), with the time passed
/// in: no test sleeps to make something expire.
@Suite struct DatabaseMaintenanceTests {
  @Test func pruningDeletesStationsAndTokensPastTheExpiryAndCountsThem() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "AAA1", token: "token-a", now: t0)
    try register(database, "BBB2", token: "token-b", now: t0)
    // B is heard again later, without its token: the station stays live, the token does not.
    try heartbeat(database, "BBB2", platform: nil, now: t0 + 5 * day)
    try register(database, "CCC3", platform: .ios, token: "cafe01", now: t0 + 6 * day)
    _ = try database.storeMessages([incoming("AAA1", "one"), incoming("AAA1", "two")], now: t0 + 1)
    #expect(try count(database, "outbox") == 2)

    // Exactly at the cutoff nothing goes.
    #expect(
      try database.pruneStations(now: t0 + 7 * day, expiryMs: 7 * day)
        == StationPruneResult(stations: 0, devices: 0, messages: 0))
    // One millisecond later A and both tokens last refreshed at t0 go, with A's messages and pushes.
    #expect(
      try database.pruneStations(now: t0 + 7 * day + 1, expiryMs: 7 * day)
        == StationPruneResult(stations: 1, devices: 2, messages: 2))
    #expect(try database.station("AAA1") == nil)
    #expect(try database.station("BBB2") != nil)
    #expect(try database.devices(of: "BBB2").isEmpty)
    #expect(try database.devices(of: "CCC3").map(\.token) == ["cafe01"])
    #expect(try count(database, "messages") == 0)
    #expect(try count(database, "outbox") == 0)
    #expect(try database.meta(Database.MaintenanceKey.stationsPruned) == "1")
    #expect(try database.meta(Database.MaintenanceKey.devicesPruned) == "2")
    #expect(try database.meta(Database.MaintenanceKey.lastPruneAt) == String(t0 + 7 * day + 1))

    // Nothing more to do: the totals stay.
    #expect(
      try database.pruneStations(now: t0 + 7 * day + 2, expiryMs: 7 * day)
        == StationPruneResult(stations: 0, devices: 0, messages: 0))
    #expect(try database.meta(Database.MaintenanceKey.stationsPruned) == "1")

    // A week after its heartbeat B goes too; C (registered a day later) stays.
    #expect(
      try database.pruneStations(now: t0 + 12 * day + 1, expiryMs: 7 * day)
        == StationPruneResult(stations: 1, devices: 0, messages: 0))
    #expect(try database.stationSummaries(now: t0 + 12 * day, expiryMs: 7 * day).map(\.address) == ["CCC3"])
    #expect(try database.meta(Database.MaintenanceKey.stationsPruned) == "2")
    #expect(throws: StoreError.self) { try database.pruneStations(now: t0, expiryMs: 0) }
  }

  @Test func pruningLeavesTheListenersLiveSetAlone() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    for (index, age) in [0, 3, 6, 8, 30].enumerated() {
      try register(database, "N\(index)CALL", token: "token-\(index)", now: t0 - Int64(age) * day)
    }
    let live = try database.liveStations(now: t0, expiryMs: 7 * day)
    let pruned = try database.pruneStations(now: t0, expiryMs: 7 * day)
    #expect(pruned.stations == 2)
    #expect(try database.liveStations(now: t0, expiryMs: 7 * day) == live)
    #expect(try database.stats(now: t0, expiryMs: 7 * day).stations == live.count)
  }

  @Test func aTruncatingCheckpointEmptiesTheWALOnceNoReaderHoldsItUp() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database, options: StoreOptions(busyTimeoutMs: 50, ringSize: 10_000))
    defer { database.close() }
    let reader = try openStore(dir.database)
    defer { reader.close() }
    try register(database, "N0CALL", now: t0)
    let text = String(repeating: "x", count: 60)
    for batch in 0..<20 {
      let messages = (0..<25).map { incoming("N0CALL", "\(batch)-\($0) \(text)") }
      _ = try database.storeMessages(messages, now: t0 + Int64(batch))
    }
    #expect(database.walFileBytes() > 0)

    let passive = try database.checkpoint(mode: .passive)
    #expect(!passive.busy)
    #expect(passive.walFrames > 0)
    #expect(passive.checkpointedFrames == passive.walFrames)

    // A reader on an old snapshot holds a truncating checkpoint up; nothing is lost meanwhile.
    try reader.execute("BEGIN")
    #expect(try reader.scalarText("SELECT count(*) FROM messages") == "500")
    _ = try database.storeMessages([incoming("N0CALL", "after the snapshot")], now: t0 + 100)
    let held = try database.checkpoint(mode: .truncate)
    #expect(held.busy)
    #expect(database.walFileBytes() > 0)
    try reader.execute("COMMIT")

    let truncated = try database.checkpoint(mode: .truncate)
    #expect(!truncated.busy)
    #expect(truncated.walFrames == 0)
    #expect(database.walFileBytes() == 0)
    #expect(try reader.scalarText("SELECT count(*) FROM messages") == "501")
    #expect(try reader.integrityCheck() == "ok")

    let readOnly = try Database(path: dir.database, options: StoreOptions(readOnly: true))
    defer { readOnly.close() }
    #expect(throws: StoreError.self) { try readOnly.checkpoint(mode: .passive) }
  }

  @Test func aBackupTakenUnderLoadHoldsEveryEarlierCommitAndNothingLater() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let options = StoreOptions(busyTimeoutMs: 5000, ringSize: 1_000_000)
    let setup = try openStore(dir.database, options: options)
    defer { setup.close() }
    // Some bulk, so the copy takes many steps.
    let filler = String(repeating: "f", count: 400)
    for station in 0..<10 {
      try register(setup, "FILL\(station)", now: t0)
      _ = try setup.storeMessages(
        (0..<50).map { incoming("FILL\(station)", "\($0) \(filler)") }, now: t0 + Int64(station))
    }
    try register(setup, "N0CALL-7", now: t0)

    let committed = Problems()  // ids, as text, in commit order
    let stop = Flag()
    let failures = Problems()
    let writer = Thread {
      do {
        let connection = try openStore(dir.database, options: options, migrate: false)
        defer { connection.close() }
        var sequence: Int64 = 0
        while !stop.isRaised {
          sequence += 1
          let outcome = try connection.storeMessages(
            [incoming("N0CALL-7", "load \(sequence)")], now: t0 + 1_000 + sequence)
          guard case .stored(let id, _)? = outcome.first else {
            failures.add("not stored: \(outcome)")
            return
          }
          committed.add(String(id))
        }
      } catch {
        failures.add("writer: \(error)")
      }
    }
    writer.start()
    defer { stop.raise() }
    #expect(waitFor { committed.all.count >= 50 })

    let source = try openStore(dir.database, migrate: false)
    defer { source.close() }
    let before = committed.all
    var countsDuringBackup: [Int] = []
    let output = dir.path + "/backup.sqlite"
    let result = try source.backup(to: output, pagesPerStep: 8, pauseMs: 2) { _, _ in
      countsDuringBackup.append(committed.all.count)
    }
    let after = committed.all
    stop.raise()
    #expect(waitFor { writer.isFinished })
    #expect(failures.all.isEmpty, "\(failures.all)")
    #expect(result.steps > 5)
    #expect(result.bytes == Int64(result.pages) * 4096)
    // The writer went on committing while pages were copied.
    #expect((countsDuringBackup.last ?? 0) > (countsDuringBackup.first ?? 0))

    let copy = try Database(path: output, options: StoreOptions(readOnly: true))
    defer { copy.close() }
    #expect(try copy.integrityCheck() == "ok")
    #expect(try copy.scalarText("PRAGMA journal_mode") == "delete")
    #expect(!FileManager.default.fileExists(atPath: output + "-wal"))
    let copied = try copy.columnTexts(
      "SELECT id FROM messages WHERE station = 'N0CALL-7' ORDER BY id")
    // One snapshot: every commit before the backup began, then a gap-free prefix of the rest.
    #expect(copied.count >= before.count)
    #expect(copied.count <= after.count)
    #expect(copied == Array(after.prefix(copied.count)))
    #expect(Array(copied.prefix(before.count)) == before)
    #expect(try copy.scalarText("SELECT count(*) FROM messages WHERE station LIKE 'FILL%'") == "500")
  }

  @Test func aBackupNeverOverwritesAFile() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    let output = dir.path + "/exists.sqlite"
    _ = FileManager.default.createFile(atPath: output, contents: Data("precious".utf8))
    #expect(throws: StoreError.self) { try database.backup(to: output) }
    #expect(FileManager.default.contents(atPath: output) == Data("precious".utf8))
    #expect(throws: StoreError.self) { try database.backup(to: dir.path + "/missing/dir/copy.sqlite") }
    #expect(!FileManager.default.fileExists(atPath: dir.path + "/missing"))
  }
}

/// Polls `condition` for up to 20 s.
private func waitFor(_ condition: () -> Bool) -> Bool {
  let deadline = Date().addingTimeInterval(20)
  while !condition() {
    if Date() > deadline { return false }
    usleep(2_000)
  }
  return true
}
