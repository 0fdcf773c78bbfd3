// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import APRS
import TestSupport
import Testing

@testable import Store

@Suite struct DatabaseSubscriptionsTests {
  @Test func aListReplacesTheLastKeepingTheIdsItNamesAndGoesWithTheStation() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    defer { database.close() }
    try register(database, "N0CALL-7")
    #expect(try database.replaceSubscriptions(of: "NOBODY", with: [], now: 1) == nil)
    let first = try #require(
      try database.replaceSubscriptions(
        of: "n0call-7",
        with: [
          SubscriptionDraft(rule: .bulletin(try BulletinPattern("BLN*"))),
          SubscriptionDraft(rule: .nws(zones: ["PAC125", "OHC081"]), bypass: true),
          SubscriptionDraft(rule: .watch(WatchRule(call: "K1ABC", silentFor: 7200, emergency: true))),
        ], now: 1_000))
    #expect(first.map(\.kind) == [.bulletin, .nws, .watch] && Set(first.map(\.id)).count == 3)
    #expect(try database.subscriptions(of: "N0CALL-7") == first)
    let kept = first[2].id
    let second = try #require(
      try database.replaceSubscriptions(
        of: "N0CALL-7",
        with: [
          SubscriptionDraft(rule: .group(call: "SLCARES")),
          SubscriptionDraft(id: kept, rule: .watch(WatchRule(call: "K1ABC", heardAfter: 600))),
        ], now: 2_000))
    #expect(second.map(\.kind) == [.group, .watch] && second[1].id == kept && second[0].id != kept)
    #expect(second[1].rule == .watch(WatchRule(call: "K1ABC", heardAfter: 600)))
    #expect(throws: StoreError.invalidArgument("no subscription s-nope")) {
      try database.replaceSubscriptions(
        of: "N0CALL-7", with: [SubscriptionDraft(id: "s-nope", rule: .group(call: "X"))], now: 3_000)
    }
    #expect(try database.subscriptions(of: "N0CALL-7") == second, "a refused list changes nothing")
    try database.deleteStation("N0CALL-7")
    #expect(try database.subscriptions(of: "N0CALL-7").isEmpty)
  }

  @Test func theMaximumRefusesTheWholeList() throws {
    let (database, directory) = try temporaryStore(registering: "N0CALL-7")
    defer { directory.remove() }
    let most = (0..<Subscription.maximumPerStation).map { SubscriptionDraft(rule: .group(call: "G\($0)")) }
    let stored = try #require(try database.replaceSubscriptions(of: "N0CALL-7", with: most, now: 1_000))
    #expect(stored.map(\.rule) == most.map(\.rule), "in the order given")
    #expect(throws: StoreError.invalidArgument("at most \(Subscription.maximumPerStation) subscriptions")) {
      try database.replaceSubscriptions(
        of: "N0CALL-7", with: most + [SubscriptionDraft(rule: .group(call: "ONEMORE"))], now: 2_000)
    }
    #expect(try database.subscriptions(of: "N0CALL-7") == stored)
  }

  @Test func anImportAdoptsTheIdsItBrings() throws {
    let (database, directory) = try temporaryStore(registering: "N0CALL-7")
    defer { directory.remove() }
    let adopted = try #require(
      try database.replaceSubscriptions(
        of: "N0CALL-7",
        with: [
          SubscriptionDraft(id: "s-old", rule: .group(call: "A")), SubscriptionDraft(rule: .group(call: "B")),
        ],
        now: 1_000, adoptingIds: true))
    #expect(adopted[0].id == "s-old" && adopted[1].id != "s-old")
    // A fresh id never takes one a draft names, whatever the clock makes of it.
    let fresh = "s" + String(Int64(2_000), radix: 36) + "0"
    let mixed = try #require(
      try database.replaceSubscriptions(
        of: "N0CALL-7",
        with: [
          SubscriptionDraft(rule: .group(call: "C")), SubscriptionDraft(id: fresh, rule: .group(call: "D")),
        ],
        now: 2_000, adoptingIds: true))
    #expect(mixed[1].id == fresh && mixed[0].id != fresh)
  }

  @Test func anIdNamedTwiceIsRefusedAndWritesNothing() throws {
    let (database, directory) = try temporaryStore(registering: "N0CALL-7")
    defer { directory.remove() }
    let stored = try #require(
      try database.replaceSubscriptions(
        of: "N0CALL-7", with: [SubscriptionDraft(rule: .group(call: "A"))], now: 1))
    let id = stored[0].id
    #expect(throws: StoreError.self) {
      try database.replaceSubscriptions(
        of: "N0CALL-7",
        with: [
          SubscriptionDraft(id: id, rule: .group(call: "A")),
          SubscriptionDraft(id: id, rule: .group(call: "B")),
        ],
        now: 2)
    }
    #expect(try database.subscriptions(of: "N0CALL-7") == stored, "the first list stands")
  }
}
