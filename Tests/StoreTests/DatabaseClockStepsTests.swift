// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import TestSupport
import Testing

@testable import Store

/// `Database+ClockSteps.swift`: what is in flight moved by a step of the wall clock.
@Suite struct DatabaseClockStepsTests {
  private static let limits = SendLimits(perMinute: 10, inFlight: 20)

  private static func send(_ database: Database, _ text: String, now: Int64) throws {
    _ = try database.createSend(
      NewSend(station: "OH7LZB-9", addressee: "KJ7ABC-7", text: text, clientId: nil), limits: limits, now: now
    )
  }

  /// Every send's `created_at last_sent_at next_at expires_at state`, by message id.
  private static func sendTimes(_ database: Database) throws -> [String] {
    try database.columnTexts(
      """
      SELECT created_at || ' ' || coalesce(last_sent_at, '-') || ' ' || coalesce(next_at, '-') || ' '
        || coalesce(expires_at, '-') || ' ' || state
      FROM sends ORDER BY message_id
      """)
  }

  @Test func theNewestIdsAreZeroWhenEmpty() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    #expect(try database.newestSendID() == 0)
    #expect(try database.newestOutboxID() == 0)
    #expect(try database.shiftPendingSends(byMs: 1_000, throughID: 10) == 0)
    #expect(try database.shiftOutbox(byMs: 1_000, throughID: 10) == 0)
  }

  @Test func pendingSendsUpToTheIdMoveByTheStep() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    try register(database, "OH7LZB-9")
    try Self.send(database, "one", now: 10_000)
    try Self.send(database, "two", now: 20_000)
    let through = try database.newestSendID()
    try Self.send(database, "after the step", now: 30_000)
    #expect(try database.newestSendID() > through)
    let before = try Self.sendTimes(database)
    #expect(try database.shiftPendingSends(byMs: 0, throughID: .max) == 0, "no step, nothing moves")
    #expect(try database.shiftPendingSends(byMs: -3_600_000, throughID: through) == 2)
    let after = try Self.sendTimes(database)
    #expect(after[2] == before[2], "a send stamped after the step stays")
    for index in 0..<2 {
      let was = before[index].split(separator: " ")
      let now = after[index].split(separator: " ")
      for column in 0..<4 where was[column] != "-" {
        #expect(Int64(now[column]) == Int64(was[column])! - 3_600_000, "\(before[index]) → \(after[index])")
      }
    }
  }

  @Test func aFinishedSendDoesNotMove() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    try register(database, "OH7LZB-9")
    _ = try database.createSend(
      NewSend(station: "OH7LZB-9", addressee: "KJ7ABC-7", text: "cancel me", clientId: "c1"),
      limits: Self.limits, now: 10_000)
    _ = try database.cancelSend(station: "OH7LZB-9", clientId: "c1", now: 10_001)
    let before = try Self.sendTimes(database)
    #expect(try database.shiftPendingSends(byMs: 3_600_000, throughID: .max) == 0)
    #expect(try Self.sendTimes(database) == before)
  }

  @Test func outboxRowsUpToTheIdMoveByTheStep() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    try register(database, "N0CALL-7")
    _ = try database.storeMessages([incoming("N0CALL-7", "one"), incoming("N0CALL-7", "two")], now: 10_000)
    let through = try database.newestOutboxID()
    _ = try database.storeMessages([incoming("N0CALL-7", "three")], now: 20_000)
    let times = "SELECT created_at || ' ' || next_attempt_at FROM outbox ORDER BY id"
    let before = try database.columnTexts(times)
    #expect(before.count == 3)
    #expect(try database.shiftOutbox(byMs: 0, throughID: .max) == 0)
    #expect(try database.shiftOutbox(byMs: 7_200_000, throughID: through) == 2)
    let after = try database.columnTexts(times)
    #expect(after[2] == before[2])
    for index in 0..<2 {
      let was = before[index].split(separator: " ").map { Int64($0)! }
      #expect(after[index] == "\(was[0] + 7_200_000) \(was[1] + 7_200_000)")
    }
  }
}
