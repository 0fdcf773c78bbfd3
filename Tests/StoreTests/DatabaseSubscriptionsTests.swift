// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import APRS
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
}
