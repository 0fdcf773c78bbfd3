// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import TestSupport
import Testing

@testable import Store

/// `Database+Messages.swift`: storing what the listener hears, the paged sync, and the reads of a push.
/// (The ring, dedup and cursor under concurrency have their own suites: `MessageTests`, `StationDedupTests`,
/// `CursorTests`, `MessageActivityTests`.)
@Suite struct DatabaseMessagesTests {
  private static let station = "N0CALL-7"

  /// A database with ``station`` registered and a ring that holds `ringSize`.
  private static func database(ringSize: Int = 50) throws -> (Database, TempDirectory) {
    let directory = try TempDirectory()
    let database = try openStore(directory.database, options: StoreOptions(ringSize: ringSize))
    try register(database, station)
    return (database, directory)
  }

  @Test func anEmptyDedupKeyRefusesTheWholeBatch() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    #expect(try database.storeMessages([], now: 1).isEmpty)
    #expect(throws: StoreError.invalidArgument("empty dedup key")) {
      try database.storeMessages(
        [incoming(Self.station, "fine"), incoming(Self.station, "bad", key: "")], now: 1)
    }
    #expect(try count(database, "messages") == 0)
    #expect(try count(database, "dedup") == 0)
    #expect(try database.lastMessageTimestamp() == 0)
  }

  @Test func theDedupWindowIsOnTheSteadyClockNotTheStamp() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    let first = try database.storeMessages([incoming(Self.station, "hi", windowMs: 60_000)], now: 1_000)
    // The wall clock stepped an hour ahead; the steady clock says 30 s.
    let copy = try database.storeMessages(
      [incoming(Self.station, "hi", windowMs: 60_000)], now: 31_000, stampedAt: 3_601_000)
    #expect(copy == [.duplicate])
    // Past the window on the steady clock, whatever the stamp: stored, stamped by the wall clock.
    let later = try database.storeMessages(
      [incoming(Self.station, "hi", windowMs: 60_000)], now: 61_000, stampedAt: 500)
    guard case .stored(_, let firstTimestamp) = first.first, case .stored(_, let laterTimestamp) = later.first
    else {
      Issue.record("not stored: \(first) \(later)")
      return
    }
    #expect(firstTimestamp == 1_000 && laterTimestamp == 1_001, "the stamp never goes back")
  }

  @Test func aSyncAnswersAPageAndTheCursorGoesOnFromItsLast() throws {
    let (database, directory) = try Self.database(ringSize: 200)
    defer { directory.remove() }
    #expect(Database.pageSize(for: []) == 50 && Database.pageSize(for: [.inbox]) == 100)
    #expect(Database.pageSize(for: [.ssids, .subscriptions]) == 50)
    _ = try database.storeMessages((1...120).map { incoming(Self.station, "m\($0)") }, now: 1_000)
    let first = try database.sync(station: Self.station, since: 0, now: 5_000, countsAsPull: false)
    #expect(first.messages.count == 50 && first.more)
    #expect(first.serverTime == 1_049 && first.newestTimestamp == 1_119, "the page's last, not the newest")
    let inbox = try database.sync(
      station: Self.station, since: 0, now: 5_000, countsAsPull: false, wants: [.inbox])
    #expect(inbox.messages.count == 100 && inbox.more && inbox.serverTime == 1_099)
    let last = try database.sync(
      station: Self.station, since: 1_099, now: 5_000, countsAsPull: false, wants: [.inbox])
    #expect(
      last.messages.map(\.text) == (101...120).map { "m\($0)" } && !last.more && last.serverTime == 1_119)
    #expect(try database.sync(station: Self.station, since: 1_119, now: 5_000).messages.isEmpty)
    // Exactly a page: no more.
    let exact = try database.sync(station: Self.station, since: 1_069, now: 5_000, countsAsPull: false)
    #expect(exact.messages.count == 50 && !exact.more && exact.serverTime == 1_119)
  }

  @Test func aSyncOfAnUnknownStationIsEmptyAndWritesNothing() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    _ = try database.storeMessages([incoming(Self.station, "hi")], now: 1_000)
    let answer = try database.sync(station: "NOBODY-1", since: 10, now: 5_000)
    #expect(answer.messages.isEmpty && answer.serverTime == 1_000 && !answer.more)
    #expect(
      try database.sync(station: "NOBODY-1", since: 9_000, now: 5_000).serverTime == 9_000,
      "never before since")
    #expect(try count(database, "stations") == 1)
  }

  @Test func onlyAPullMovesTheCursor() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    _ = try database.storeMessages(
      [incoming(Self.station, "one"), incoming(Self.station, "two")], now: 1_000)
    #expect(try database.unpulledCount(station: Self.station) == 2)
    _ = try database.sync(station: Self.station, since: 0, now: 2_000, countsAsPull: false)
    #expect(try database.unpulledCount(station: Self.station) == 2, "a keyless read of a claimed station")
    // The cursor is the answer's serverTime, whatever `since` the device gave.
    _ = try database.sync(station: "n0call-7", since: 1_000, now: 2_000)
    #expect(try database.unpulledCount(station: Self.station) == 0)
    #expect(try database.station(Self.station)?.lastSyncCursor == 1_001)
    _ = try database.sync(station: Self.station, since: 0, now: 3_000)
    #expect(try database.station(Self.station)?.lastSyncCursor == 1_001, "a second sync changes nothing")
  }

  @Test func anInboxSyncCarriesDropsTheOldestHeldAndTheMarkers() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    _ = try database.storeMessages(
      [incoming(Self.station, "one"), incoming(Self.station, "two")], now: 1_000)
    _ = try database.markRead(station: Self.station, peer: "*", upTo: 1_000, now: 1_500)
    let plain = try database.sync(station: Self.station, since: 0, now: 2_000, countsAsPull: false)
    #expect(plain.read.isEmpty && plain.oldestHeld == nil && plain.dropped == 0, "only with want inbox")
    let inbox = try database.sync(
      station: Self.station, since: 0, now: 2_000, countsAsPull: false, wants: [.inbox])
    #expect(inbox.read == ["*": 1_000] && inbox.oldestHeld == 1_000 && inbox.dropped == 0)
    #expect(inbox.serverTime == 1_500, "the marker's stamp is on the cursor")
  }

  @Test func thePushReadsLeaveOutWhatWasReadOrSent() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    _ = try database.storeMessages(
      [
        incoming(Self.station, "a1", from: "A1AAA"), incoming(Self.station, "b1", from: "B1BBB"),
        incoming(Self.station, "c1", from: "C1CCC"), incoming(Self.station, "a2", from: "A1AAA"),
        incoming(Self.station, "out", from: "D1DDD", direction: .sent),
      ], now: 1_000)
    #expect(try database.unpulledCount(station: Self.station) == 4)
    #expect(
      try database.unpulledSenders(station: Self.station) == ["A1AAA", "C1CCC", "B1BBB"], "newest first, once"
    )
    #expect(try database.unpulledSenders(station: Self.station, limit: 2) == ["A1AAA", "C1CCC"])
    _ = try database.markRead(station: Self.station, peer: "A1AAA", upTo: 1_003, now: 2_000)
    #expect(try database.unpulledCount(station: Self.station) == 2)
    #expect(try database.unpulledSenders(station: Self.station) == ["C1CCC", "B1BBB"])
    _ = try database.markRead(station: Self.station, peer: "*", upTo: 1_001, now: 2_001)
    #expect(try database.unpulledSenders(station: Self.station) == ["C1CCC"])
    #expect(try database.unpulledCount(station: "NOBODY-1") == 0)
    #expect(try database.unpulledSenders(station: "NOBODY-1").isEmpty)
  }

  @Test func recentMessagesAreTheNewestOldestFirstWithoutAPull() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    _ = try database.storeMessages((1...5).map { incoming(Self.station, "m\($0)") }, now: 1_000)
    #expect(try database.recentMessages(station: "n0call-7", limit: 2).map(\.text) == ["m4", "m5"])
    #expect(try database.recentMessages(station: Self.station, limit: 100).count == 5)
    #expect(try database.recentMessages(station: Self.station, limit: -1).isEmpty)
    #expect(try database.unpulledCount(station: Self.station) == 5, "the cursor did not move")
  }
}
