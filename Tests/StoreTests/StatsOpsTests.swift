import Foundation
import TestSupport
import Testing

@testable import Store

private let day: Int64 = 86_400_000
private let t0: Int64 = 1_800_000_000_000

/// The operator views: `stats`, `stationSummaries`, `recentMessages`.
@Suite struct StatsOpsTests {
  @Test func statsCountOneSnapshot() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    let empty = try database.stats(now: t0, expiryMs: 7 * day)
    #expect(empty.stations == 0 && empty.totalMessages == 0 && empty.lease == nil)
    #expect(empty.schemaVersion == Database.latestSchemaVersion)
    #expect(empty.databaseBytes > 0)

    try register(database, "N0CALL-7", token: "fcm-1", now: t0)
    // A read marker moves the cursor, but no message is stored yet: there is no newest message.
    _ = try database.markRead(station: "N0CALL-7", peer: "*", upTo: 1, now: t0 + 1)
    #expect(try database.stats(now: t0 + 2, expiryMs: 7 * day).lastMessageTimestamp == 0)
    try register(database, "N0CALL-8", token: "fcm-2", now: t0 - 8 * day)
    try register(database, "KJ7ABC", platform: .ios, token: "abcd", now: t0)
    try register(database, "DESK1", platform: nil, now: t0)
    _ = try database.storeMessages(
      [
        incoming("N0CALL-7", "hi"), incoming("N0CALL-7", "ho"), incoming("KJ7ABC", "yo"),
        incoming("KJ7ABC", "out", direction: .sent),
      ], now: t0 + 5)
    let due = try database.dueOutbox(now: t0 + 10)
    try database.failOutbox(ids: [due[0].id])
    _ = try database.acquireLease(holder: "host:1", now: t0, ttlMs: 30_000)

    let stats = try database.stats(now: t0 + 10, expiryMs: 7 * day)
    #expect(stats.stations == 4)
    #expect(stats.liveStations == 3)
    #expect(stats.devices[.android] == DeviceCount(total: 2, live: 1))
    #expect(stats.devices[.ios] == DeviceCount(total: 1, live: 1))
    #expect(stats.messages == [.received: 3, .sent: 1])
    #expect(stats.outboxPending == 2)
    #expect(stats.outboxFailed == 1)
    #expect(stats.oldestPendingAt == t0 + 5)
    #expect(stats.lastMessageTimestamp >= t0 + 5)
    #expect(
      stats.lastMessageTimestamp
        == (try database.recentMessages(station: "KJ7ABC", limit: 5).map(\.timestamp).max() ?? 0))
    #expect(stats.lease?.holder == "host:1")
  }

  @Test func summariesAndRecentMessagesAreReadOnly() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL-7", token: "fcm-1", now: t0)
    try register(database, "OLD1", now: t0 - 9 * day)
    try register(database, "CLEAR1", platform: nil, now: t0)
    try database.setAvatar("N0CALL-7", icon: "dog", image: nil, hash: "icon:dog", now: t0)
    try database.setAvatar("CLEAR1", icon: nil, image: nil, hash: "", now: t0)
    for index in 1...5 {
      _ = try database.storeMessages(
        [incoming("N0CALL-7", "m\(index)", msgno: "\(index)")], now: t0 + Int64(index))
    }

    let all = try database.stationSummaries(now: t0 + 10, expiryMs: 7 * day)
    #expect(all.map(\.address) == ["CLEAR1", "N0CALL-7", "OLD1"])
    #expect(all.map(\.live) == [true, true, false])
    #expect(all.map(\.avatar) == [.cleared, .set, .none])
    #expect(all.map(\.devices) == [0, 1, 0])
    #expect(all.map(\.messages) == [0, 5, 0])
    #expect(all[0].platform == nil && all[1].platform == .android)
    let live = try database.stationSummaries(now: t0 + 10, expiryMs: 7 * day, includeExpired: false)
    #expect(live.map(\.address) == ["CLEAR1", "N0CALL-7"])

    let cursor = try database.station("N0CALL-7")?.lastSyncCursor
    let newest = try database.recentMessages(station: "n0call-7", limit: 3)
    #expect(newest.map(\.text) == ["m3", "m4", "m5"])
    #expect(newest.map(\.msgno) == ["3", "4", "5"])
    #expect(try database.recentMessages(station: "N0CALL-7", limit: 0).isEmpty)
    #expect(try database.recentMessages(station: "NOBODY", limit: 10).isEmpty)
    #expect(try database.station("N0CALL-7")?.lastSyncCursor == cursor)
  }
}
