import TestSupport
import Testing

@testable import Store

@Suite struct MessageTests {
  @Test func ringKeepsTheNewestFiftyByDefault() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(database.options.ringSize == 50)
    try register(database, "N0CALL")
    try register(database, "K1ABC")
    for index in 0..<60 {
      _ = try database.storeMessages([incoming("N0CALL", "m\(index)")], now: Int64(1_000 + index))
    }
    _ = try database.storeMessages([incoming("K1ABC", "other")], now: 2_000)
    let texts = try database.sync(station: "N0CALL", since: 0, now: 3_000).messages.map(\.text)
    #expect(texts == (10..<60).map { "m\($0)" })
    #expect(try count(database, "messages", where: "station = 'N0CALL'") == 50)
    #expect(
      try count(database, "outbox", where: "station = 'N0CALL'") == 50, "pushes of rolled-off messages go too"
    )
    #expect(try database.sync(station: "K1ABC", since: 0, now: 3_000).messages.map(\.text) == ["other"])
  }

  @Test func ringSizeIsConfigurableAndTrimmedInTheSameBatch() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database, options: StoreOptions(ringSize: 3))
    defer { database.close() }
    try register(database, "N0CALL")
    let outcomes = try database.storeMessages((0..<5).map { incoming("N0CALL", "m\($0)") }, now: 1_000)
    #expect(outcomes.count == 5)
    #expect(
      try database.sync(station: "N0CALL", since: 0, now: 2_000).messages.map(\.text) == ["m2", "m3", "m4"])
    #expect(throws: StoreError.self) { try Database(path: dir.database, options: StoreOptions(ringSize: 0)) }
  }

  @Test func duplicatesWithinTheWindowAreStoredOnce() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL")
    let message = incoming("N0CALL", "hello", msgno: "7", key: "KJ7ABC>N0CALL:7:hello", windowMs: 3_600_000)
    let first = try database.storeMessages([message], now: 10_000)
    guard case .stored = first[0] else {
      Issue.record("first copy not stored: \(first)")
      return
    }
    #expect(try database.storeMessages([message], now: 40_000) == [.duplicate])
    #expect(try database.storeMessages([message, message], now: 3_609_999) == [.duplicate, .duplicate])
    // After the window the same key is a new message (msgno counters wrap).
    let later = try database.storeMessages([message, message], now: 3_610_000)
    #expect(later.count == 2)
    if case .stored = later[0] {} else { Issue.record("copy after the window not stored: \(later)") }
    #expect(later[1] == .duplicate, "a copy within the same batch is a duplicate")
    #expect(try database.sync(station: "N0CALL", since: 0, now: 4_000_000).messages.count == 2)
    #expect(try count(database, "outbox") == 2)
  }

  @Test func unknownStationsStoreNothing() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL")
    let outcomes = try database.storeMessages(
      [incoming("NOBODY", "x"), incoming("n0call", "y")], now: 5_000)
    #expect(outcomes == [.unknownStation, .stored(messageID: 1, timestamp: 5_000)])
    #expect(try count(database, "dedup") == 1, "an unknown station's message leaves no dedup key")
  }

  @Test func timestampsStrictlyIncreaseEvenWhenTheClockStallsOrGoesBack() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL")
    try register(database, "K1ABC")
    var stamps: [Int64] = []
    for (index, now) in [Int64(1_000), 1_000, 1_000, 500, 2_000, 1_999].enumerated() {
      let station = index.isMultiple(of: 2) ? "N0CALL" : "K1ABC"
      for outcome in try database.storeMessages([incoming(station, "m\(index)")], now: now) {
        if case .stored(_, let timestamp) = outcome { stamps.append(timestamp) }
      }
    }
    #expect(stamps == [1_000, 1_001, 1_002, 1_003, 2_000, 2_001])
    #expect(try database.lastMessageTimestamp() == 2_001)
    // Deleting stations never moves the high-water mark back.
    try database.deleteStation("N0CALL")
    try database.deleteStation("K1ABC")
    try register(database, "N0CALL")
    let after = try database.storeMessages([incoming("N0CALL", "after")], now: 1)
    guard case .stored(_, let timestamp) = after.first else {
      Issue.record("not stored: \(after)")
      return
    }
    #expect(timestamp == 2_002)
  }

  @Test func batchIsOneTransaction() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL")
    // A message the store refuses (an empty dedup key) fails the batch before anything is stored; a
    // direction other than received or sent cannot be expressed at all.
    #expect(MessageDirection(rawValue: "sideways") == nil)
    #expect(throws: StoreError.self) {
      try database.storeMessages([incoming("N0CALL", "ok"), incoming("N0CALL", "bad", key: "")], now: 1)
    }
    // A failure half-way (here: a UNIQUE timestamp collision forced through the meta row)
    // leaves nothing behind.
    _ = try database.storeMessages([incoming("N0CALL", "first")], now: 100)
    try database.execute("UPDATE meta SET value = '0' WHERE key = 'last_message_ts'")
    #expect(throws: StoreError.self) {
      try database.storeMessages([incoming("N0CALL", "a"), incoming("N0CALL", "b")], now: 99)
    }
    #expect(try database.sync(station: "N0CALL", since: 0, now: 1_000).messages.map(\.text) == ["first"])
    #expect(try count(database, "dedup") == 1)
    #expect(try count(database, "outbox") == 1)
  }

  @Test func sentMessagesAreStoredWithoutPush() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL")
    _ = try database.storeMessages([incoming("N0CALL", "out", from: "K1ABC", direction: .sent)], now: 10)
    let messages = try database.sync(station: "N0CALL", since: 0, now: 20).messages
    #expect(
      messages == [StoredMessage(direction: .sent, peer: "K1ABC", text: "out", msgno: nil, timestamp: 10)])
    #expect(try count(database, "outbox") == 0)
  }

  @Test func ackIsDueAtMostOncePerInterval() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    let other = try openStore(dir.database)
    defer { other.close() }
    #expect(try database.ackDue(key: "k", now: 100_000, minIntervalMs: 30_000))
    #expect(try database.ackDue(key: "k", now: 100_001, minIntervalMs: 30_000) == false)
    #expect(
      try other.ackDue(key: "k", now: 129_999, minIntervalMs: 30_000) == false, "shared across connections")
    #expect(try database.ackDue(key: "other", now: 129_999, minIntervalMs: 30_000))
    #expect(try other.ackDue(key: "k", now: 130_000, minIntervalMs: 30_000))
    #expect(
      try database.ackDue(key: "k", now: 159_999, minIntervalMs: 30_000) == false, "the window restarts")
    #expect(try database.ackDue(key: "k", now: 160_000, minIntervalMs: 30_000))
  }

  @Test func outboxHoldsPushesUntilCompleted() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL")
    _ = try database.storeMessages(
      [incoming("N0CALL", "one", msgno: "1"), incoming("N0CALL", "two", msgno: "2")], now: 1_000)
    let due = try database.dueOutbox(now: 1_000)
    #expect(due.map(\.message.text) == ["one", "two"])
    #expect(due.map(\.message.msgno) == ["1", "2"])
    #expect(due.allSatisfy { $0.station == "N0CALL" && $0.attempts == 0 && $0.createdAt == 1_000 })
    try database.rescheduleOutbox(ids: [due[0].id], nextAttemptAt: 5_000)
    #expect(try database.dueOutbox(now: 4_999).map(\.id) == [due[1].id])
    try database.completeOutbox(ids: [due[1].id])
    let retried = try database.dueOutbox(now: 5_000)
    #expect(retried.map(\.id) == [due[0].id] && retried.first?.attempts == 1)
    try database.failOutbox(ids: [due[0].id])
    #expect(try database.dueOutbox(now: 10_000).isEmpty)
    #expect(try count(database, "outbox", where: "state = 'failed'") == 1)
  }

  @Test func unpulledCountFollowsTheSyncCursor() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL")
    _ = try database.storeMessages([incoming("N0CALL", "a"), incoming("N0CALL", "b")], now: 1_000)
    #expect(try database.unpulledCount(station: "N0CALL") == 2)
    let synced = try database.sync(station: "N0CALL", since: 0, now: 2_000)
    #expect(try database.station("N0CALL")?.lastSyncCursor == synced.serverTime)
    #expect(try database.station("N0CALL")?.lastSyncAt == 2_000)
    #expect(try database.unpulledCount(station: "N0CALL") == 0)
    _ = try database.storeMessages([incoming("N0CALL", "c")], now: 3_000)
    #expect(try database.unpulledCount(station: "N0CALL") == 1)
    // An older cursor does not move the stored one back.
    _ = try database.sync(station: "N0CALL", since: 0, now: 4_000)
    _ = try database.sync(station: "N0CALL", since: 5, now: 5_000)
    #expect(try database.station("N0CALL")?.lastSyncCursor == 3_000)
    #expect(try database.station("N0CALL")?.lastSyncAt == 4_000)
  }
}
