import TestSupport

@testable import APRS

/// Random station addresses shaped like most amateur calls (a 1–2 letter prefix, a digit, a 1–3 letter
/// suffix, SSID 0–15, all equally likely), and a realistic mix of message addressees, from a seed.
struct CallGenerator {
  static let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
  static let characters = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
  /// Addressees that are not calls: bulletins, services, tactical names, calls with other shapes.
  static let others = [
    "BLN1", "BLN2", "BLN3WX", "BLNA", "WXBOT", "ANSRVR", "EMAIL-2", "SMSGTE", "APRSPH", "WLNK-1",
    "WHO-IS", "REPEAT", "QST", "CQ", "2E0ABC", "9A1AA-7", "4X1AB", "ISS", "SKYWARN", "NWS-TSTM",
  ]

  var random: SplitMix64

  init(seed: UInt64) { random = SplitMix64(seed: seed) }

  /// One call: `K1ABC`, `KJ7XY-12`, …
  mutating func call() -> String {
    var text = ""
    for _ in 0...Int.random(in: 0...1, using: &random) {
      text.append(Self.letters.randomElement(using: &random)!)
    }
    text += String(Int.random(in: 0...9, using: &random))
    for _ in 0...Int.random(in: 0...2, using: &random) {
      text.append(Self.letters.randomElement(using: &random)!)
    }
    let ssid = Int.random(in: 0...15, using: &random)
    return ssid == 0 ? text : "\(text)-\(ssid)"
  }

  /// `count` distinct stations.
  mutating func stations(_ count: Int) -> [StationAddress] {
    var seen = Set<String>()
    var result: [StationAddress] = []
    result.reserveCapacity(count)
    while result.count < count {
      let text = call()
      if seen.insert(text).inserted { result.append(try! StationAddress(parsing: text)) }
    }
    return result
  }

  /// An addressee of the realistic mix: 95 % calls as above, 5 % others (a known name or 3–9 random
  /// characters).
  mutating func addressee() -> String {
    guard Int.random(in: 0..<100, using: &random) < 5 else { return call() }
    if Bool.random(using: &random) { return Self.others.randomElement(using: &random)! }
    let length = Int.random(in: 3...9, using: &random)
    return String((0..<length).map { _ in Self.characters[Int.random(in: 1..<37, using: &random)] })
  }
}

/// aprsc's matching of a `g/` or `b/` part, for checking plans (hessu/aprsc src/filter.c: entries are
/// parsed by `filter_parse_one_callsignset`, matched by `filter_match_on_callsignset` with `MatchWild`):
/// a `*` anywhere in an entry marks it a prefix and is dropped, at most 9 other characters are kept, an
/// empty entry never matches, comparison ignores case; without `*` the whole key must be equal.
struct AprscCallSet {
  /// The entries by their first character (an empty entry never matches, so it is left out).
  let entries: [UInt8: [(text: [UInt8], wildcard: Bool)]]

  /// The entries of every part of `spec` of the given type (`g` or `b`).
  init(spec: String, type: Character) {
    var entries: [UInt8: [(text: [UInt8], wildcard: Bool)]] = [:]
    for part in spec.split(separator: " ") where part.lowercased().hasPrefix("\(type)/") {
      for entry in part.dropFirst(2).split(separator: "/", omittingEmptySubsequences: false) {
        var text: [UInt8] = []
        var wildcard = false
        for byte in entry.utf8 {
          if byte == UInt8(ascii: "*") {
            wildcard = true
          } else if text.count < 9 {
            text.append(ASCII.upper(byte))
          }
        }
        if let first = text.first { entries[first, default: []].append((text, wildcard)) }
      }
    }
    self.entries = entries
  }

  func matches(_ call: String) -> Bool {
    let key = Array(call.utf8.prefix(9)).map(ASCII.upper)
    guard let first = key.first, let candidates = entries[first] else { return false }
    return candidates.contains { entry in
      guard entry.text.count <= key.count, key.starts(with: entry.text) else { return false }
      return entry.wildcard || entry.text.count == key.count
    }
  }
}

/// The least model share any line of `budget` entry bytes (Σ entry + 1) can let through while covering
/// `stations`: an exact tree-knapsack over the full trie of the stations, for checking the planner's
/// greedy choice on small sets.
enum OptimalPlan {
  final class Node {
    var children: [UInt8: Node] = [:]
    var isStation = false
  }

  static func share(_ stations: [StationAddress], budget: Int, model: AddresseeModel = .callsigns) -> Double {
    let root = Node()
    for station in stations {
      var node = root
      for byte in station.description.utf8 {
        if node.children[byte] == nil { node.children[byte] = Node() }
        node = node.children[byte]!
      }
      node.isStation = true
    }
    return best(root, prefix: [], budget: budget, model: model)[budget]
  }

  /// best[b]: the least share covering the subtree within b bytes (infinity when impossible).
  private static func best(_ node: Node, prefix: [UInt8], budget: Int, model: AddresseeModel) -> [Double] {
    let depth = prefix.count
    var covered = [Double](repeating: node.isStation ? .infinity : 0, count: budget + 1)
    // An exact entry, and `CALL-0` beside a bare call of at most 7 characters.
    let exactCost = depth + 1 + (!prefix.contains(UInt8(ascii: "-")) && depth <= 7 ? depth + 3 : 0)
    if node.isStation && exactCost <= budget {
      for bytes in exactCost...budget { covered[bytes] = 0 }
    }
    for (byte, child) in node.children.sorted(by: { $0.key < $1.key }) {
      let options = best(child, prefix: prefix + [byte], budget: budget, model: model)
      // Only the budgets where the child gets cheaper matter.
      var steps: [(bytes: Int, share: Double)] = []
      for bytes in 0...budget where options[bytes] < (steps.last?.share ?? .infinity) {
        steps.append((bytes, options[bytes]))
      }
      var merged = [Double](repeating: .infinity, count: budget + 1)
      for used in 0...budget where covered[used] < .infinity {
        for step in steps where used + step.bytes <= budget {
          merged[used + step.bytes] = min(merged[used + step.bytes], covered[used] + step.share)
        }
      }
      for bytes in 1...budget { merged[bytes] = min(merged[bytes], merged[bytes - 1]) }
      covered = merged
    }
    if depth >= 1 && depth <= PackedCall.maximumPrefixLength && depth + 2 <= budget {
      let share = model.share(ofPrefix: String(decoding: prefix, as: UTF8.self))
      for bytes in (depth + 2)...budget where share < covered[bytes] { covered[bytes] = share }
    }
    return covered
  }
}
