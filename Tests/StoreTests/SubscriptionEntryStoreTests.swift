import APRS
import TestSupport
import Testing

@testable import Store

/// Subscription entries in the store: a ring of their own, shown and counted only for `want:["subscriptions"]`,
/// a sliding dedup window, and what a change of the subscriptions does to entries and watch states.
@Suite struct SubscriptionEntryStoreTests {
  static let t0: Int64 = 1_800_000_000_000

  private func bulletin(_ text: String, subscription: String = "s1") -> IncomingMessage {
    IncomingMessage(
      station: "N0CALL-7", peer: "WX1ABC", text: text, msgno: nil, dedupKey: "b" + text,
      dedupWindowMs: 60_000, to: "BLN1WX",
      entry: SubscriptionEntry(kind: .bulletin, subscription: subscription))
  }

  private func direct(_ text: String) -> IncomingMessage {
    IncomingMessage(
      station: "N0CALL-7", peer: "OH7AA", text: text, msgno: nil, dedupKey: "m" + text, dedupWindowMs: 60_000)
  }

  @Test func entriesHaveTheirOwnRingAndAreShownOnlyToThoseWhoAsk() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database, options: StoreOptions(ringSize: 3))
    defer { database.close() }
    try register(database, "N0CALL-7")
    _ = try database.storeMessages([direct("hello")], now: Self.t0)
    _ = try database.storeMessages((1...5).map { bulletin("wx \($0)") }, now: Self.t0 + 1)
    let plain = try database.sync(station: "N0CALL-7", since: 0, now: Self.t0 + 10, countsAsPull: false)
    #expect(plain.messages.map(\.text) == ["hello"], "an old client never sees them")
    let opted = try database.sync(
      station: "N0CALL-7", since: 0, now: Self.t0 + 10, countsAsPull: false, wants: .subscriptions)
    #expect(opted.messages.map(\.text) == ["hello", "wx 3", "wx 4", "wx 5"], "their ring keeps its newest 3")
    #expect(opted.messages.last?.entry == SubscriptionEntry(kind: .bulletin, subscription: "s1"))
    #expect(opted.messages.last?.to == "BLN1WX")
    #expect(try database.unpulledCount(station: "N0CALL-7") == 1)
    #expect(try database.unpulledCount(station: "N0CALL-7", wants: .subscriptions) == 4)
    #expect(try database.unpulledCount(station: "N0CALL-7", wants: .ssids) == 1)
  }

  @Test func aRepeatedEntryExtendsItsWindowAndAChangedTextIsNew() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    defer { database.close() }
    try register(database, "N0CALL-7")
    // The window is 60 s; copies every 40 s for 4 minutes stay one entry, because each extends it.
    var outcomes: [StoreOutcome] = []
    for copy in 0..<6 {
      outcomes += try database.storeMessages([bulletin("net tonight")], now: Self.t0 + Int64(copy) * 40_000)
    }
    #expect(outcomes.filter { if case .stored = $0 { true } else { false } }.count == 1)
    outcomes = try database.storeMessages([bulletin("net moved")], now: Self.t0 + 250_000)
    #expect(outcomes.count == 1 && outcomes[0] != .duplicate)
    // A direct message's window does not slide: after 60 s it is stored again.
    _ = try database.storeMessages([direct("ping")], now: Self.t0)
    _ = try database.storeMessages([direct("ping")], now: Self.t0 + 40_000)
    #expect(try database.storeMessages([direct("ping")], now: Self.t0 + 70_000) != [.duplicate])
  }

  @Test func removingTheLastSubscriptionOfAKindDeletesItsEntriesAndWatchesKeepTheirState() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    defer { database.close() }
    try register(database, "N0CALL-7")
    let version = try database.subscriptionsVersion()
    let first = try #require(
      try database.replaceSubscriptions(
        of: "N0CALL-7",
        with: [
          SubscriptionDraft(rule: .bulletin(try BulletinPattern("BLN*"))),
          SubscriptionDraft(rule: .watch(WatchRule(call: "K1ABC", silentFor: 7200))),
        ], now: Self.t0))
    #expect(try database.subscriptionsVersion() > version)
    _ = try database.storeMessages([bulletin("wx", subscription: first[0].id)], now: Self.t0 + 1)
    let watch = try #require(try database.watches(of: "K1ABC", heardSince: 0, now: Self.t0 + 5).first)
    #expect(watch.state.lastHeardAt == Self.t0, "a new watch starts when it was made")
    #expect(try database.nextWatchDeadline() == Self.t0 + 7_200_000)
    #expect(try database.dueWatches(now: Self.t0 + 7_199_999).isEmpty)
    #expect(try database.dueWatches(now: Self.t0 + 7_200_000).map(\.subscription) == [first[1].id])
    var heard = watch
    heard.state.lastHeardAt = Self.t0 + 1_000_000
    try database.saveWatchState(heard)
    // Keep the watch (now with a shorter silence), drop the bulletin subscription.
    let second = try #require(
      try database.replaceSubscriptions(
        of: "N0CALL-7",
        with: [SubscriptionDraft(id: first[1].id, rule: .watch(WatchRule(call: "K1ABC", silentFor: 3600)))],
        now: Self.t0 + 2_000_000))
    #expect(second.map(\.id) == [first[1].id])
    #expect(try database.nextWatchDeadline() == Self.t0 + 1_000_000 + 3_600_000)
    let entries = try database.sync(
      station: "N0CALL-7", since: 0, now: Self.t0 + 10, countsAsPull: false, wants: .subscriptions)
    #expect(entries.messages.isEmpty, "no bulletin subscription left: its entries went")
    _ = try database.replaceSubscriptions(of: "N0CALL-7", with: [], now: Self.t0 + 3_000_000)
    #expect(try database.nextWatchDeadline() == nil)
    #expect(try database.watches(of: "K1ABC", heardSince: 0, now: 0).isEmpty)
  }
}
