// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import TestSupport
import Testing

@testable import Store

/// `Database+SteadyClock.swift`: the floor of the listener's steady clock.
@Suite struct DatabaseSteadyClockTests {
  @Test func theFloorIsTheNewestDedupOrAckTime() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    #expect(try database.steadyClockFloor() == 0, "nothing stored yet")
    try register(database, "N0CALL-7")
    _ = try database.storeMessages([incoming("N0CALL-7", "one")], now: 5_000, stampedAt: 1)
    #expect(try database.steadyClockFloor() == 5_000, "the dedup row's time, not the message's stamp")
    #expect(try database.ackDue(key: "N0CALL-7>KJ7ABC-7:1", now: 9_000, minIntervalMs: 30_000))
    #expect(try database.steadyClockFloor() == 9_000, "the newer ACK time")
    _ = try database.storeMessages([incoming("N0CALL-7", "two")], now: 7_000)
    #expect(try database.steadyClockFloor() == 9_000, "the newest of both, never an older one")
  }
}
