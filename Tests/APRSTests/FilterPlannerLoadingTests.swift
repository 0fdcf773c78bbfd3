import TestSupport
import Testing

@testable import APRS

/// The planner as the listener feeds it: addresses as the store keeps them (text, upper case), many at once at
/// start, one at a time after.
@Suite struct FilterPlannerLoadingTests {
  @Test("one station: its exact entry")
  func one() throws {
    var planner = FilterPlanner()
    #expect(planner.insert(address: "N0CALL-7") == true)
    let plan = planner.plan()
    #expect(plan.spec == "g/N0CALL-7")
    #expect(String(decoding: plan.line, as: UTF8.self) == "#filter g/N0CALL-7\r\n")
  }

  @Test("entries are deduplicated and sorted, whatever the input order")
  func stable() throws {
    let calls = ["W1AW", "N0CALL-7", "N0CALL", "W1AW", "KJ7ABC-15", "N0CALL-7"]
    var loader = FilterPlanner.Loader()
    for call in calls { loader.add(address: call) }
    let plan = loader.planner(trackingSenders: false).plan()
    #expect(plan.spec == "g/KJ7ABC-15/N0CALL/N0CALL-0/N0CALL-7/W1AW/W1AW-0")
    var reversed = FilterPlanner()
    for call in calls.reversed() { reversed.insert(address: call) }
    #expect(reversed.plan() == plan)
  }

  @Test("tracking adds the b/ part after the g/ part")
  func tracking() throws {
    var planner = FilterPlanner()
    planner.insert(address: "N0CALL")
    planner.insert(address: "W1AW-9", into: .senders)
    planner.insert(address: "KJ7ABC", into: .senders)
    #expect(planner.plan().spec == "g/N0CALL/N0CALL-0 b/KJ7ABC/KJ7ABC-0/W1AW-9")
    var loader = FilterPlanner.Loader()
    loader.add(address: "N0CALL")
    #expect(loader.planner(trackingSenders: true).plan().spec == "g/N0CALL/N0CALL-0 b/N0CALL/N0CALL-0")
  }

  @Test("text that is not an address is refused, never matched")
  func refused() {
    var planner = FilterPlanner()
    #expect(planner.insert(address: "n0call") == nil)  // the store keeps upper case
    #expect(planner.insert(address: "ABCDEFGHIJ") == nil)
    #expect(planner.insert(address: "") == nil)
    #expect(planner.remove(address: "N0 CALL") == nil)
    #expect(!planner.contains(address: "BAD CALL!"))
    #expect(planner.insert(address: "N0CALL") == true && planner.insert(address: "N0CALL") == false)
    #expect(planner.contains(address: "N0CALL") && !planner.contains(address: "N0CALL-1"))
    #expect(planner.remove(address: "N0CALL") == true && planner.remove(address: "N0CALL") == false)
  }

  @Test("a loaded planner equals one built one station at a time, and keeps changing like it")
  func loadedEqualsIncremental() {
    var generator = CallGenerator(seed: 8)
    let stations = generator.stations(20_000)
    var loader = FilterPlanner.Loader(capacity: stations.count)
    for station in stations.shuffled(using: &generator.random) { loader.add(address: station.description) }
    loader.add(address: stations[0].description)  // a duplicate
    var loaded = loader.planner(trackingSenders: true)
    var incremental = FilterPlanner()
    for station in stations {
      incremental.insert(station)
      incremental.insert(station, into: .senders)
    }
    #expect(loaded.count(of: .addressees) == 20_000 && loaded.count(of: .senders) == 20_000)
    #expect(loaded.stations(of: .addressees) == incremental.stations(of: .addressees))
    #expect(loaded.plan() == incremental.plan())
    // The two parts share storage after loading; changing one leaves the other alone.
    let gone = stations[123].description
    loaded.remove(address: gone, from: .senders)
    #expect(loaded.contains(address: gone) && !loaded.contains(address: gone, in: .senders))
    incremental.remove(stations[123], from: .senders)
    #expect(loaded.plan() == incremental.plan())
  }

  @Test("keys added in order fill chunks to three quarters, as a bulk build does")
  func inOrderAppends() {
    var random = SplitMix64(seed: 3)
    var keys = (0..<10_000).map { _ in UInt64.random(in: 1..<(1 << 54), using: &random) }
    keys.sort()
    var appended = PrefixTrie()
    for key in keys { appended.insert(key) }
    let built = PrefixTrie(keys: keys.shuffled(using: &random))
    #expect(appended.keys == built.keys && appended.count == built.count)
    #expect(appended.exactBytes == built.exactBytes)
    // A key below the others still lands in order.
    appended.insert(0)
    #expect(appended.first(atLeast: 0) == 0 && appended.contains(keys[5_000]))
  }
}
