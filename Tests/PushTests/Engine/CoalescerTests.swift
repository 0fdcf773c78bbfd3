import Testing

@testable import Push
@testable import Store

@Suite struct CoalescerTests {
  func entry(_ id: Int64, station: String = "N0CALL-7", at createdAt: Int64, peer: String = "KJ7ABC-7")
    -> OutboxEntry
  {
    OutboxEntry(
      id: id, station: station, messageID: id,
      message: StoredMessage(
        direction: .received, peer: peer, text: "m\(id)", msgno: nil, timestamp: createdAt + id),
      createdAt: createdAt, attempts: 0, nextAttemptAt: createdAt)
  }

  @Test func aBurstWithinTheWindowIsOneBatchWhenTheWindowCloses() {
    var coalescer = Coalescer(windowMs: 2000, maxAgeMs: 3_600_000)
    var due: [OutboxEntry] = []
    for (index, time) in [0, 100, 400, 900, 1500].enumerated() {
      due.append(entry(Int64(index + 1), at: 10_000 + Int64(time)))
      let early = coalescer.plan(due: due, now: 10_000 + Int64(time))
      #expect(early.batches.isEmpty)
      #expect(early.nextWakeAt == 12_000)
    }
    #expect(coalescer.plan(due: due, now: 11_999).batches.isEmpty)
    let plan = coalescer.plan(due: due, now: 12_000)
    #expect(plan.batches.count == 1)
    #expect(plan.batches[0].entries.count == 5)
    #expect(plan.batches[0].newest.id == 5)
    #expect(plan.nextWakeAt == nil)
    // In flight: not planned again until finished.
    #expect(coalescer.plan(due: due, now: 12_500).batches.isEmpty)
    coalescer.finished(plan.batches[0].ids)
    #expect(coalescer.inFlight.isEmpty)
    #expect(coalescer.plan(due: due, now: 12_500).batches.count == 1)
  }

  @Test func aMessageAfterTheWindowStartsTheNextBurst() {
    var coalescer = Coalescer(windowMs: 2000, maxAgeMs: 3_600_000)
    let first = coalescer.plan(due: [entry(1, at: 0)], now: 2000)
    #expect(first.batches.map(\.ids) == [[1]])
    let second = coalescer.plan(due: [entry(1, at: 0), entry(2, at: 2500)], now: 2600)
    #expect(second.batches.isEmpty)
    #expect(second.nextWakeAt == 4500)
  }

  @Test func windowZeroSendsAtOnce() {
    var coalescer = Coalescer(windowMs: 0, maxAgeMs: 3_600_000)
    let plan = coalescer.plan(due: [entry(1, at: 500)], now: 500)
    #expect(plan.batches.count == 1)
  }

  @Test func stationsAreBatchedSeparately() {
    var coalescer = Coalescer(windowMs: 1000, maxAgeMs: 3_600_000)
    let due = [entry(1, station: "A", at: 0), entry(2, station: "B", at: 10), entry(3, station: "A", at: 20)]
    let plan = coalescer.plan(due: due, now: 1010)
    #expect(plan.batches.map(\.station) == ["A", "B"])
    #expect(plan.batches.map(\.ids) == [[1, 3], [2]])
  }

  @Test func entriesOlderThanMaxAgeAreExpiredNotSent() {
    var coalescer = Coalescer(windowMs: 0, maxAgeMs: 60_000)
    let plan = coalescer.plan(due: [entry(1, at: 0), entry(2, at: 50_000)], now: 60_001)
    #expect(plan.expired.map(\.id) == [1])
    #expect(plan.batches.map(\.ids) == [[2]])
  }

  @Test func aRetriedEntryGoesOutAtOnceWithNewOnes() {
    var coalescer = Coalescer(windowMs: 2000, maxAgeMs: 3_600_000)
    // Entry 1 is old (a retry that came due); entry 2 is new: the burst's window is long past.
    let plan = coalescer.plan(due: [entry(1, at: 0), entry(2, at: 30_000)], now: 30_000)
    #expect(plan.batches.map(\.ids) == [[1, 2]])
  }
}
