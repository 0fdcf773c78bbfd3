// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import TestSupport
import Testing

@testable import Store

/// `Database+DeviceAcks.swift`: the ACKs kept for messages stored under `ackPolicy:"device"`, marked by a pull and
/// taken by the listener.
@Suite struct DatabaseDeviceAcksTests {
  private static let station = "N0CALL-7"
  private static let t0: Int64 = 1_800_000_000_000

  /// A station with the `device` policy and `texts` stored at t0, t0 + 1, …, each with its kept ACK (key `k<n>`).
  private static func database(_ texts: [String]) throws -> (Database, TempDirectory, [Int64]) {
    let directory = try TempDirectory()
    let database = try openStore(directory.database)
    try register(database, station)
    _ = try database.updateStationSettings(station, StationSettingsUpdate(ackPolicy: .device), now: 1)
    var ids: [Int64] = []
    for (index, text) in texts.enumerated() {
      let outcome = try database.storeMessages([incoming(station, text)], now: t0 + Int64(index))
      guard case .stored(let id, _) = outcome.first else { throw StoreError.invalidArgument("not stored") }
      ids.append(id)
    }
    try database.recordDeviceAcks(
      ids.enumerated().map {
        PendingDeviceAck(
          messageID: $0.element, station: "n0call-7", key: "k\($0.offset)", line: "ack\($0.offset)\r\n")
      })
    return (database, directory, ids)
  }

  @Test func aMessageKeepsItsFirstAck() throws {
    let (database, directory, ids) = try Self.database(["one"])
    defer { directory.remove() }
    try database.recordDeviceAcks([])
    try database.recordDeviceAcks([
      PendingDeviceAck(messageID: ids[0], station: Self.station, key: "x", line: "x")
    ])
    #expect(try database.columnTexts("SELECT ack_key || ' ' || station FROM device_acks") == ["k0 N0CALL-7"])
  }

  @Test func onlyADeviceStationsSyncMarks() throws {
    let (database, directory, _) = try Self.database([])
    defer { directory.remove() }
    try register(database, "N0CALL-8")
    #expect(try database.syncMarksPulls(Self.station))
    #expect(try !database.syncMarksPulls("N0CALL-8"))
    #expect(try !database.syncMarksPulls("NOBODY-1"))
    let reader = try Database(path: directory.database, options: StoreOptions(readOnly: true))
    defer { reader.close() }
    #expect(try !reader.syncMarksPulls(Self.station), "a read-only connection never marks")
  }

  @Test func aPullMarksWhatItReadWithinTheWindow() throws {
    let (database, directory, _) = try Self.database(["one", "two", "three"])
    defer { directory.remove() }
    // Pulled exactly at the end of the first message's window: it and the later ones earn their ACKs.
    let pullAt = Self.t0 + DeviceAckRule.pullWindowMs
    #expect(
      try database.markPulled(Self.station, since: Self.t0, through: Self.t0 + 1, now: pullAt) == 1,
      "two only")
    #expect(
      try database.markPulled(Self.station, since: Self.t0, now: pullAt) == 1, "three; two is marked already")
    #expect(
      try database.markPulled(Self.station, since: 0, now: pullAt + 1) == 0, "one arrived too long before")
    #expect(
      try database.pulledDeviceAckKeys(station: "n0call-7", keys: ["k0", "k1", "k2", "k1", "zz"]) == [
        "k1", "k2",
      ])
    #expect(try database.pulledDeviceAckKeys(station: "N0CALL-8", keys: ["k1"]).isEmpty)
  }

  @Test func theListenerTakesPulledAcksOnceOldestPullFirst() throws {
    let (database, directory, _) = try Self.database(["one", "two", "three"])
    defer { directory.remove() }
    #expect(try database.takePulledDeviceAcks(now: Self.t0, minIntervalMs: 30_000) == TakenDeviceAcks())
    _ = try database.markPulled(Self.station, since: Self.t0 + 1, now: Self.t0 + 100)
    _ = try database.markPulled(Self.station, since: 0, now: Self.t0 + 200)
    var first = TakenDeviceAcks()
    first.lines = ["ack2\r\n"]
    #expect(try database.takePulledDeviceAcks(now: Self.t0 + 300, minIntervalMs: 30_000, limit: 1) == first)
    var rest = TakenDeviceAcks()
    rest.lines = ["ack0\r\n", "ack1\r\n"]
    #expect(try database.takePulledDeviceAcks(now: Self.t0 + 300, minIntervalMs: 30_000) == rest)
    #expect(try database.takePulledDeviceAcks(now: Self.t0 + 400, minIntervalMs: 30_000) == TakenDeviceAcks())
  }

  @Test func theThirtySecondRuleAndTheWindowHoldAcksBack() throws {
    let (database, directory, _) = try Self.database(["one", "two"])
    defer { directory.remove() }
    #expect(try database.ackDue(key: "k0", now: Self.t0 + 50, minIntervalMs: 30_000), "ACKed on arrival")
    _ = try database.markPulled(Self.station, since: 0, now: Self.t0 + 100)
    var taken = TakenDeviceAcks()
    taken.lines = ["ack1\r\n"]
    taken.suppressed = 1
    #expect(try database.takePulledDeviceAcks(now: Self.t0 + 200, minIntervalMs: 30_000) == taken)
    // A listener back after the window drops what was pulled before it.
    let (late, lateDirectory, _) = try Self.database(["one"])
    defer { lateDirectory.remove() }
    _ = try late.markPulled(Self.station, since: 0, now: Self.t0 + 100)
    var stale = TakenDeviceAcks()
    stale.stale = 1
    #expect(
      try late.takePulledDeviceAcks(now: Self.t0 + 101 + DeviceAckRule.pullWindowMs, minIntervalMs: 30_000)
        == stale)
    #expect(try count(late, "device_acks", where: "acked_at IS NOT NULL") == 1, "handed on, not sent")
  }
}
