// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import TestSupport
import Testing

@testable import Store

/// `Database+TopTalkers.swift`: who did the most in the last hour.
@Suite struct DatabaseTopTalkersTests {
  private static let hour: Int64 = 3_600_000

  @Test func anEmptyDatabaseHasNoTalkers() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    #expect(try database.topTalkers(now: 10 * Self.hour) == TopTalkers())
  }

  @Test func theWindowsAreListedBiggestFirstUpToTheLimit() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    let now = 10 * Self.hour
    for (name, times) in [("N0CALL-1", 3), ("N0CALL-2", 5), ("N0CALL-3", 1), ("N0CALL-4", 3)] {
      for _ in 0..<times {
        _ = try database.consumeRate(
          key: RateKey.registrations + name, limit: 100, windowMs: Self.hour, now: now)
      }
    }
    _ = try database.consumeRate(
      key: RateKey.heartbeats + "N0CALL-9", limit: 100, windowMs: Self.hour, now: now)
    _ = try database.consumeRate(
      key: RateKey.newStationsFromAddress + "192.0.2.1", limit: 100, windowMs: Self.hour, now: now)
    _ = try database.consumeRate(
      key: RateKey.claimsFromAddress + "2001:db8::/64", limit: 100, windowMs: Self.hour, now: now)
    // A window of another kind, and one that ended, are not listed.
    _ = try database.consumeRate(
      key: RateKey.claimCodeRounds + "N0CALL-1", limit: 100, windowMs: Self.hour, now: now)
    _ = try database.consumeRate(
      key: RateKey.registrations + "OLD", limit: 100, windowMs: Self.hour, now: now - 2 * Self.hour)
    let top = try database.topTalkers(now: now + 1, limit: 3)
    #expect(
      top.registrations == [
        TopTalkers.Entry("N0CALL-2", 5), TopTalkers.Entry("N0CALL-1", 3), TopTalkers.Entry("N0CALL-4", 3),
      ], "ties by name")
    #expect(top.heartbeats == [TopTalkers.Entry("N0CALL-9", 1)])
    #expect(top.newStationsByAddress == [TopTalkers.Entry("192.0.2.1", 1)])
    #expect(top.claimsByAddress == [TopTalkers.Entry("2001:db8::/64", 1)])
    #expect(try database.topTalkers(now: now + Self.hour).registrations.isEmpty, "the windows ended")
  }

  @Test func sendsAndDevicesOfTheLastHourCount() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    let now = 10 * Self.hour
    try register(database, "N0CALL-1", token: "old", now: now - 2 * Self.hour)
    try register(database, "N0CALL-1", token: "a", now: now - 10)
    try register(database, "N0CALL-2", token: "b", now: now - 10)
    try register(database, "N0CALL-2", token: "c", now: now - 10)
    let limits = SendLimits(perMinute: 10, inFlight: 20)
    for (index, station) in ["N0CALL-1", "N0CALL-1", "N0CALL-2"].enumerated() {
      _ = try database.createSend(
        NewSend(station: station, addressee: "KJ7ABC-7", text: "m\(index)", clientId: nil), limits: limits,
        now: now - 5)
    }
    let top = try database.topTalkers(now: now)
    #expect(top.sends == [TopTalkers.Entry("N0CALL-1", 2), TopTalkers.Entry("N0CALL-2", 1)])
    #expect(
      top.devices == [TopTalkers.Entry("N0CALL-2", 2), TopTalkers.Entry("N0CALL-1", 1)], "not the old one")
    #expect(try database.topTalkers(now: now, limit: 1).devices == [TopTalkers.Entry("N0CALL-2", 2)])
  }
}
