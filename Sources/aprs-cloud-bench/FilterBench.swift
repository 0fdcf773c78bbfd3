import APRS
import Platform

/// `filter COUNT [SAMPLES]`: the listener's `#filter` line for COUNT random registered stations (the same calls
/// `stations` registers), and its over-delivery: the share of messages to addressees that are not registered
/// (SAMPLES of a realistic mix) that the line lets through, matched as aprsc matches `g/` entries. Also the
/// planner's own estimate, and how long planning and one registration's update take.
enum FilterBench: Benchmark {
  static let name = "filter"
  static let usage = "filter COUNT [SAMPLES]   the #filter line for COUNT stations and its over-delivery"

  static func run(_ arguments: [String]) -> Int32 {
    guard (1...2).contains(arguments.count), let count = Int(arguments[0]), count > 0 else {
      printError("usage: aprs-cloud-bench \(usage)")
      return 2
    }
    let samples = arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000
    var generator = CallGenerator(seed: UInt64(count))
    let calls = generator.distinctCalls(count)
    var loader = FilterPlanner.Loader(capacity: count)
    for call in calls { loader.add(address: call.address) }
    var planner = loader.planner(trackingSenders: false)
    let clock = ContinuousClock()
    var line = FilterLine.empty
    let planning = clock.measure {
      line = planner.plan(maximumLineLength: FilterPlanner.answerableLineLength)
    }
    let update = clock.measure {
      planner.insert(address: "ZZ9ZZZ-15")
      _ = planner.plan(maximumLineLength: FilterPlanner.answerableLineLength)
    }
    let registered = Set(calls.map(\.address))
    let matcher = GroupMatcher(spec: line.spec)
    var passed = 0
    var unwanted = 0
    var mix = CallGenerator(seed: 99)
    while unwanted < samples {
      let addressee = mix.addressee()
      if registered.contains(addressee) { continue }
      unwanted += 1
      if matcher.matches(addressee) { passed += 1 }
    }
    let measured = Double(passed) / Double(unwanted)
    print(
      "filter for \(count) stations: \(line.byteCount) bytes, \(line.entryCount) entries,"
        + " \(line.exactStationCount) stations exact; over-delivery: \(fixed(measured * 100, decimals: 2)) %"
        + " of messages to unregistered addressees let through (\(samples) samples; the planner's model says"
        + " \(fixed(line.addressees.estimatedShare * 100, decimals: 2)) %); planned in"
        + " \(fixed(seconds(planning) * 1000, decimals: 2)) ms, one registration + replan in"
        + " \(fixed(seconds(update) * 1000, decimals: 2)) ms")
    return 0
  }
}

/// aprsc's matching of `g/` entries (hessu/aprsc src/filter.c, callsign sets with MatchWild): a `*` anywhere
/// marks a prefix and is dropped, at most 9 other characters are kept, an empty entry never matches, case is
/// ignored; without `*` the whole addressee must be equal.
struct GroupMatcher {
  private var exact = Set<String>()
  private var prefixes = Set<String>()

  init(spec: String) {
    for part in spec.split(separator: " ") where part.hasPrefix("g/") {
      for entry in part.dropFirst(2).split(separator: "/") {
        let wildcard = entry.contains("*")
        let text = String(entry.filter { $0 != "*" }.prefix(9)).uppercased()
        guard !text.isEmpty else { continue }
        if wildcard { prefixes.insert(text) } else { exact.insert(text) }
      }
    }
  }

  func matches(_ addressee: String) -> Bool {
    let key = String(addressee.prefix(9)).uppercased()
    if exact.contains(key) { return true }
    var prefix = ""
    for character in key {
      prefix.append(character)
      if prefixes.contains(prefix) { return true }
    }
    return false
  }
}
