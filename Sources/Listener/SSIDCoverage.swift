import APRS
import Store

/// A served station that collects a message to another SSID of its call (setting `ssids`), as the router sees
/// it (``ServedStations/collectors(of:)``).
struct SSIDCollector: Sendable, Equatable {
  /// The collecting station's canonical address (`N0CALL-7`): the entry is stored for it.
  var station: String
  /// Whether it asked for ACKs of that SSID (`ackSsids`); its ACK policy and the settings read at the commit
  /// decide the rest.
  var acks: Bool
}

/// The stations that collect other SSIDs of their call, by base call: what routing adds to exact matches, and
/// the `g/` entries the filter adds so APRS-IS delivers those messages (docs/protocol.md "Opt-in answers (`want`)").
/// Few stations opt in (claimed stations' setting), so a plain dictionary; empty, every lookup is one check.
struct SSIDCoverage: Sendable, Equatable {
  /// The collecting stations of each base call (upper case), in address order.
  private(set) var byBase: [String: [OtherSSIDStation]] = [:]

  /// No station collects other SSIDs.
  static let empty = SSIDCoverage()

  /// The coverage of `stations` (as the store lists them).
  init(_ stations: [OtherSSIDStation] = []) {
    for station in stations.sorted(by: { $0.address < $1.address }) {
      let (base, _) = Self.split(station.address)
      byBase[String(base), default: []].append(station)
    }
  }

  /// Whether no station collects other SSIDs.
  var isEmpty: Bool { byBase.isEmpty }

  /// The number of stations that collect other SSIDs.
  var stationCount: Int { byBase.values.reduce(0) { $0 + $1.count } }

  /// The stations that collect `addressee` (upper case; `CALL-0` read as `CALL`) as another SSID of their
  /// call; never the station `addressee` itself.
  func collectors(of addressee: String) -> [SSIDCollector] {
    guard !byBase.isEmpty else { return [] }
    let address = StationAddress.canonical(addressee)
    let (base, ssid) = Self.split(address)
    guard let ssid, let stations = byBase[String(base)] else { return [] }
    var found: [SSIDCollector] = []
    for station in stations where station.ssids.contains(ssid) && station.address != address {
      found.append(SSIDCollector(station: station.address, acks: station.ackSsids.contains(ssid)))
    }
    return found
  }

  /// The base call and SSID of a canonical address (`CALL` → SSID 0); nil SSID when it is not a number 0–15.
  static func split(_ address: String) -> (base: Substring, ssid: Int?) {
    guard let dash = address.lastIndex(of: "-") else { return (address[...], 0) }
    let ssid = Int(address[address.index(after: dash)...]).flatMap { (0...15).contains($0) ? $0 : nil }
    return (address[..<dash], ssid)
  }

  /// A base call collecting at least this many SSIDs is covered by one prefix entry `CALL*` instead of one entry
  /// per SSID (fewer bytes, and `CALL*` matches `CALL-0` as well).
  static let prefixFromSSIDs = 4

  /// The `g/` entries that let the collected SSIDs through, within `budget` bytes (Σ entry + 1): per base call,
  /// exact entries for a few SSIDs (`CALL-9`; SSID 0 as both `CALL` and `CALL-0`, aprsc matching exactly) or
  /// `CALL*` for many. When they do not fit, every base call becomes `CALL*`, and then those prefixes are
  /// shortened one character at a time (one-character prefixes always fit), so every collected SSID stays
  /// covered whatever the number of stations. Sorted, without repeats.
  func filterEntries(budget: Int) -> [String] {
    guard !byBase.isEmpty else { return [] }
    var exact: [String] = []
    for (base, stations) in byBase {
      let ssids = stations.reduce(SSIDSet.empty) { SSIDSet(bits: $0.bits | $1.ssids.bits) }
      if ssids.ssids.count >= Self.prefixFromSSIDs {
        exact.append(base + "*")
        continue
      }
      for ssid in ssids.ssids {
        if ssid == 0 {
          exact.append(base)
          exact.append(base + "-0")
        } else {
          exact.append(base + "-\(ssid)")
        }
      }
    }
    var entries = Set(exact)
    if Self.bytes(entries) <= budget { return entries.sorted() }
    var prefixes = Set(byBase.keys)
    while Self.bytes(Set(prefixes.map { $0 + "*" })) > budget, prefixes.contains(where: { $0.count > 1 }) {
      prefixes = Set(prefixes.map { String($0.prefix(max(1, $0.count - 1))) })
    }
    entries = Set(prefixes.map { $0 + "*" })
    return entries.sorted()
  }

  /// The line bytes entries take (each and its `/`).
  static func bytes(_ entries: Set<String>) -> Int { entries.reduce(0) { $0 + $1.utf8.count + 1 } }
}
