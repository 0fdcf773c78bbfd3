import Platform
import Store

#if canImport(Glibc)
  import Glibc
#endif

/// `stations DB COUNT [SAMPLE_FILE SAMPLES [NEW_FILE NEW]]`: registers COUNT random stations shaped like amateur
/// calls (`K1ABC`, `KJ7XY-12`, …) in DB, heard from now, straight through the Store in ONE transaction (not
/// through the API), for the listener's benchmarks at world scale. With SAMPLE_FILE (`-`: none), writes SAMPLES of
/// them as a Lua table of `/v1/heartbeat` bodies (`return { '{…}', … }`) for wrk. With NEW_FILE, writes NEW
/// `/v1/register` bodies of further stations, none of them in DB, one JSON body a line (`Tests/bench/registrations`
/// registers them as new stations). Prints how long the insert took.
enum StationsBench: Benchmark {
  static let name = "stations"
  static let usage =
    "stations DB COUNT [SAMPLE_FILE SAMPLES [NEW_FILE NEW]]   register COUNT random stations in one transaction"

  static func run(_ arguments: [String]) -> Int32 {
    guard [2, 4, 6].contains(arguments.count), let count = Int(arguments[1]), count > 0,
      arguments.count == 2 || Int(arguments[3]) != nil, arguments.count < 6 || Int(arguments[5]) != nil
    else {
      printError("usage: aprs-cloud-bench \(usage)")
      return 2
    }
    let newCount = arguments.count == 6 ? max(0, Int(arguments[5]) ?? 0) : 0
    var generator = CallGenerator(seed: UInt64(count))
    // The first COUNT are the same calls whether or not new ones follow (one sequence).
    var calls = generator.distinctCalls(count + newCount)
    let newStations = Array(calls[count...])
    calls.removeLast(newCount)
    let stations = calls
    let started = monotonicMilliseconds()
    do {
      let database = try Database(path: arguments[0])
      defer { database.close() }
      _ = try database.migrate()
      let now = epochMilliseconds()
      try database.writeBatch { () throws(StoreError) in
        for station in stations {
          _ = try database.upsertStation(
            StationUpsert(
              address: station.address, base: station.base, ssid: station.ssid, platform: .android,
              pushToken: nil, ackMessages: false, isRegistration: true),
            now: now)
        }
      }
    } catch {
      printError("stations: \(error)")
      return 1
    }
    let elapsed = monotonicMilliseconds() - started
    print(
      "stations: \(count) registered in one transaction in \(fixed(Double(elapsed) / 1000, decimals: 1)) s")
    if arguments.count >= 4, arguments[2] != "-", let samples = Int(arguments[3]) {
      var text = "return {\n"
      for index in 0..<min(samples, stations.count) {
        let station = stations[index * max(1, stations.count / max(1, samples)) % stations.count]
        text +=
          "'{\"callsign\":\"\(station.base)\",\"ssid\":\(station.ssid),\"platform\":\"android\","
          + "\"auth\":\"\(passcode(station.base))\"}',\n"
      }
      text += "}\n"
      guard let file = fopen(arguments[2], "w") else {
        printError("stations: cannot write \(arguments[2])")
        return 1
      }
      fputs(text, file)
      fclose(file)
    }
    if arguments.count == 6 {
      var text = ""
      for (index, station) in newStations.enumerated() {
        text +=
          "{\"callsign\":\"\(station.base)\",\"ssid\":\(station.ssid),\"platform\":\"android\","
          + "\"pushToken\":\"bench:new-\(index)\",\"ackMessages\":false,\"wantHistory\":true,\"since\":0,"
          + "\"auth\":\"\(passcode(station.base))\"}\n"
      }
      guard let file = fopen(arguments[4], "w") else {
        printError("stations: cannot write \(arguments[4])")
        return 1
      }
      fputs(text, file)
      fclose(file)
    }
    return 0
  }

  /// The APRS-IS passcode of a base call (docs/protocol.md).
  static func passcode(_ base: String) -> Int {
    let bytes = Array(base.utf8)
    var hash = 0x73E2
    var index = 0
    while index < bytes.count {
      hash ^= Int(bytes[index]) << 8
      if index + 1 < bytes.count { hash ^= Int(bytes[index + 1]) }
      index += 2
    }
    return hash & 0x7FFF
  }
}

/// Random calls shaped like most amateur calls (a one- or two-letter prefix, a digit, a suffix of one to three
/// letters, SSID 0–15, all equally likely), and addressees of a realistic mix, from a seed (SplitMix64).
struct CallGenerator {
  struct Call {
    var base: String
    var ssid: Int
    var address: String { ssid == 0 ? base : "\(base)-\(ssid)" }
  }

  static let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
  static let characters = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
  /// Addressees that are not calls: bulletins, services, tactical names, calls of other shapes.
  static let others = [
    "BLN1", "BLN2", "BLN3WX", "BLNA", "WXBOT", "ANSRVR", "EMAIL-2", "SMSGTE", "APRSPH", "WLNK-1", "WHO-IS",
    "REPEAT", "QST", "CQ", "2E0ABC", "9A1AA-7", "4X1AB", "ISS", "SKYWARN", "NWS-TSTM",
  ]

  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

  mutating func call() -> Call {
    var base = ""
    for _ in 0...below(2) { base.append(Self.letters[below(26)]) }
    base += String(below(10))
    for _ in 0...below(3) { base.append(Self.letters[below(26)]) }
    return Call(base: base, ssid: below(16))
  }

  /// `count` distinct calls.
  mutating func distinctCalls(_ count: Int) -> [Call] {
    var seen = Set<String>()
    seen.reserveCapacity(count)
    var calls: [Call] = []
    calls.reserveCapacity(count)
    while calls.count < count {
      let next = call()
      if seen.insert(next.address).inserted { calls.append(next) }
    }
    return calls
  }

  /// An addressee of the realistic mix: 95 % calls as above, 5 % others (a known name or 3–9 random characters).
  mutating func addressee() -> String {
    guard below(100) < 5 else { return call().address }
    if below(2) == 0 { return Self.others[below(Self.others.count)] }
    let length = 3 + below(7)
    return String((0..<length).map { _ in Self.characters[1 + below(36)] })
  }
}
