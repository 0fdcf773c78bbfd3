import Foundation
import TestSupport
import Testing

@testable import Store

/// Opens a connection on `path` and, unless told otherwise, migrates it to the latest schema.
func openStore(_ path: String, options: StoreOptions = .init(), migrate: Bool = true) throws -> Database {
  let database = try Database(path: path, options: options)
  if migrate { try database.migrate() }
  return database
}

/// Registers `address` (CALL or CALL-SSID) with an optional token.
@discardableResult
/// A migrated database in a temporary folder of its own, with `station` registered when given; the caller closes
/// it and removes the folder.
func temporaryStore(registering station: String? = nil) throws -> (Database, TempDirectory) {
  let directory = try TempDirectory()
  let database = try openStore(directory.database)
  if let station { try register(database, station) }
  return (database, directory)
}

/// Runs `body` on a migrated database in a temporary folder of its own, closed and removed afterwards.
func withDatabase(_ body: (Database) throws -> Void) throws {
  let dir = try TempDirectory()
  defer { dir.remove() }
  let database = try openStore(dir.database)
  defer { database.close() }
  try body(database)
}

func register(
  _ database: Database, _ address: String, platform: DevicePlatform? = .android, token: String? = nil,
  ackMessages: Bool? = false, now: Int64 = 1_000
) throws -> StationRecord {
  try database.upsertStation(
    stationUpsert(address, platform: platform, token: token, ackMessages: ackMessages, isRegistration: true),
    now: now)
}

/// A heartbeat for `address`.
@discardableResult
func heartbeat(
  _ database: Database, _ address: String, platform: DevicePlatform? = .android, token: String? = nil,
  now: Int64
) throws -> StationRecord {
  try database.upsertStation(
    stationUpsert(address, platform: platform, token: token, ackMessages: nil, isRegistration: false),
    now: now)
}

func stationUpsert(
  _ address: String, platform: DevicePlatform?, token: String?, ackMessages: Bool?, isRegistration: Bool
) -> StationUpsert {
  let parts = address.split(separator: "-", maxSplits: 1)
  return StationUpsert(
    address: address, base: String(parts[0]), ssid: parts.count > 1 ? Int(parts[1]) ?? 0 : 0,
    platform: platform, pushToken: token, ackMessages: ackMessages, isRegistration: isRegistration)
}

/// A received message for `station` from `peer`, deduplicated on its text unless a key is given.
func incoming(
  _ station: String, _ text: String, from peer: String = "KJ7ABC-7", msgno: String? = nil,
  key: String? = nil, windowMs: Int64 = 3_600_000, direction: MessageDirection = .received
) -> IncomingMessage {
  IncomingMessage(
    station: station, direction: direction, peer: peer, text: text, msgno: msgno,
    dedupKey: key ?? "\(peer)>\(station):\(msgno ?? ""):\(text)", dedupWindowMs: windowMs)
}

/// The message of the ``StoreError/invalidArgument(_:)`` that `body` throws; nil (and an issue) for anything else.
func invalidArgument<T>(_ body: () throws(StoreError) -> T) -> String? {
  do throws(StoreError) {
    _ = try body()
    Issue.record("no error thrown")
    return nil
  } catch {
    guard case .invalidArgument(let message) = error else {
      Issue.record("another error: \(error)")
      return nil
    }
    return message
  }
}

/// Counts the rows of `table` with a one-off query on the connection.
func count(_ database: Database, _ table: String, where condition: String = "1") throws -> Int {
  Int(try database.scalarText("SELECT count(*) FROM \(table) WHERE \(condition)") ?? "") ?? -1
}

/// Collects problems found on background threads, to assert on the test's own thread.
final class Problems: @unchecked Sendable {
  private let lock = NSLock()
  private var items: [String] = []

  func add(_ problem: String) {
    lock.lock()
    items.append(problem)
    lock.unlock()
  }

  var all: [String] {
    lock.lock()
    defer { lock.unlock() }
    return items
  }
}

/// A flag one thread raises and others poll.
final class Flag: @unchecked Sendable {
  private let lock = NSLock()
  private var raised = false

  func raise() {
    lock.lock()
    raised = true
    lock.unlock()
  }

  var isRaised: Bool {
    lock.lock()
    defer { lock.unlock() }
    return raised
  }
}

/// Runs each body on its own thread and waits for all of them.
func runOnThreads(_ bodies: [@Sendable () -> Void]) {
  let group = DispatchGroup()
  for body in bodies {
    group.enter()
    let thread = Thread {
      body()
      group.leave()
    }
    thread.start()
  }
  group.wait()
}

/// Every message of `station` newer than `since`, read a page at a time as a client following its cursor does
/// (an answer carries at most a page: ``Store/Database/pageSize(for:)``), and the last `serverTime`. At most
/// 100,000 pages.
func syncEverything(_ database: Database, station: String, since: Int64 = 0) throws -> SyncResult {
  var all = try database.sync(station: station, since: since, now: 0)
  var pages = 1
  while all.more && pages < 100_000 {
    let next = try database.sync(station: station, since: all.serverTime, now: 0)
    all.messages += next.messages
    all.serverTime = next.serverTime
    all.more = next.more
    pages += 1
  }
  return all
}
