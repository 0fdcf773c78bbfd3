// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import APRS
import TestSupport
import Testing

@testable import Store

/// `Database+Watches.swift`: the subscriptions the listener routes by, and the watches' states and deadlines.
@Suite struct DatabaseWatchesTests {
  private static let station = "N0CALL-7"

  private static func database() throws -> (Database, TempDirectory) {
    let directory = try TempDirectory()
    let database = try openStore(directory.database)
    try register(database, station, now: 1_000)
    return (database, directory)
  }

  @discardableResult
  private static func subscribe(
    _ database: Database, _ drafts: [SubscriptionDraft], station: String = station, now: Int64 = 2_000
  ) throws -> [Subscription] {
    try #require(try database.replaceSubscriptions(of: station, with: drafts, now: now))
  }

  private static func watch(_ call: String, silentFor: Int? = 60) -> SubscriptionDraft {
    SubscriptionDraft(rule: .watch(WatchRule(call: call, silentFor: silentFor)))
  }

  @Test func theVersionMovesWithEveryChangeOfTheSubscriptions() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    let start = try database.subscriptionsVersion()
    let stored = try Self.subscribe(database, [Self.watch("K1ABC")])
    let added = try database.subscriptionsVersion()
    #expect(added > start)
    try Self.subscribe(
      database, [SubscriptionDraft(id: stored[0].id, rule: .watch(WatchRule(call: "K1ABC")))])
    #expect(try database.subscriptionsVersion() > added, "an update moves it too")
    let updated = try database.subscriptionsVersion()
    try Self.subscribe(database, [])
    #expect(try database.subscriptionsVersion() > updated, "and a delete")
  }

  @Test func liveSubscriptionsAreThoseOfStationsHeardSince() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    try register(database, "N0CALL-1", now: 5_000)
    try Self.subscribe(
      database, [Self.watch("K1ABC"), SubscriptionDraft(rule: .bulletin(try BulletinPattern("BLN*")))])
    try Self.subscribe(database, [Self.watch("K2XYZ")], station: "N0CALL-1")
    let all = try database.liveSubscriptions(heardSince: 0)
    #expect(all.map(\.station) == ["N0CALL-1", Self.station, Self.station], "by station, each in its order")
    #expect(all.map(\.1.kind) == [.watch, .watch, .bulletin])
    #expect(try database.liveSubscriptions(heardSince: 1_001).map(\.station) == ["N0CALL-1"])
    #expect(try database.liveSubscriptions(heardSince: 5_001).isEmpty)
  }

  @Test func aWatchStartsWhenItIsSubscribed() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    let stored = try Self.subscribe(database, [Self.watch("K1ABC-9")])
    let found = try database.watches(of: "K1ABC-9", heardSince: 0, now: 9_000)
    #expect(
      found == [
        TrackedWatch(
          station: Self.station, subscription: stored[0].id, rule: WatchRule(call: "K1ABC-9", silentFor: 60),
          state: WatchState(startingAt: 2_000))
      ])
    #expect(try database.watches(of: "K1ABC", heardSince: 0, now: 9_000).isEmpty, "the exact SSID")
    #expect(try database.watches(of: "K1ABC-9", heardSince: 1_001, now: 9_000).isEmpty, "a station not heard")
    #expect(try database.nextWatchDeadline() == 62_000)
  }

  @Test func savedStatesSetTheDeadlinesOldestDueFirst() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    #expect(try database.nextWatchDeadline() == nil)
    let stored = try Self.subscribe(
      database,
      [
        Self.watch("K1AAA", silentFor: 100), Self.watch("K1BBB", silentFor: 10),
        Self.watch("K1CCC", silentFor: nil),
      ])
    #expect(try database.nextWatchDeadline() == 12_000, "a watch without silentFor has no deadline")
    #expect(try database.dueWatches(now: 11_999).isEmpty)
    #expect(try database.dueWatches(now: 102_000).map(\.subscription) == [stored[1].id, stored[0].id])
    #expect(try database.dueWatches(now: 102_000, limit: 1).map(\.subscription) == [stored[1].id])
    // Reported silent: no deadline until heard again.
    var silent = try #require(try database.dueWatches(now: 12_000).first)
    silent.state.silenceReported = true
    try database.saveWatchState(silent)
    #expect(try database.nextWatchDeadline() == 102_000)
    #expect(try database.watches(of: "K1BBB", heardSince: 0, now: 1).first?.state.silenceReported == true)
    silent.state = WatchState(startingAt: 50_000, emergencyAt: 49_000)
    try database.saveWatchState(silent)
    #expect(try database.nextWatchDeadline() == 60_000)
    #expect(try database.watches(of: "K1BBB", heardSince: 0, now: 1).first?.state == silent.state)
  }

  @Test func aChangeOfTheSubscriptionsKeepsTheStatesOfTheWatchesKept() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    let stored = try Self.subscribe(database, [Self.watch("K1AAA", silentFor: 100), Self.watch("K1BBB")])
    var heard = try #require(try database.watches(of: "K1AAA", heardSince: 0, now: 1).first)
    heard.state = WatchState(startingAt: 7_000, silenceReported: false, emergencyAt: 6_000)
    try database.saveWatchState(heard)
    // The first kept with another silentFor, the second dropped, a third new.
    try Self.subscribe(
      database,
      [
        SubscriptionDraft(id: stored[0].id, rule: .watch(WatchRule(call: "K1AAA", silentFor: 30))),
        Self.watch("K1CCC"),
      ],
      now: 8_000)
    #expect(try database.watches(of: "K1AAA", heardSince: 0, now: 1).first?.state == heard.state)
    #expect(try database.nextWatchDeadline() == 37_000, "the new silentFor moves the deadline")
    #expect(
      try database.watches(of: "K1CCC", heardSince: 0, now: 1).first?.state == WatchState(startingAt: 8_000))
    #expect(try count(database, "watch_states") == 2, "the dropped watch's state is gone")
  }

  @Test func theEntriesOfAKindNoLongerSubscribedGo() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    let stored = try Self.subscribe(
      database, [SubscriptionDraft(rule: .bulletin(try BulletinPattern("BLN*")))])
    _ = try database.storeMessages(
      [
        incoming(Self.station, "direct"),
        IncomingMessage(
          station: Self.station, peer: "WX1ABC", text: "bulletin", msgno: nil, dedupKey: "b",
          dedupWindowMs: 60_000,
          to: "BLN1", entry: SubscriptionEntry(kind: .bulletin, subscription: stored[0].id)),
      ], now: 3_000)
    try Self.subscribe(database, [stored.map { SubscriptionDraft(id: $0.id, rule: $0.rule) }[0]], now: 4_000)
    #expect(try count(database, "messages") == 2, "still subscribed")
    try Self.subscribe(database, [Self.watch("K1ABC")], now: 5_000)
    #expect(try database.recentMessages(station: Self.station, limit: 10).map(\.text) == ["direct"])
  }
}
