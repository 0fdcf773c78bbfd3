import APRS
import Testing

@testable import Listener
@testable import Store

/// The registry's side of following the stations' own transmissions: the `b/` entries on the one line, who fell
/// back, and what the router may ask.
@Suite struct OwnTransmissionsTests {
  private func requests(_ addresses: [String], since: Int64 = 1_000) -> OwnTransmissions {
    OwnTransmissions(
      addresses.enumerated().map {
        OwnTransmissionStation(
          address: $0.element, since: since + Int64($0.offset), fallback: $0.offset % 2 == 0,
          trackSent: $0.offset % 2 == 1)
      })
  }

  @Test func fiftyStationsStayWithinTheLineAndTheRestAreNamedAsFallenBack() {
    let stations = manyStations(50)
    var planner = FilterPlanner()
    for station in stations { _ = planner.insert(address: station.address) }
    let registry = StationRegistry(planner)
    let plain = registry.plan()
    #expect(registry.replaceOwnTransmissions(with: requests(stations.map(\.address))))
    #expect(!registry.replaceOwnTransmissions(with: requests(stations.map(\.address))))  // unchanged
    let line = registry.plan()
    #expect(line.byteCount <= FilterPlanner.answerableLineLength)
    let own = registry.ownTransmissions
    #expect(own.followed.count + own.fellBack.count == 50)
    #expect(!own.followed.isEmpty && !own.fellBack.isEmpty)
    #expect(own.followed == Set(line.ownTransmissions.followed))
    // The oldest requests have the room: every fallen-back one asked after every followed one.
    let order = stations.map(\.address)
    let lastFollowed = own.followed.compactMap { order.firstIndex(of: $0) }.max() ?? 0
    let firstFellBack = own.fellBack.compactMap { order.firstIndex(of: $0) }.min() ?? 0
    #expect(lastFollowed < firstFellBack)
    for address in own.followed { #expect(line.spec.contains("/" + address)) }
    // What the router may ask, by setting.
    let first = order[0]
    #expect(own.holdsAcks(of: first) && !own.tracksSent(of: first) && own.follows(first))
    #expect(own.tracksSent(of: order[1]) && !own.holdsAcks(of: order[1]))
    #expect(!own.follows(own.fellBack[0]) && !own.holdsAcks(of: own.fellBack[0]))
    // Nobody asking: the line it always was.
    #expect(registry.replaceOwnTransmissions(with: .empty))
    #expect(registry.plan() == plain)
    #expect(registry.ownTransmissions.isEmpty)
  }

  @Test func aStationReadButNotPlannedYetIsNotFollowed() {
    let registry = StationRegistry()
    registry.replaceOwnTransmissions(with: requests(["N0CALL-7"]))
    #expect(!registry.ownTransmissions.follows("N0CALL-7"))
    let line = registry.plan()
    #expect(line.spec.contains("b/N0CALL-7"), "\(line.spec)")
    #expect(registry.ownTransmissions.holdsAcks(of: "N0CALL-7"))
  }

  @Test func aBareCallIsFollowedWithItsZeroSSIDAlias() {
    let registry = StationRegistry()
    registry.replaceOwnTransmissions(with: requests(["OH7LZB"]))
    let line = registry.plan()
    #expect(line.spec.contains("OH7LZB") && line.spec.contains("OH7LZB-0"), "\(line.spec)")
    #expect(registry.ownTransmissions.follows("OH7LZB"))
  }
}
