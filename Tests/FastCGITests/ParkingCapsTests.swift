import Platform
import Testing

@testable import FastCGI

/// The per-key and per-group caps of the parked set, decided without a socket: the newest request
/// of a full key wins (its oldest gives way), a full group refuses the next one.
@Suite struct ParkedSetCapsTests {
  typealias Entry = ParkedSet.Entry

  static func entry(_ key: String, group: String? = nil, parkedAt: Int64) -> Entry {
    Entry(key: key, group: group, after: 0, deadline: 1_000_000, parkedAt: parkedAt)
  }

  @Test func aFullKeyGivesWayToTheNewestItsOldestIsDisplaced() {
    var set = ParkedSet()
    let caps = ParkedSet.Caps(perKey: 8)
    for id in 1...8 as ClosedRange<UInt64> {
      #expect(set.admit(Self.entry("K", parkedAt: Int64(id)), id: id, caps: caps) == .parked(displacing: nil))
    }
    #expect(set.admit(Self.entry("OTHER", parkedAt: 9), id: 100, caps: caps) == .parked(displacing: nil))
    #expect(set.admit(Self.entry("K", parkedAt: 10), id: 9, caps: caps) == .parked(displacing: 1))
    #expect(set[1] == nil && set[9] != nil && set.count(key: "K") == 8 && set.count == 9)
    #expect(set.admit(Self.entry("K", parkedAt: 11), id: 10, caps: caps) == .parked(displacing: 2))
    // Equal park times: the one parked first gives way.
    #expect(set.admit(Self.entry("K", parkedAt: 11), id: 11, caps: caps) == .parked(displacing: 3))
    #expect(set.admit(Self.entry("K", parkedAt: 11), id: 12, caps: caps) == .parked(displacing: 4))
    #expect(set.admit(Self.entry("K", parkedAt: 11), id: 13, caps: caps) == .parked(displacing: 5))
    // What left frees its room: no one gives way.
    #expect(set.remove(13) != nil)
    #expect(set.admit(Self.entry("K", parkedAt: 12), id: 14, caps: caps) == .parked(displacing: nil))
  }

  /// A stranger's flood of one key pushes out its own requests, never a lone client's that was there first: the
  /// request that gives way is the oldest of the newcomer's own group, else of the group holding the most.
  @Test func aFloodOfOneGroupDisplacesItsOwnNeverALoneClient() {
    var set = ParkedSet()
    let caps = ParkedSet.Caps(perKey: 4)
    #expect(
      set.admit(Self.entry("K", group: "app", parkedAt: 1), id: 1, caps: caps) == .parked(displacing: nil))
    for id in 2...4 as ClosedRange<UInt64> {
      #expect(
        set.admit(Self.entry("K", group: "stranger", parkedAt: Int64(id)), id: id, caps: caps)
          == .parked(displacing: nil))
    }
    for id in 5...20 as ClosedRange<UInt64> {
      guard
        case .parked(let displaced?) = set.admit(
          Self.entry("K", group: "stranger", parkedAt: Int64(id)), id: id, caps: caps)
      else {
        Issue.record("request \(id) did not park")
        continue
      }
      #expect(displaced != 1, "the app's long poll was answered early")
    }
    #expect(set[1] != nil)
    // A client of a group not parked there yet takes the place of the biggest group's oldest.
    #expect(
      set.admit(Self.entry("K", group: "web", parkedAt: 21), id: 21, caps: caps) == .parked(displacing: 18))
    #expect(set[1] != nil)
  }

  /// The lanes of a key (the API: the owner's long polls in lane 1, keyless ones in lane 0): each holds the
  /// per-key cap on its own, a request only displaces one of its own lane, and a wake takes every lane.
  @Test func aLaneOfAKeyNeverDisplacesAnotherLane() {
    var set = ParkedSet()
    let caps = ParkedSet.Caps(perKey: 2)
    var owner = Self.entry("K", parkedAt: 1)
    owner.lane = 1
    #expect(set.admit(owner, id: 1, caps: caps) == .parked(displacing: nil))
    for id in 2...31 as ClosedRange<UInt64> {
      let admission = set.admit(Self.entry("K", parkedAt: Int64(id)), id: id, caps: caps)
      #expect(admission != .parked(displacing: 1), "a keyless request displaced the owner's")
    }
    #expect(set[1] != nil && set.count(key: "K", lane: 1) == 1 && set.count(key: "K", lane: 0) == 2)
    var newer = owner
    newer.parkedAt = 40
    #expect(set.admit(newer, id: 40, caps: caps) == .parked(displacing: nil))
    newer.parkedAt = 41
    #expect(set.admit(newer, id: 41, caps: caps) == .parked(displacing: 1), "the owner's own newest wins")
    #expect(Set(set.wake(key: "K", newest: 1)) == [30, 31, 40, 41])
    #expect(set.isEmpty)
  }

  /// A request parked again after a wake keeps its first park time: it does not jump the queue,
  /// and when it is older than all of its full key it is the one that gives way.
  @Test func aRequestParkedAgainKeepsItsPlaceByItsFirstParkTime() {
    var set = ParkedSet()
    let caps = ParkedSet.Caps(perKey: 2)
    #expect(set.admit(Self.entry("K", parkedAt: 10), id: 1, caps: caps) == .parked(displacing: nil))
    #expect(set.admit(Self.entry("K", parkedAt: 20), id: 2, caps: caps) == .parked(displacing: nil))
    #expect(set.wake(key: "K", newest: 1) == [1, 2])
    #expect(set.admit(Self.entry("K", parkedAt: 30), id: 3, caps: caps) == .parked(displacing: nil))
    #expect(set.admit(Self.entry("K", parkedAt: 40), id: 4, caps: caps) == .parked(displacing: nil))
    // Back from their wake, older than both: they give way themselves.
    #expect(set.admit(Self.entry("K", parkedAt: 10), id: 1, caps: caps, firstPark: false) == .displaced)
    #expect(set[1] == nil && set.count(key: "K") == 2)
    // Between the two: the older of those parked gives way to it.
    #expect(
      set.admit(Self.entry("K", parkedAt: 35), id: 2, caps: caps, firstPark: false) == .parked(displacing: 3))
    #expect(set.count(key: "K") == 2 && set[2] != nil && set[4] != nil)
  }

  @Test func aFullGroupRefusesTheNextUntilOneLeaves() {
    var set = ParkedSet()
    let caps = ParkedSet.Caps(perKey: 8, perGroup: 3)
    for id in 1...3 as ClosedRange<UInt64> {
      #expect(
        set.admit(Self.entry("K\(id)", group: "A", parkedAt: 1), id: id, caps: caps)
          == .parked(displacing: nil))
    }
    #expect(set.admit(Self.entry("K4", group: "A", parkedAt: 2), id: 4, caps: caps) == .groupFull)
    #expect(set[4] == nil && set.count == 3 && set.count(group: "A") == 3)
    // Another group, and no group at all, are not held back.
    #expect(
      set.admit(Self.entry("K4", group: "B", parkedAt: 2), id: 5, caps: caps) == .parked(displacing: nil))
    #expect(set.admit(Self.entry("K4", parkedAt: 2), id: 6, caps: caps) == .parked(displacing: nil))
    // Each way out gives the room back: a wake, a deadline, a client that left.
    #expect(set.wake(key: "K1", newest: 1) == [1])
    #expect(
      set.admit(Self.entry("K5", group: "A", parkedAt: 3), id: 7, caps: caps) == .parked(displacing: nil))
    #expect(set.admit(Self.entry("K6", group: "A", parkedAt: 3), id: 8, caps: caps) == .groupFull)
    set.remove(2)
    #expect(set.count(group: "A") == 2)
    set.insert(Entry(key: "K7", group: "A", after: 0, deadline: 5, parkedAt: 4), id: 9)
    #expect(set.expired(now: 5) == [9])
    #expect(set.count(group: "A") == 2)
    _ = set.removeAll()
    #expect(set.count(group: "A") == 0 && set.count(group: "B") == 0)
  }

  /// A full group still takes a request that displaces one of its own (the group does not grow),
  /// and a request back from a wake (it only just left the group).
  @Test func aFullGroupTakesWhatDoesNotGrowIt() {
    var set = ParkedSet()
    let caps = ParkedSet.Caps(perKey: 2, perGroup: 2)
    #expect(
      set.admit(Self.entry("K", group: "A", parkedAt: 1), id: 1, caps: caps) == .parked(displacing: nil))
    #expect(
      set.admit(Self.entry("K", group: "A", parkedAt: 2), id: 2, caps: caps) == .parked(displacing: nil))
    #expect(set.admit(Self.entry("K", group: "A", parkedAt: 3), id: 3, caps: caps) == .parked(displacing: 1))
    #expect(set.count(group: "A") == 2)
    // Displacing one of another group would grow it: refused, and nothing displaced.
    #expect(
      set.admit(Self.entry("J", group: "B", parkedAt: 4), id: 4, caps: caps) == .parked(displacing: nil))
    #expect(
      set.admit(Self.entry("J", group: "B", parkedAt: 5), id: 5, caps: caps) == .parked(displacing: nil))
    #expect(set.admit(Self.entry("J", group: "A", parkedAt: 6), id: 6, caps: caps) == .groupFull)
    #expect(set[4] != nil && set.count(group: "B") == 2)
    // Back from a wake: held though its group filled up meanwhile.
    #expect(set.wake(key: "K", newest: 1) == [2, 3])
    #expect(
      set.admit(Self.entry("L", group: "A", parkedAt: 7), id: 7, caps: caps) == .parked(displacing: nil))
    #expect(
      set.admit(Self.entry("M", group: "A", parkedAt: 8), id: 8, caps: caps) == .parked(displacing: nil))
    #expect(
      set.admit(Self.entry("K", group: "A", parkedAt: 2), id: 2, caps: caps, firstPark: false)
        == .parked(displacing: nil))
    #expect(set.count(group: "A") == 3)
  }

  @Test func withoutCapsEverythingParks() {
    var set = ParkedSet()
    for id in 1...100 as ClosedRange<UInt64> {
      #expect(
        set.admit(Self.entry("K", group: "A", parkedAt: 1), id: id, caps: ParkedSet.Caps())
          == .parked(displacing: nil))
    }
    #expect(set.count(key: "K") == 100 && set.count(group: "A") == 100)
  }

  @Test func optionsKeepEveryCapAtLeastOne() {
    let options = ParkingOptions(maxParkedPerKey: 0, maxParkedPerGroup: -3)
    #expect(options.maxParkedPerKey == 1 && options.maxParkedPerGroup == 1)
    #expect(ParkingOptions().maxParkedPerKey == .max && ParkingOptions().maxParkedPerGroup == .max)
  }
}

/// The caps over a real unix socket: the server answers the oldest request of a full key, and the
/// request past a full group at once, through the resumer, with no worker held meanwhile.
@Suite struct ParkingCapsTests {
  typealias Client = FastCGIClient

  /// Parks one request for `key` on a new connection and waits until the server holds `held`.
  static func park(_ rig: ServerRig, _ key: String, group: String? = nil, held: Int) throws -> FastCGIClient {
    let client = try rig.connect()
    try client.send(ParkingTests.parkRequest(key, group: group))
    #expect(waitFor { rig.server.parkedCount == held })
    return client
  }

  @Test func theNinthParkOfOneKeyAnswersItsOldest() throws {
    let rig = try ServerRig(
      workers: 2, parking: ParkingOptions(maxParkedPerKey: 8), code: ParkingTests.code(Recorder()))
    var same: [FastCGIClient] = []
    for index in 0..<8 { same.append(try Self.park(rig, "SAME", held: index + 1)) }
    let other = try Self.park(rig, "OTHER", held: 9)

    let ninth = try rig.connect()
    try ninth.send(ParkingTests.parkRequest("SAME"))
    #expect(same[0].receive().reply?.text == "displaced SAME")
    #expect(rig.server.parkedCount == 9)
    let tenth = try rig.connect()
    try tenth.send(ParkingTests.parkRequest("SAME"))
    #expect(same[1].receive().reply?.text == "displaced SAME")
    #expect(rig.server.parkedCount == 9)

    #expect(rig.stop() == true)
    for client in same.dropFirst(2) + [ninth, tenth] {
      #expect(client.receive().reply?.text == "stopping SAME")
    }
    #expect(other.receive().reply?.text == "stopping OTHER")
  }

  @Test func pastAFullGroupTheRequestIsAnsweredAtOnceAndNotHeld() throws {
    let rig = try ServerRig(
      workers: 1, parking: ParkingOptions(maxParkedPerGroup: 2), code: ParkingTests.code(Recorder()))
    let first = try Self.park(rig, "K1", group: "A", held: 1)
    let second = try Self.park(rig, "K2", group: "A", held: 2)
    let refused = try rig.exchange(ParkingTests.parkRequest("K3", group: "A")).reply
    #expect(refused?.text == "groupFull K3")
    #expect(rig.server.parkedCount == 2)
    let elsewhere = try Self.park(rig, "K3", group: "B", held: 3)
    // One of the group leaves: its room is there again.
    first.finishSending()
    #expect(waitFor { rig.server.parkedCount == 2 })
    let third = try Self.park(rig, "K4", group: "A", held: 3)
    #expect(rig.stop() == true)
    #expect(second.receive().reply?.text == "stopping K2")
    #expect(third.receive().reply?.text == "stopping K4")
    #expect(elsewhere.receive().reply?.text == "stopping K3")
  }
}
