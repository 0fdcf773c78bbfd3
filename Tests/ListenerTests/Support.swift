import APRS
import Config
import Store
import Testing

@testable import Listener

#if canImport(Glibc)
  import Glibc
#endif

/// A fresh directory under /tmp with a migrated database in it; `remove()` it in a `defer`.
struct TestDatabase {
  let directory: String
  let path: String
  let database: Database

  init(options: StoreOptions = StoreOptions()) throws {
    var template = Array("/tmp/aprs-listener-test-XXXXXX".utf8CString)
    guard let created = mkdtemp(&template) else { throw TestError("mkdtemp failed") }
    directory = String(cString: created)
    path = directory + "/listener.sqlite"
    database = try Database(path: path, options: options)
    try database.migrate()
  }

  /// Registers `address` (`CALL` or `CALL-SSID`).
  @discardableResult
  func register(_ address: String, ackMessages: Bool = true, now: Int64 = 1_000) throws -> StationRecord {
    let parts = address.split(separator: "-", maxSplits: 1)
    return try database.upsertStation(
      StationUpsert(
        address: address, base: String(parts[0]), ssid: parts.count > 1 ? Int(parts[1]) ?? 0 : 0,
        platform: .android, pushToken: nil, ackMessages: ackMessages, isRegistration: true),
      now: now)
  }

  /// The live stations as the listener sees them.
  func stations(now: Int64 = 2_000) throws -> LiveStationSet {
    LiveStationSet(
      try database.liveStations(now: now, expiryMs: 7 * 86_400_000),
      collecting: try database.stationsCollectingOtherSSIDs(heardSince: now - 7 * 86_400_000))
  }

  func remove() {
    database.close()
    for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
    rmdir(directory)
  }
}

struct TestError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// Bytes of a string (lines in tests).
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Text of bytes (assertions).
func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// `count` (at most 10,000) stations `KJ0000-1`, `KJ0001-2`, … (valid calls of 8–9 characters like real ones,
/// every one with an SSID): 50 fill an exact `#filter` line, 60 need prefixes.
func manyStations(_ count: Int, prefix: String = "KJ") -> [LiveStation] {
  (0..<count).map { index in
    let number = String(index)
    let call = prefix + String(repeating: "0", count: max(0, 4 - number.count)) + number
    return LiveStation(address: call + "-\(index % 15 + 1)", ackMessages: false)
  }
}

/// `count` (up to 73 million) distinct station addresses shaped like amateur calls: a prefix letter, a digit, a
/// three-letter suffix and SSIDs 0–15 (`A0AAA`, `B0AAA`, … `Z9AAA`, `A0AAA-1`, …), spread over every first letter
/// and digit as real calls are.
func stationAddresses(_ count: Int) -> [String] {
  let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
  return (0..<count).map { index in
    var rest = index
    let prefix = letters[rest % 26]
    rest /= 26
    let digit = rest % 10
    rest /= 10
    let ssid = rest % 16
    rest /= 16
    var suffix = ""
    for _ in 0..<3 {
      suffix.append(letters[rest % 26])
      rest /= 26
    }
    let call = "\(prefix)\(digit)\(suffix)"
    return ssid == 0 ? call : "\(call)-\(ssid)"
  }
}

/// The listener's `#filter` line for these addresses (addressees only), as ``StationRegistry/plan()`` makes it.
func filterLine(_ addresses: [String]) -> FilterLine {
  var planner = FilterPlanner()
  for address in addresses { planner.insert(try! StationAddress(parsing: address)) }
  return StationRegistry(planner).plan()
}
