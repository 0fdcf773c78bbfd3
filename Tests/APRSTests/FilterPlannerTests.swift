import Foundation
import TestSupport
import Testing

@testable import APRS

@Suite struct FilterPlannerTests {
  /// Checks what every line must be: at most `maximum` bytes with CR LF, `byteCount` exact, every
  /// station of each part matched by aprsc's rules, no bare `*`, no prefix longer than 8, counts adding up.
  static func checkLine(
    _ plan: FilterLine, addressees: [StationAddress], senders: [StationAddress] = [], maximum: Int = 510
  ) {
    let line = plan.line
    #expect(line.count == plan.byteCount)
    #expect(line.count <= maximum)
    #expect(line.suffix(2) == [0x0D, 0x0A])
    #expect(String(decoding: line, as: UTF8.self) == "#filter \(plan.spec)\r\n")
    for (part, stations, type) in [(plan.addressees, addressees, "g"), (plan.senders, senders, "b")] {
      let matcher = AprscCallSet(spec: plan.spec, type: Character(type))
      #expect(stations.allSatisfy { matcher.matches($0.description) }, "\(type)/ misses a station")
      // `CALL-0` is the bare call: covered too, wherever it fits an addressee field.
      for station in stations where station.ssid == 0 && station.base.utf8.count <= 7 {
        #expect(matcher.matches(station.base + "-0"), "\(type)/ misses \(station)-0")
      }
      #expect(part.exactStations + part.prefixStations == stations.count)
      let exactEntries = part.entries.filter { !$0.hasSuffix("*") }
      let aliases = exactEntries.filter { $0.hasSuffix("-0") }
      #expect(exactEntries.count == part.exactStations + aliases.count)
      #expect(aliases.allSatisfy { part.entries.contains(String($0.dropLast(2))) })
      for entry in part.entries where entry.hasSuffix("*") {
        #expect((2...9).contains(entry.utf8.count), "prefix entry \(entry)")
      }
      #expect(part.entries == part.entries.sorted())
      #expect(part.entries.isEmpty == stations.isEmpty)
    }
  }

  /// The share of a realistic addressee mix (not registered) that a line lets through.
  static func overDelivery(_ plan: FilterLine, registered: Set<String>, samples: Int, seed: UInt64) -> Double
  {
    let matcher = AprscCallSet(spec: plan.spec, type: "g")
    var generator = CallGenerator(seed: seed)
    var unwanted = 0
    var passed = 0
    while unwanted < samples {
      let addressee = generator.addressee()
      if registered.contains(addressee) { continue }
      unwanted += 1
      if matcher.matches(addressee) { passed += 1 }
    }
    return Double(passed) / Double(samples)
  }

  @Test(
    "realistic sets: the line fits, covers every station, and its over-delivery is measured",
    arguments: [1, 50, 80, 2000, 100_000])
  func realisticSets(count: Int) {
    var generator = CallGenerator(seed: 0xF11_7E5 &+ UInt64(count))
    let stations = generator.stations(count)
    let planner = FilterPlanner(addressees: stations)
    let clock = ContinuousClock()
    var plan = FilterLine.empty
    let elapsed = clock.measure { plan = planner.plan() }
    Self.checkLine(plan, addressees: stations)
    let measured = Self.overDelivery(
      plan, registered: Set(stations.map(\.description)), samples: 200_000, seed: 99)
    print(
      "filter plan for \(count) stations: \(plan.byteCount) bytes, \(plan.entryCount) entries,",
      "\(plan.addressees.exactStations) exact, estimated share \(plan.addressees.estimatedShare),",
      "measured over-delivery \(measured), planned in \(elapsed) (debug build)")
    if count == 1 {
      let station = stations[0]
      #expect(plan.isExact && plan.spec == "g/\(station)" + (station.ssid == 0 ? "/\(station)-0" : ""))
    }
    if count <= 50 {
      // About 7.7 bytes per entry, and a bare call's `-0` entry beside it: 50 such calls still fit exactly.
      #expect(plan.isExact && measured == 0)
    } else {
      #expect(!plan.isExact)
      #expect(plan.byteCount > 480, "the planner leaves bytes unused")
      #expect(abs(measured - plan.addressees.estimatedShare) < 0.02 + 0.1 * plan.addressees.estimatedShare)
    }
    if count == 80 {
      // Just past the exact list: long prefixes (`KA1AB*`) for a few SSIDs' worth of bytes each.
      #expect(plan.addressees.estimatedShare < 0.001 && measured < 0.001)
    }
  }

  @Test(
    "the greedy choice lets through at most 2 % more than the best possible line",
    arguments: [70, 80, 150, 300])
  func nearOptimal(count: Int) {
    var generator = CallGenerator(seed: 31 &+ UInt64(count))
    let stations = generator.stations(count)
    let plan = FilterPlanner(addressees: stations).plan()
    let optimal = OptimalPlan.share(stations, budget: FilterPlanner.maximumLineLength - 11)
    print("\(count) stations: greedy share \(plan.addressees.estimatedShare), best possible \(optimal)")
    #expect(plan.addressees.estimatedShare >= optimal * (1 - 1e-9))
    #expect(plan.addressees.estimatedShare <= optimal * 1.02)
  }

  @Test("outgoing tracking: g/ and b/ share the 510 bytes, both cover every station")
  func tracking() {
    for count in [5, 40, 2000] {
      var generator = CallGenerator(seed: 7 &+ UInt64(count))
      let stations = generator.stations(count)
      let plan = FilterPlanner(addressees: stations, senders: stations).plan()
      Self.checkLine(plan, addressees: stations, senders: stations)
      #expect(plan.spec.hasPrefix("g/") && plan.spec.contains(" b/"))
      if count == 5 { #expect(plan.isExact) }
      if count == 2000 {
        // A b/ prefix lets 20 times more through: the senders part is the narrower one.
        #expect(plan.senders.estimatedShare < plan.addressees.estimatedShare)
      }
    }
    let onlySenders = [try! StationAddress(parsing: "N0CALL-7")]
    let plan = FilterPlanner(addressees: [StationAddress](), senders: onlySenders).plan()
    #expect(plan.spec == "b/N0CALL-7")
    Self.checkLine(plan, addressees: [], senders: onlySenders)
  }

  @Test("the exact list while it fits: up to exactly 510 bytes, one more station brings prefixes")
  func exactBoundary() throws {
    // 49 entries of 9 characters (+1 separator) = 490, plus `KJ7AB-10` (9) = 499: the line is
    // `#filter g/` + 499 - 1 + CR LF = 510 bytes.
    var stations = (0..<49).map {
      try! StationAddress(base: "KJ\($0 % 10)A\(Self.letter($0 / 10))C", ssid: 10)
    }
    stations.append(try StationAddress(parsing: "KJ7AB-10"))
    var planner = FilterPlanner(addressees: stations)
    let exact = planner.plan()
    #expect(exact.isExact && exact.byteCount == 510)
    #expect(exact.spec == "g/" + stations.map(\.description).sorted().joined(separator: "/"))
    Self.checkLine(exact, addressees: stations)
    let extra = try StationAddress(parsing: "W1AW")
    planner.insert(extra)
    let wider = planner.plan()
    #expect(!wider.isExact)
    Self.checkLine(wider, addressees: stations + [extra])
    planner.remove(extra)
    #expect(planner.plan() == exact)
  }

  static func letter(_ index: Int) -> String { String(CallGenerator.letters[index]) }

  @Test("no station: #filter g/*, which aprsc accepts and which matches nothing")
  func empty() throws {
    var planner = FilterPlanner()
    let plan = planner.plan()
    #expect(plan == .empty)
    #expect(String(decoding: plan.line, as: UTF8.self) == "#filter g/*\r\n")
    #expect(plan.entryCount == 0 && plan.exactStationCount == 0 && plan.byteCount == 13)
    #expect(!AprscCallSet(spec: plan.spec, type: "g").matches("N0CALL"))
    let station = try StationAddress(parsing: "N0CALL")
    planner.insert(station)
    #expect(planner.plan().spec == "g/N0CALL/N0CALL-0")
    planner.remove(station)
    #expect(planner.plan() == .empty)
  }

  @Test("SSID forms and 9-character addresses: exact entries keep them, prefixes cover them")
  func ssidsAndLongCalls() throws {
    let calls = ["N0CALL", "N0CALL-7", "N0CALL-15", "ABCDEFGHI", "ABCDEFG-9", "K1A", "K1A-1", "ABCDEFGH"]
    let stations = try calls.map { try StationAddress(parsing: $0) }
    let plan = FilterPlanner(addressees: stations).plan()
    #expect(plan.isExact)
    // A bare call gets its `-0` beside it, unless `CALL-0` would pass 9 characters (no addressee can be that).
    #expect(plan.addressees.entries == (calls + ["N0CALL-0", "K1A-0"]).sorted())
    #expect(plan.addressees.exactStations == calls.count)
    Self.checkLine(plan, addressees: stations)
    // Every SSID of 40 nine-character calls: far too many for exact entries.
    var many: [StationAddress] = []
    for index in 0..<40 {
      for ssid in 0...15 {
        many.append(try StationAddress(base: "AB\(index % 10)DE\(Self.letter(index / 10))", ssid: ssid))
      }
    }
    let wide = FilterPlanner(addressees: many).plan()
    Self.checkLine(wide, addressees: many)
    let matcher = AprscCallSet(spec: wide.spec, type: "g")
    #expect(wide.addressees.entries.allSatisfy { $0.hasPrefix("AB") })
    #expect(!matcher.matches("AC1DEA"))
  }

  @Test("the same set gives the same line, whatever the order")
  func deterministic() {
    var generator = CallGenerator(seed: 42)
    let stations = generator.stations(3000)
    let plan = FilterPlanner(addressees: stations).plan()
    var shuffler = SplitMix64(seed: 1)
    #expect(FilterPlanner(addressees: stations.shuffled(using: &shuffler)).plan() == plan)
    var incremental = FilterPlanner()
    for station in stations.reversed() { incremental.insert(station) }
    #expect(incremental.plan() == plan)
  }

  @Test("incremental inserts and removes give the plan a fresh build gives")
  func incrementalMatchesScratch() {
    var generator = CallGenerator(seed: 2024)
    let pool = generator.stations(4000)
    var random = SplitMix64(seed: 5)
    var planner = FilterPlanner()
    var reference = Set<String>()
    var present: [StationAddress] = []
    for step in 1...30_000 {
      let station = pool.randomElement(using: &random)!
      let insert = Int.random(in: 0..<10, using: &random) < (step < 15_000 ? 7 : 3)
      if insert {
        #expect(planner.insert(station) == reference.insert(station.description).inserted)
      } else {
        #expect(planner.remove(station) == (reference.remove(station.description) != nil))
      }
      if step % 2500 == 0 || (step > 29_990) {
        present = pool.filter { reference.contains($0.description) }
        #expect(planner.count(of: .addressees) == reference.count)
        #expect(planner.stations(of: .addressees) == reference.sorted())
        #expect(planner.plan() == FilterPlanner(addressees: present).plan())
      }
    }
    #expect(present.allSatisfy { planner.contains($0) })
  }

  @Test("the widest plan: one prefix per first character, also with the shortest budget")
  func widest() {
    var stations: [StationAddress] = []
    var generator = CallGenerator(seed: 3)
    for first in "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ" {
      for _ in 0..<60 {
        let call = generator.call()
        stations.append(try! StationAddress(parsing: "\(first)\(call.dropFirst().prefix(8))"))
      }
    }
    let unique = Array(Set(stations))
    let planner = FilterPlanner(addressees: unique, senders: unique)
    let full = planner.plan()
    Self.checkLine(full, addressees: unique, senders: unique)
    let tight = planner.plan(maximumLineLength: FilterPlanner.minimumLineLength)
    Self.checkLine(tight, addressees: unique, senders: unique, maximum: FilterPlanner.minimumLineLength)
    #expect(tight.addressees.entries.count == 36 && tight.senders.entries.count == 36)
    #expect(tight.addressees.entries.allSatisfy { $0.utf8.count == 2 && $0.hasSuffix("*") })
    #expect(tight.addressees.estimatedShare > 0.99)
  }

  @Test("100,000 stations plan in a bounded number of steps, one registration changes little")
  func scale() {
    var generator = CallGenerator(seed: 77)
    let stations = generator.stations(100_000)
    let clock = ContinuousClock()
    var planner = FilterPlanner()
    let inserting = clock.measure { for station in stations { planner.insert(station) } }
    var plan = FilterLine.empty
    let planning = clock.measure { plan = planner.plan() }
    Self.checkLine(plan, addressees: stations)
    let extra = try! StationAddress(parsing: "ZZ9ZZZ-15")
    var updating = Duration.zero
    updating += clock.measure { planner.insert(extra) }
    let replanned = planner.plan()
    Self.checkLine(replanned, addressees: stations + [extra])
    updating += clock.measure { planner.remove(extra) }
    #expect(planner.plan() == plan)
    print(
      "100,000 stations (debug build): inserted one by one in \(inserting),",
      "planned in \(planning), one insert + remove in \(updating)")
  }
}
