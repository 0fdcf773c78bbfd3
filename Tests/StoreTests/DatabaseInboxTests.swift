// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import TestSupport
import Testing

@testable import Store

/// `Database+Inbox.swift`: what the keyed devices pulled, what `untilPulled` keeps, and what was evicted unpulled.
@Suite struct DatabaseInboxTests {
  private static let station = "N0CALL-7"
  private static let keyHash = String(repeating: "cd", count: 32)

  private static func database(options: StoreOptions = .init()) throws -> (Database, TempDirectory) {
    let directory = try TempDirectory()
    let database = try openStore(directory.database, options: options)
    try register(database, station)
    return (database, directory)
  }

  /// Registers (or refreshes) the keyed device `token` of the claimed ``station``.
  private static func keyedDevice(_ database: Database, _ token: String, now: Int64) throws {
    var upsert = stationUpsert(
      station, platform: .android, token: token, ackMessages: nil, isRegistration: false)
    upsert.keyed = true
    _ = try database.upsertStation(upsert, now: now)
  }

  /// The station claimed with `retention` `untilPulled(max:)`.
  private static func untilPulled(_ database: Database, max: Int) throws {
    _ = try database.claimStation(station, keyHash: keyHash, client: "test", now: 10)
    _ = try database.updateStationSettings(
      station, StationSettingsUpdate(retention: .untilPulled(max: max)), now: 11)
  }

  @Test func theRetentionKeepsTheRingAtLeastAndTheOperatorsMaxAtMost() throws {
    let (database, directory) = try Self.database(
      options: StoreOptions(ringSize: 50, maxUnpulledPerStation: 500))
    defer { directory.remove() }
    #expect(database.maxUnpulledPerStation == 500)
    #expect(database.retainedMessages(.ring) == 50)
    #expect(database.retainedMessages(.untilPulled(max: 1)) == 50)
    #expect(database.retainedMessages(.untilPulled(max: 200)) == 200)
    #expect(database.retainedMessages(.untilPulled(max: 500)) == 500)
    #expect(database.retainedMessages(.untilPulled(max: 100_000)) == 500)
  }

  @Test func theRetentionMaxIsReadFromTheSettings() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    #expect(try database.retentionMax(Self.station) == nil)
    #expect(try database.retentionMax("NOBODY-1") == nil)
    try Self.untilPulled(database, max: 120)
    #expect(try database.retentionMax(Self.station) == 120)
  }

  @Test func theFloorIsTheLeastKeyedDeviceOrElseTheCursor() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    #expect(try database.pulledFloor(Self.station) == 0)
    #expect(try database.pulledFloor("NOBODY-1") == 0)
    _ = try database.storeMessages([incoming(Self.station, "one")], now: 1_000)
    _ = try database.sync(station: Self.station, since: 0, now: 1_001)
    #expect(try database.pulledFloor(Self.station) == 1_000, "no keyed device: the station's cursor")
    _ = try database.claimStation(Self.station, keyHash: Self.keyHash, client: "test", now: 1_100)
    try Self.keyedDevice(database, "phone", now: 1_200)
    try Self.keyedDevice(database, "tablet", now: 1_200)
    #expect(try database.pulledFloor(Self.station) == 0, "a keyed device that pulled nothing yet")
    try database.markDevicePulled(station: Self.station, token: "phone", through: 900)
    #expect(try database.pulledFloor(Self.station) == 0, "the least of them")
    try database.markDevicePulled(station: Self.station, token: "tablet", through: 700)
    #expect(try database.pulledFloor(Self.station) == 700)
    // A keyless device does not hold messages back.
    try heartbeat(database, Self.station, token: "keyless", now: 1_300)
    #expect(try database.pulledFloor(Self.station) == 700)
  }

  @Test func aPullMarkOnlyMovesForward() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    _ = try database.claimStation(Self.station, keyHash: Self.keyHash, client: "test", now: 10)
    try Self.keyedDevice(database, "phone", now: 20)
    try database.markDevicePulled(station: "n0call-7", token: "phone", through: 500)
    try database.markDevicePulled(station: Self.station, token: "phone", through: 400)
    #expect(try database.pulledFloor(Self.station) == 500, "never back")
    try database.markDevicePulled(station: Self.station, token: "PHONE", through: 600)
    #expect(try database.pulledFloor(Self.station) == 600, "a token matches in lower case too")
    try database.markDevicePulled(station: "N0CALL-8", token: "phone", through: 900)
    try database.markDevicePulled(station: Self.station, token: "other", through: 900)
    #expect(try database.pulledFloor(Self.station) == 600, "another station's or device's mark")
  }

  @Test func dropsAreCountedPerStationAndInTotal() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    try register(database, "N0CALL-8")
    #expect(try database.droppedCount(station: Self.station, since: 0) == 0)
    try database.writeBatch { () throws(StoreError) in
      try database.recordDrop(Self.station, at: 100, count: 2)
      try database.recordDrop(Self.station, at: 100, count: 1)
      try database.recordDrop(Self.station, at: 200, count: 4)
      try database.recordDrop("N0CALL-8", at: 150, count: 8)
    }
    #expect(try count(database, "drops", where: "station = 'N0CALL-7'") == 2, "one row per storing timestamp")
    #expect(try database.droppedCount(station: "n0call-7", since: 0) == 7)
    #expect(try database.droppedCount(station: Self.station, since: 100) == 4, "after the cursor only")
    #expect(try database.droppedCount(station: Self.station, since: 200) == 0)
    #expect(try database.droppedCount(station: "N0CALL-8", since: 0) == 8)
    #expect(
      try database.scalarText("SELECT value FROM meta WHERE key = '\(Database.droppedUnpulledKey)'") == "15")
  }

  @Test func theDropsSinceTheCursorFollowIt() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    #expect(try database.droppedSinceCursor(station: "NOBODY-1") == 0)
    try database.writeBatch { () throws(StoreError) in
      try database.recordDrop(Self.station, at: 100, count: 2)
      try database.recordDrop(Self.station, at: 300, count: 3)
    }
    #expect(try database.droppedSinceCursor(station: Self.station) == 5)
    _ = try database.storeMessages([incoming(Self.station, "one")], now: 200)
    _ = try database.sync(station: Self.station, since: 0, now: 201)
    #expect(try database.droppedSinceCursor(station: Self.station) == 3, "the cursor stands at 200")
  }

  @Test func theOldestHeldIsOfTheStationsOwnRing() throws {
    let (database, directory) = try Self.database()
    defer { directory.remove() }
    #expect(try database.oldestHeld(station: Self.station) == nil)
    #expect(try database.oldestHeld(station: "NOBODY-1") == nil)
    _ = try database.storeMessages(
      [incoming(Self.station, "other ssid", key: "o").with(to: "N0CALL-9")], now: 100)
    #expect(
      try database.oldestHeld(station: Self.station) == nil, "an entry of another SSID is not the inbox")
    _ = try database.storeMessages([incoming(Self.station, "one"), incoming(Self.station, "two")], now: 200)
    #expect(try database.oldestHeld(station: "n0call-7") == 200)
  }

  @Test func anUntilPulledStationKeepsWhatNoKeyedDevicePulledAndCountsWhatItLoses() throws {
    let (database, directory) = try Self.database(
      options: StoreOptions(ringSize: 2, maxUnpulledPerStation: 3))
    defer { directory.remove() }
    try Self.untilPulled(database, max: 10)
    try Self.keyedDevice(database, "phone", now: 20)
    let texts = (1...3).map { "m\($0)" }
    for (index, text) in texts.enumerated() {
      _ = try database.storeMessages([incoming(Self.station, text)], now: 1_000 + Int64(index))
    }
    #expect(
      try database.recentMessages(station: Self.station, limit: 10).count == 3, "kept past the ring of 2")
    #expect(try database.droppedCount(station: Self.station, since: 0) == 0)
    // The fourth pushes out the oldest: more than the operator's 3.
    _ = try database.storeMessages([incoming(Self.station, "m4")], now: 2_000)
    #expect(try database.recentMessages(station: Self.station, limit: 10).map(\.text) == ["m2", "m3", "m4"])
    #expect(try database.droppedCount(station: Self.station, since: 0) == 1)
    #expect(
      try database.droppedCount(station: Self.station, since: 2_000) == 0, "recorded at the storing timestamp"
    )
    #expect(try database.oldestHeld(station: Self.station) == 1_001)
    // Once the device pulled everything (a sync, which moves the cursor, and its pull mark), the ring applies
    // again, and what it pushes out was pulled: no drop.
    _ = try database.sync(station: Self.station, since: 0, now: 2_001)
    try database.markDevicePulled(station: Self.station, token: "phone", through: 2_000)
    _ = try database.storeMessages([incoming(Self.station, "m5")], now: 3_000)
    #expect(try database.recentMessages(station: Self.station, limit: 10).map(\.text) == ["m4", "m5"])
    #expect(try database.droppedCount(station: Self.station, since: 0) == 1)
  }
}

extension IncomingMessage {
  /// This message addressed to `to`, another SSID of the station's call.
  fileprivate func with(to: String) -> IncomingMessage {
    var copy = self
    copy.to = to
    return copy
  }
}
