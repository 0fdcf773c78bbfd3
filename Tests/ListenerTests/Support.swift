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
    LiveStationSet(try database.liveStations(now: now, expiryMs: 7 * 86_400_000))
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

/// `count` stations `KJ0000-1`, `KJ0001-2`, … (valid calls of 8–9 characters like real ones, every one with an
/// SSID): 1 fits a `#filter` line, 60 only a login line, 2000 only the full feed.
func manyStations(_ count: Int, prefix: String = "KJ") -> [LiveStation] {
  (0..<count).map { index in
    let number = String(index)
    let call = prefix + String(repeating: "0", count: max(0, 4 - number.count)) + number
    return LiveStation(address: call + "-\(index % 15 + 1)", ackMessages: false)
  }
}
