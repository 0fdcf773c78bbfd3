import Store
import TestSupport
import Testing

/// The store queries the push sender uses (in `Database+Messages.swift`, `Database+Stations.swift` and
/// `Database+Outbox.swift`).
@Suite struct PushStoreTests {
  @Test func unpulledSendersAreDistinctNewestFirstAndStopAtTheCursor() throws {
    let directory = try makeTemporaryDirectory("push-store")
    defer { removeDirectory(directory) }
    let database = try openMigrated(directory + "/db.sqlite")
    try registerStation(database, "N0CALL-7", token: "t1", now: 1000)
    _ = try database.storeMessages([message("N0CALL-7", "one", from: "AAA")], now: 2000)
    _ = try database.sync(station: "N0CALL-7", since: 0, now: 2500)
    _ = try database.storeMessages(
      [message("N0CALL-7", "two", from: "BBB"), message("N0CALL-7", "three", from: "CCC")], now: 3000)
    _ = try database.storeMessages([message("N0CALL-7", "four", from: "BBB")], now: 4000)
    #expect(try database.unpulledSenders(station: "n0call-7") == ["BBB", "CCC"])
    #expect(try database.unpulledCount(station: "N0CALL-7") == 3)
    #expect(try database.unpulledSenders(station: "N0CALL-7", limit: 1) == ["BBB"])
    #expect(try database.unpulledSenders(station: "NOBODY").isEmpty)
  }

  @Test func pushAvatarTellsStoredClearedAndNone() throws {
    let directory = try makeTemporaryDirectory("push-store")
    defer { removeDirectory(directory) }
    let database = try openMigrated(directory + "/db.sqlite")
    try registerStation(database, "STORED", now: 1000)
    try registerStation(database, "CLEARED", now: 1000)
    try registerStation(database, "NEVER", now: 1000)
    try database.setAvatar("STORED", icon: "radio", image: "iVBOR", hash: "h1", now: 2000)
    try database.setAvatar("CLEARED", icon: "radio", image: nil, hash: "icon:radio", now: 2000)
    try database.setAvatar("CLEARED", icon: nil, image: nil, hash: "", now: 3000)
    #expect(
      try database.pushAvatar(of: "stored") == .stored(Avatar(icon: "radio", image: "iVBOR", hash: "h1")))
    #expect(try database.pushAvatar(of: "CLEARED") == .cleared)
    #expect(try database.pushAvatar(of: "NEVER") == PushAvatar.none)
    #expect(try database.pushAvatar(of: "UNKNOWN") == PushAvatar.none)
  }

  @Test func aDeadTokenRefreshedAfterTheProvidersTimestampIsKept() throws {
    let directory = try makeTemporaryDirectory("push-store")
    defer { removeDirectory(directory) }
    let database = try openMigrated(directory + "/db.sqlite")
    try registerStation(database, "N0CALL", platform: .ios, token: "aa", now: 1000)
    try registerStation(database, "N0CALL", platform: .ios, token: "bb", now: 5000)
    #expect(try !database.deleteDevice(token: "bb", refreshedBefore: 4000))
    #expect(try database.deleteDevice(token: "aa", refreshedBefore: 4000))
    #expect(try database.devices(of: "N0CALL").map(\.token) == ["bb"])
  }

  @Test func pushResultsAreAppliedInOneTransaction() throws {
    let directory = try makeTemporaryDirectory("push-store")
    defer { removeDirectory(directory) }
    let database = try openMigrated(directory + "/db.sqlite")
    try registerStation(database, "N0CALL", token: "keep", now: 1000)
    try registerStation(database, "N0CALL", token: "dead", now: 1000)
    try registerStation(database, "N0CALL", token: "fresh", now: 9000)
    _ = try database.storeMessages(
      [message("N0CALL", "a"), message("N0CALL", "b"), message("N0CALL", "c")], now: 10_000)
    let ids = try database.dueOutbox(now: 10_000).map(\.id)
    try #require(ids.count == 3)
    let deleted = try database.applyPushResults(
      completed: [ids[0]], failed: [ids[1]], rescheduled: [(id: ids[2], nextAttemptAt: 20_000)],
      deadTokens: [(token: "dead", refreshedBefore: nil), (token: "fresh", refreshedBefore: 5000)])
    #expect(deleted == ["dead"])
    #expect(try database.dueOutbox(now: 19_999).isEmpty)
    let later = try database.dueOutbox(now: 20_000)
    #expect(later.map(\.id) == [ids[2]])
    #expect(later.first?.attempts == 1)
    #expect(Set(try database.devices(of: "N0CALL").map(\.token)) == ["keep", "fresh"])
  }
}
