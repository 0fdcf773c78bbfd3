import APRS
import Testing

@testable import Listener
@testable import Store

/// The filter's side of the all-SSID inbox: the `g/` entries for the SSIDs stations collect (a few exact ones,
/// `CALL*` for many, shortened prefixes when many stations would not fit, every collected SSID still covered),
/// the planner keeping its line within budget with them, and the watcher picking a settings change up.
@Suite(.serialized) struct SSIDCoverageTests {
  private func station(_ address: String, _ ssids: [Int]) -> OtherSSIDStation {
    OtherSSIDStation(address: address, ssids: SSIDSet(ssids), ackSsids: .empty)
  }

  @Test func fewSSIDsAreExactEntriesAndManyAPrefix() {
    let coverage = SSIDCoverage([
      station("N0CALL-7", [0, 9]), station("KJ7ABC", SSIDSelection.all.others(own: 0).ssids),
    ])
    #expect(coverage.filterEntries(budget: 300) == ["KJ7ABC*", "N0CALL", "N0CALL-0", "N0CALL-9"])
    #expect(SSIDCoverage.empty.filterEntries(budget: 300).isEmpty)
  }

  @Test func entriesThatDoNotFitBecomeShorterPrefixesCoveringEveryone() {
    var stations: [OtherSSIDStation] = []
    for index in 0..<200 { stations.append(station("K\(index % 10)X\(index)-7", [1, 2])) }
    let coverage = SSIDCoverage(stations)
    let budget = FilterPlanner.maximumExtraBytes(maximumLineLength: FilterPlanner.answerableLineLength)
    let entries = coverage.filterEntries(budget: budget)
    #expect(SSIDCoverage.bytes(Set(entries)) <= budget)
    #expect(entries.allSatisfy { $0.hasSuffix("*") })
    // Every collected address starts with some prefix entry.
    let prefixes = entries.map { String($0.dropLast()) }
    for station in stations {
      let base = station.address.split(separator: "-")[0]
      #expect(prefixes.contains { base.hasPrefix($0) }, "\(base) uncovered by \(entries)")
    }
  }

  @Test func thePlannerAddsTheEntriesWithinItsLine() {
    var planner = FilterPlanner()
    for index in 0..<300 { planner.insert(address: "KJ\(1000 + index)-\(index % 15 + 1)") }
    let length = FilterPlanner.answerableLineLength
    let line = planner.plan(maximumLineLength: length, extraAddressees: ["N0CALL*", "W7ABC-9"])
    #expect(line.byteCount <= length)
    #expect(line.addressees.entries.contains("N0CALL*") && line.addressees.entries.contains("W7ABC-9"))
    // Only extra entries: a g/ part of its own.
    let only = FilterPlanner().plan(maximumLineLength: length, extraAddressees: ["N0CALL*"])
    #expect(only.spec == "g/N0CALL*")
    // More than the line can hold is left out rather than overflowing it.
    let tooMany = (0..<100).map { "ABCDEF-\($0 % 16)" + String(repeating: "X", count: $0 % 3) }
    #expect(FilterPlanner().plan(maximumLineLength: length, extraAddressees: tooMany) == .empty)
  }

  @Test func theWatcherPlansANewLineWhenAStationOptsInAndOut() throws {
    let rig = try WatcherRig()
    defer { rig.remove() }
    try rig.register(["N0CALL-7"])
    #expect(try rig.watcher.check()?.spec == "g/N0CALL-7")
    try rig.responder.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(ssids: .list(SSIDSet([9]))), now: rig.clock.now)
    #expect(try rig.watcher.check()?.spec == "g/N0CALL-7/N0CALL-9")
    #expect(rig.registry.collectors(of: "N0CALL-9") == [SSIDCollector(station: "N0CALL-7", acks: false)])
    try rig.responder.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(ssids: .all, ackSsids: SSIDSet([3])), now: rig.clock.now)
    #expect(try rig.watcher.check()?.spec == "g/N0CALL*/N0CALL-7")
    // N0CALL-3 is no station of the owner here: collected, never ACKed in its name.
    #expect(rig.registry.collectors(of: "N0CALL-3") == [SSIDCollector(station: "N0CALL-7", acks: false)])
    #expect(rig.registry.collectors(of: "N0CALL-0").map(\.station) == ["N0CALL-7"])
    try rig.responder.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(ssids: .exact), now: rig.clock.now)
    #expect(try rig.watcher.check()?.spec == "g/N0CALL-7")
    #expect(rig.registry.collectors(of: "N0CALL-9").isEmpty)
    // Unregistered: its coverage goes with it.
    try rig.responder.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(ssids: .all), now: rig.clock.now)
    _ = try rig.watcher.check()
    try rig.unregister("N0CALL-7")
    _ = try rig.watcher.check()
    #expect(rig.registry.collectors(of: "N0CALL-9").isEmpty)
  }
}
