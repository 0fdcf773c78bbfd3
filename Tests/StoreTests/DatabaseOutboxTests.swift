// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import TestSupport
import Testing

@testable import Store

/// `Database+Outbox.swift`: the pushes queued with received messages and the push sender's bookkeeping.
@Suite struct DatabaseOutboxTests {
  private static let station = "N0CALL-7"

  /// A database with ``station`` and `texts` received at 1_000, 1_001, …
  private static func database(_ texts: [String], options: StoreOptions = .init()) throws -> (
    Database, TempDirectory
  ) {
    let directory = try TempDirectory()
    let database = try openStore(directory.database, options: options)
    try register(database, station, token: "tok")
    for (index, text) in texts.enumerated() {
      _ = try database.storeMessages([incoming(station, text)], now: 1_000 + Int64(index))
    }
    return (database, directory)
  }

  @Test func duePushesComeOldestFirstWithTheirMessagesUpToTheLimit() throws {
    let (database, directory) = try Self.database(["one", "two", "three"])
    defer { directory.remove() }
    _ = try database.storeMessages([incoming(Self.station, "sent", direction: .sent)], now: 2_000)
    let due = try database.dueOutbox(now: 1_001)
    #expect(
      due.map(\.message.text) == ["one", "two"], "not one queued after now; a sent message queues none")
    #expect(due[0].station == Self.station && due[0].attempts == 0 && due[0].createdAt == 1_000)
    #expect(due[0].nextAttemptAt == 1_000 && due[0].message.timestamp == 1_000)
    #expect(due[0].message.direction == .received && due[0].message.peer == "KJ7ABC-7")
    #expect(try database.dueOutbox(now: 5_000, limit: 1).map(\.message.text) == ["one"])
    #expect(try database.dueOutbox(now: 5_000).count == 3)
    #expect(try database.dueOutbox(now: 999).isEmpty)
  }

  @Test func theNextAttemptIsTheEarliestPendingPushAfterNow() throws {
    let (database, directory) = try Self.database(["one", "two", "three"])
    defer { directory.remove() }
    let ids = try database.dueOutbox(now: 5_000).map(\.id)
    #expect(try database.nextOutboxAttempt(after: 5_000) == nil, "every push is due: none waits")
    #expect(try database.nextOutboxAttempt(after: 1_000) == 1_001)
    try database.rescheduleOutbox(ids: [ids[0]], nextAttemptAt: 9_000)
    try database.rescheduleOutbox(ids: [ids[1]], nextAttemptAt: 7_000)
    try database.failOutbox(ids: [ids[2]])
    #expect(try database.nextOutboxAttempt(after: 5_000) == 7_000)
    try database.completeOutbox(ids: [ids[1]])
    #expect(try database.nextOutboxAttempt(after: 5_000) == 9_000, "a failed push never comes due")
    #expect(try database.nextOutboxAttempt(after: 9_000) == nil)
  }

  @Test func completedPushesGoRescheduledOnesWaitFailedOnesStay() throws {
    let (database, directory) = try Self.database(["one", "two", "three"])
    defer { directory.remove() }
    let ids = try database.dueOutbox(now: 5_000).map(\.id)
    try database.completeOutbox(ids: [])
    try database.rescheduleOutbox(ids: [], nextAttemptAt: 1)
    try database.failOutbox(ids: [])
    try database.completeOutbox(ids: [ids[0]])
    try database.rescheduleOutbox(ids: [ids[1]], nextAttemptAt: 9_000)
    try database.failOutbox(ids: [ids[2]])
    #expect(try database.dueOutbox(now: 8_999).isEmpty)
    let retried = try database.dueOutbox(now: 9_000)
    #expect(retried.map(\.id) == [ids[1]] && retried[0].attempts == 1 && retried[0].nextAttemptAt == 9_000)
    #expect(
      try count(database, "outbox", where: "state = 'failed' AND attempts = 1") == 1, "kept for inspection")
    #expect(try count(database, "outbox") == 2)
    // A second completion of the same id is no error.
    try database.completeOutbox(ids: [ids[0], ids[1]])
    #expect(try database.dueOutbox(now: 10_000).isEmpty)
  }

  @Test func aPushGoesWithItsMessageOffTheRing() throws {
    let (database, directory) = try Self.database(
      ["one", "two", "three"], options: StoreOptions(ringSize: 2))
    defer { directory.remove() }
    #expect(try database.dueOutbox(now: 5_000).map(\.message.text) == ["two", "three"])
  }

  @Test func oneRoundsResultsAreAppliedTogether() throws {
    let (database, directory) = try Self.database(["one", "two", "three"])
    defer { directory.remove() }
    try register(database, "N0CALL-8", platform: .ios, token: "ios-token", now: 500)
    try register(database, "N0CALL-9", token: "fresh", now: 3_000)
    #expect(try database.applyPushResults(completed: [], failed: [], rescheduled: [], deadTokens: []).isEmpty)
    let ids = try database.dueOutbox(now: 5_000).map(\.id)
    let deleted = try database.applyPushResults(
      completed: [ids[0]], failed: [ids[1]], rescheduled: [(ids[2], 7_000)],
      deadTokens: [("tok", nil), ("fresh", 2_000), ("unknown", nil)],
      apnsEnvironments: [("ios-token", .sandbox)])
    #expect(deleted == ["tok"], "a token refreshed since the push is kept, an unknown one was not deleted")
    #expect(try database.devices(of: Self.station).isEmpty)
    #expect(try database.devices(of: "N0CALL-9").map(\.token) == ["fresh"])
    #expect(try database.devices(of: "N0CALL-8").first?.apnsEnvironment == .sandbox)
    #expect(try database.dueOutbox(now: 6_999).isEmpty)
    #expect(try database.dueOutbox(now: 7_000).map(\.id) == [ids[2]])
    #expect(try count(database, "outbox", where: "state = 'failed'") == 1)
  }

  @Test func anEnvironmentIsRememberedOnlyForAnIOSDevice() throws {
    let (database, directory) = try Self.database([])
    defer { directory.remove() }
    _ = try database.applyPushResults(
      completed: [], failed: [], rescheduled: [], deadTokens: [], apnsEnvironments: [("tok", .production)])
    #expect(try database.devices(of: Self.station).first?.apnsEnvironment == nil, "an Android token")
  }
}
