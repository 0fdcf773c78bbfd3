import Testing

@testable import APRS

/// The subscriptions of every station arranged for routing and the filter: who a packet matches, who watches a
/// call, and the `g/` and `b/` entries the filter line gains (widened to fit).
@Suite struct SubscriptionIndexTests {
  private func index(_ rules: [(String, SubscriptionRule)]) -> SubscriptionIndex {
    SubscriptionIndex(
      rules.enumerated().map { (station: $1.0, Subscription(id: "s\($0)", rule: $1.1)) })
  }

  private func message(_ line: String) throws -> AddressedPacket {
    guard case .success(.packet(let packet)) = TNC2Packet.parse(Array(line.utf8)),
      case .addressed(let message) = AddressedPacket.classify(packet)
    else { throw TNC2Error.empty }
    return message
  }

  @Test func matchesAreOnePerStationWithItsFirstSubscription() throws {
    let index = try index([
      ("N0CALL-7", .bulletin(BulletinPattern("BLN*"))), ("N0CALL-7", .bulletin(BulletinPattern("BLN1WX"))),
      ("K9XYZ", .bulletin(BulletinPattern("BLN?WX"))), ("K9XYZ", .group(call: "SLCARES")),
      ("AB1CD", .nws(zones: ["OHC081"])), ("AB1CD", .watch(WatchRule(call: "K1ABC", heardAfter: 600))),
    ])
    #expect(index.count == 6 && index.hasWatches)
    let bulletin = try message("WX1ABC>APRS::BLN1WX   :Storm")
    #expect(
      index.matches(bulletin).map { "\($0.station) \($0.subscription.id)" } == ["K9XYZ s2", "N0CALL-7 s0"])
    #expect(index.matches(try message("OH7AA>APRS::SLCARES  :Net")).map(\.station) == ["K9XYZ"])
    #expect(index.matches(try message("OH7AA>APRS::SLCARES  :ack12")).isEmpty, "an ack is no group traffic")
    #expect(index.matches(try message("W>APRS::NWS-WARN :1z,TORNADO,OHC081>083")).map(\.station) == ["AB1CD"])
    #expect(index.matches(try message("W>APRS::NWS-WARN :1z,TORNADO,PAC125")).isEmpty)
    #expect(index.watches(of: "k1abc-0").map(\.station) == ["AB1CD"])
    #expect(index.watches(of: "K1ABC-1").isEmpty)
    #expect(SubscriptionIndex.empty.matches(bulletin).isEmpty && !SubscriptionIndex.empty.hasWatches)
  }

  @Test func filterEntriesCarryWhatTheSubscriptionsNeedAndNoMore() throws {
    let index = try index([
      ("N0CALL-7", .bulletin(BulletinPattern("BLN?WX"))), ("K9XYZ", .bulletin(BulletinPattern("BLN3"))),
      ("K9XYZ", .group(call: "SLCARES")), ("AB1CD", .watch(WatchRule(call: "K1ABC", heardAfter: 600))),
    ])
    let entries = index.filterEntries(budget: 200)
    #expect(entries.addressees == ["BLN*", "SLCARES"], "BLN3 is under BLN*")
    #expect(entries.senders == ["K1ABC"])
    let weather = try self.index([("AB1CD", .nws(zones: ["OHC081"]))]).filterEntries(budget: 200)
    #expect(weather.addressees == SubscriptionIndex.weatherEntries && weather.senders.isEmpty)
    let none = SubscriptionIndex.empty.filterEntries(budget: 200)
    #expect(none.addressees.isEmpty && none.senders.isEmpty && none.unwatched.isEmpty)
    let exact = try self.index([("K9XYZ", .bulletin(BulletinPattern("BLN3WX")))]).filterEntries(budget: 200)
    #expect(exact.addressees == ["BLN3WX"])
  }

  /// Watched calls are `b/` entries as they are, never widened: a prefix would let every packet of every matching
  /// sender through (toward the whole feed). Those that do not fit are left out, the most watched kept first.
  @Test func watchedCallsStayExactAndThoseThatDoNotFitAreLeftOut() {
    let calls = (0..<40).map { "K\($0 % 10)AB\($0)" }
    var subscriptions = calls.enumerated().map {
      (
        station: "ST\($0.offset)",
        Subscription(id: "s\($0.offset)", rule: .watch(WatchRule(call: $0.element, heardAfter: 600)))
      )
    }
    // K9AB39 is watched by a second station: it is kept before the others.
    subscriptions.append(
      (station: "OTHER", Subscription(id: "o1", rule: .watch(WatchRule(call: "K9AB39", heardAfter: 600)))))
    let index = SubscriptionIndex(subscriptions)
    let fitted = index.filterEntries(budget: 60)
    #expect(FilterEntryFit.bytes(fitted.senders) <= 60)
    #expect(fitted.senders.allSatisfy { !$0.hasSuffix("*") }, "\(fitted.senders)")
    #expect(fitted.senders.contains("K9AB39"))
    #expect(fitted.senders.count + fitted.unwatched.count == calls.count)
    #expect(Set(fitted.senders).isDisjoint(with: fitted.unwatched))
    let all = index.filterEntries(budget: 1000)
    #expect(all.unwatched.isEmpty && all.senders.count == calls.count)
    #expect(
      FilterEntryFit.fitExact(["ABCDEF", "AB", "ABCXYZ"], budget: 10) == (["AB", "ABCDEF"], ["ABCXYZ"]))
    #expect(
      FilterEntryFit.fit(["ABCDEF", "ABCXYZ"], budget: 5) == ["ABC*"]
        || FilterEntryFit.fit(["ABCDEF", "ABCXYZ"], budget: 5).count == 1)
    #expect(FilterEntryFit.fit(["A1", "B2"], budget: 1).isEmpty, "not even one-character prefixes fit")
    #expect(FilterEntryFit.fit(["BLN*", "BLN1", "SLCARES"], budget: 100) == ["BLN*", "SLCARES"])
  }

  @Test func thePlannerAddsSenderEntriesAsAPartOfTheirOwn() {
    let line = FilterPlanner().plan(extraAddressees: ["BLN*"], extraSenders: ["K1ABC"])
    #expect(line.spec == "g/BLN* b/K1ABC")
    #expect(FilterPlanner().plan(extraSenders: ["K1ABC"]).spec == "b/K1ABC")
  }

  @Test func watchEventsReadAsOneLine() {
    #expect(WatchEvent.duration(ms: 30_000) == "1 min")
    #expect(WatchEvent.duration(ms: 45 * 60_000) == "45 min")
    #expect(WatchEvent.duration(ms: 125 * 60_000) == "2 h 5 min")
    #expect(WatchEvent.duration(ms: (3 * 1440 + 4 * 60 + 7) * 60_000) == "3 d 4 h")
    let status = StationReport(
      source: "K1ABC", kind: .status, emergencyIn: .status, status: "EMERGENCY car off road")
    #expect(WatchEvent.emergency(status).text == "EMERGENCY (status): EMERGENCY car off road")
    let comment = StationReport(
      source: "K1ABC", kind: .position, latitude: 41.5, longitude: -81.25, emergencyIn: .positionComment,
      emergencyText: "EMERGENCY car off road")
    #expect(
      WatchEvent.emergency(comment).text
        == "EMERGENCY (position comment) at 41.50000, -81.25000: EMERGENCY car off road")
    let object = StationReport(
      source: "K1ABC", kind: .other, emergencyIn: .object("FIRE1"), emergencyText: "EMERGENCY brush fire")
    #expect(WatchEvent.emergency(object).text == "EMERGENCY (object FIRE1): EMERGENCY brush fire")
    let micE = StationReport(
      source: "K1ABC", kind: .micE, latitude: 1, longitude: 2, emergencyIn: .micE, emergencyText: "")
    #expect(WatchEvent.emergency(micE).text == "EMERGENCY (Mic-E) at 1.00000, 2.00000")
    let south = StationReport(source: "K1ABC", kind: .position, latitude: -33.5, longitude: 151.000004)
    #expect(WatchEvent.heard(south, silenceMs: 7_200_000).text == "heard after 2 h at -33.50000, 151.00000")
    #expect(WatchEvent.silent(silenceMs: 7_200_000).text == "silent for 2 h")
  }
}
