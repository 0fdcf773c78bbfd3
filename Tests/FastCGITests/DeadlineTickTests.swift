import Platform
import Testing

@testable import FastCGI

/// `ParkingOptions.deadlineTickMs`: the keeper wakes for parked deadlines only on the tick's grid, and one wake-up
/// answers every deadline that passed within the tick, none that has not.
@Suite struct DeadlineTickTests {
  static func entry(_ key: String, deadline: Int64) -> ParkedSet.Entry {
    ParkedSet.Entry(key: key, after: 0, deadline: deadline)
  }

  @Test func deadlinesWithinOneTickShareOneWakeUpAndNoneIsAnsweredEarly() {
    var set = ParkedSet()
    for (id, deadline) in [(1, 1_001), (2, 1_500), (3, 1_999), (4, 2_000), (5, 2_001)] as [(UInt64, Int64)] {
      set.insert(Self.entry("K\(id)", deadline: deadline), id: id)
    }
    #expect(set.nextWake(tickMs: 0) == 1_001, "without a tick: the earliest deadline itself")
    #expect(set.nextWake(tickMs: 1_000) == 2_000)
    #expect(Set(set.expired(now: 2_000)) == [1, 2, 3, 4], "one wake-up answers the four that passed")
    #expect(set.nextWake(tickMs: 1_000) == 3_000, "2,001 has not passed: it waits for the next tick")
    #expect(set.expired(now: 2_999) == [5], "a wake-up for something else answers what passed meanwhile")
    #expect(set.nextWake(tickMs: 1_000) == nil)
  }

  @Test func aDeadlineOnTheGridAndAtTheClocksEndsIsItsOwnWakeUp() {
    var set = ParkedSet()
    set.insert(Self.entry("ON", deadline: 5_000), id: 1)
    #expect(set.nextWake(tickMs: 1_000) == 5_000)
    _ = set.expired(now: 5_000)
    set.insert(Self.entry("NEGATIVE", deadline: -1_500), id: 2)
    #expect(set.nextWake(tickMs: 1_000) == -1_000)
    _ = set.expired(now: 0)
    let end = Int64.max - 10
    set.insert(Self.entry("END", deadline: end), id: 3)
    let wake = set.nextWake(tickMs: 1_000)
    #expect(wake == end, "no overflow: the deadline itself")
  }

  @Test func optionsKeepTheTickAtLeastZero() {
    #expect(ParkingOptions(deadlineTickMs: -5).deadlineTickMs == 0)
    #expect(ParkingOptions().deadlineTickMs == 0, "each deadline of its own unless asked")
    #expect(ParkingOptions.responderDeadlineTickMs == 1_000)
  }

  /// Through the server: requests parked with deadlines a few ms apart are answered at (never before) their
  /// deadlines, by the wake-ups of the tick.
  @Test func parkedRequestsAreAnsweredOnTheTickNeverBeforeTheirDeadline() throws {
    let rig = try ServerRig(
      workers: 2, parking: ParkingOptions(deadlineTickMs: 200), code: ParkingTests.code(Recorder()))
    var clients: [(FastCGIClient, Int64)] = []
    for index in 0..<4 {
      let client = try rig.connect()
      let waitMs = Int64(100 + 30 * index)
      clients.append((client, monotonicMilliseconds() + waitMs))
      try client.send(ParkingTests.parkRequest("T\(index)", waitMs: waitMs))
    }
    for (index, (client, earliest)) in clients.enumerated() {
      #expect(client.receive().reply?.text == "timedOut T\(index)")
      #expect(monotonicMilliseconds() >= earliest, "T\(index) answered before its deadline")
    }
    #expect(rig.stop() == true)
  }
}
