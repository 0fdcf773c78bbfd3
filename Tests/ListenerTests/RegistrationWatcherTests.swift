import APRS
import Logging
import Platform
import Synchronization
import Testing

@testable import Listener
@testable import Store

/// A wall clock a test moves by hand.
final class ManualClock: Sendable {
  private let value: Atomic<Int64>
  init(_ start: Int64) { value = Atomic(start) }
  var now: Int64 { value.load(ordering: .relaxed) }
  func advance(_ milliseconds: Int64) { value.add(milliseconds, ordering: .relaxed) }
  var epochClock: EpochClock { { [self] in now } }
}

/// A watcher on a test database, with a second connection that registers (as the responder would).
struct WatcherRig {
  static let expiryMs: Int64 = 7 * 86_400_000
  let test: TestDatabase
  let responder: Database
  let registry = StationRegistry()
  let clock = ManualClock(1_800_000_000_000)
  let watcher: RegistrationWatcher

  init(trackOutgoing: Bool = false) throws {
    test = try TestDatabase()
    responder = try Database(path: test.path)
    watcher = RegistrationWatcher(
      database: test.database, expiryMs: Self.expiryMs, trackOutgoing: trackOutgoing, pollMs: 1_000,
      registry: registry, logger: Logger(level: .error), stopped: Latch(), clock: clock.epochClock)
  }

  /// Registers (or heartbeats) stations now, through the responder's connection, in one transaction.
  func register(_ addresses: [String], at time: Int64? = nil) throws {
    let now = time ?? clock.now
    try responder.writeBatch { () throws(StoreError) in
      for address in addresses {
        let parts = address.split(separator: "-", maxSplits: 1)
        _ = try responder.upsertStation(
          StationUpsert(
            address: address, base: String(parts[0]), ssid: parts.count > 1 ? Int(parts[1]) ?? 0 : 0,
            platform: nil, pushToken: nil, ackMessages: true, isRegistration: true),
          now: now)
      }
    }
  }

  func unregister(_ address: String) throws { try responder.deleteStation(address) }

  func remove() {
    responder.close()
    test.remove()
  }
}

@Suite(.serialized) struct RegistrationWatcherTests {
  @Test func itReadsEveryStationOnceThenOnlyWhatChanged() throws {
    let rig = try WatcherRig()
    defer { rig.remove() }
    let many = stationAddresses(5_000)
    try rig.register(many)
    let first = try #require(try rig.watcher.check())
    #expect(rig.watcher.work.fullLoads == 1 && rig.watcher.work.stationsLoaded == 5_000)
    #expect(rig.registry.count == 5_000 && first.byteCount <= 510)
    #expect(many.allSatisfy { rig.registry.serves($0) })
    #expect(try rig.watcher.check() == nil)  // nothing changed: nothing read
    #expect(rig.watcher.work.changesRead == 0)

    // One registration: one row read, one station added, whatever the number of stations.
    try rig.register(["OH7LZB"])
    _ = try rig.watcher.check()
    #expect(rig.watcher.work == .init(fullLoads: 1, stationsLoaded: 5_000, changesRead: 1, expiriesRead: 0))
    #expect(rig.registry.serves("OH7LZB") && rig.registry.count == 5_001)
    // A heartbeat of a station already served: one row, no change, no new line.
    try rig.register(["OH7LZB"])
    #expect(try rig.watcher.check() == nil)
    #expect(rig.watcher.work.changesRead == 2)
    // An unregistration: one row, the station gone.
    try rig.unregister(many[17])
    _ = try rig.watcher.check()
    #expect(rig.watcher.work.changesRead == 3 && !rig.registry.serves(many[17]))
    // Many at once: as many rows, still no second full load.
    let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    try rig.register((0..<300).map { "W\($0 % 10)X\(letters[$0 / 10 % 26])\(letters[$0 / 260])" })
    _ = try rig.watcher.check()
    #expect(rig.watcher.work.changesRead == 303 && rig.watcher.work.fullLoads == 1)
    #expect(rig.registry.count == 5_300)
  }

  @Test func theLineChangesWhenTheSetDoesAndMatchesAFreshPlan() throws {
    let rig = try WatcherRig()
    defer { rig.remove() }
    try rig.register(["OH7LZB"])
    #expect(try rig.watcher.check()?.spec == "g/OH7LZB/OH7LZB-0")
    try rig.register(["N0CALL-7"])
    #expect(try rig.watcher.check()?.spec == "g/N0CALL-7/OH7LZB/OH7LZB-0")
    try rig.unregister("OH7LZB")
    #expect(try rig.watcher.check()?.spec == "g/N0CALL-7")
    try rig.unregister("N0CALL-7")
    #expect(try rig.watcher.check() == .empty)
    // Grown to 2,000: the line is what a planner built from scratch gives.
    let many = stationAddresses(2_000)
    try rig.register(many)
    let line = try #require(try rig.watcher.check())
    #expect(line == filterLine(many))
  }

  @Test func stationsLeaveWhenTheirHeartbeatCrossesTheExpiryBoundaryWithoutAFullRead() throws {
    let rig = try WatcherRig()
    defer { rig.remove() }
    let start = rig.clock.now
    try rig.register(["OLD1"], at: start - WatcherRig.expiryMs - 1)  // expired already
    try rig.register(["OH7LZB"], at: start - WatcherRig.expiryMs + 60_000)  // a minute left
    try rig.register(["N0CALL-7"], at: start)
    _ = try rig.watcher.check()
    #expect(!rig.registry.serves("OLD1") && rig.registry.serves("OH7LZB") && rig.registry.count == 2)
    rig.clock.advance(59_000)
    _ = try rig.watcher.check(force: true)
    #expect(rig.registry.serves("OH7LZB") && rig.watcher.work.expiriesRead == 0)
    rig.clock.advance(1_001)
    #expect(try rig.watcher.check(force: true)?.spec == "g/N0CALL-7")
    #expect(!rig.registry.serves("OH7LZB"))
    #expect(rig.watcher.work.expiriesRead == 1 && rig.watcher.work.fullLoads == 1)
    // It comes back with a heartbeat.
    try rig.register(["OH7LZB"])
    #expect(try rig.watcher.check()?.spec == "g/N0CALL-7/OH7LZB/OH7LZB-0")
  }

  @Test func rowsPrunedBeforeItReadThemOrALogThatWentBackMeanOneFullRead() throws {
    let rig = try WatcherRig()
    defer { rig.remove() }
    try rig.register(["OH7LZB"])
    _ = try rig.watcher.check()
    try rig.register(["N0CALL-7", "W1AW"])
    // Someone deleted rows the watcher never read.
    try rig.responder.pruneStationChanges(through: 2)
    #expect(try rig.watcher.check()?.spec == "g/N0CALL-7/OH7LZB/OH7LZB-0/W1AW/W1AW-0")
    #expect(rig.watcher.work.fullLoads == 2)
    // The log went back (a restored backup): read everything again.
    try rig.responder.pruneStationChanges(through: 10)
    try rig.responder.execute("UPDATE sqlite_sequence SET seq = 1 WHERE name = 'station_changes'")
    try rig.unregister("W1AW")
    #expect(try rig.watcher.check()?.spec == "g/N0CALL-7/OH7LZB/OH7LZB-0")
    #expect(rig.watcher.work.fullLoads == 3)
  }

  @Test func withOutgoingTrackingEveryStationIsAlsoASender() throws {
    let rig = try WatcherRig(trackOutgoing: true)
    defer { rig.remove() }
    try rig.register(["OH7LZB"])
    #expect(try rig.watcher.check()?.spec == "g/OH7LZB/OH7LZB-0 b/OH7LZB/OH7LZB-0")
    try rig.register(["N0CALL-7"])
    #expect(try rig.watcher.check()?.spec == "g/N0CALL-7/OH7LZB/OH7LZB-0 b/N0CALL-7/OH7LZB/OH7LZB-0")
    try rig.unregister("OH7LZB")
    #expect(try rig.watcher.check()?.spec == "g/N0CALL-7 b/N0CALL-7")
  }

  @Test func theRowsItReadAreDeletedNowAndThen() throws {
    let rig = try WatcherRig()
    defer { rig.remove() }
    try rig.register(["OH7LZB", "N0CALL-7"])
    _ = try rig.watcher.check()
    try rig.register(["W1AW"])
    _ = try rig.watcher.check()
    // The first check deleted the rows up to where its full read began; the next row waits for the next round.
    #expect(try rig.test.database.stationChangeLog() == StationChangeLog(newest: 3, oldest: 3))
    #expect(rig.watcher.cursor == 3)
  }
}
