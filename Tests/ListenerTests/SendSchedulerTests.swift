import APRS
import Store
import Testing

@testable import Listener

/// The pure schedule of sent messages (`SendScheduler`), driven by a clock the test moves by hand.
@Suite struct SendSchedulerTests {
  static let defaultSchedule = SendScheduler(
    offsetsMs: [0, 31, 62, 124, 248, 496, 992, 1984].map { $0 * 1000 }, ackWaitMs: 60_000)
  static let t0: Int64 = 1_800_000_000_000

  /// Plays the schedule with the clock stepping `stepMs` (always able to transmit), applying each decision to the
  /// row as the store would, until the message expires; returns the copies' times and the expiry time.
  static func run(_ scheduler: SendScheduler, stepMs: Int64, canTransmit: (Int64) -> Bool = { _ in true })
    -> (copies: [Int64], expiredAt: Int64?)
  {
    var send = InFlightSend(
      id: 1, station: "OH7LZB-9", addressee: "KJ7ABC-7", text: "hi", msgno: "1", createdAt: t0)
    var copies: [Int64] = []
    var now = t0
    while now < t0 + 3_600_000 {
      let plan = scheduler.plan([send], now: now, canTransmit: canTransmit(now))
      for change in plan.changes {
        switch change {
        case .transmitted(_, let at, let nextAt, let expiresAt, _):
          copies.append(at)
          send.transmissions += 1
          send.lastSentAt = at
          send.nextAt = nextAt
          send.expiresAt = expiresAt
        case .scheduled(_, let nextAt, let expiresAt):
          send.nextAt = nextAt
          send.expiresAt = expiresAt
        case .expired, .completed:
          return (copies, now)
        }
      }
      now += stepMs
    }
    return (copies, nil)
  }

  @Test func theDefaultScheduleSendsEightCopiesThenExpiresAfterTheAckWait() {
    let (copies, expiredAt) = Self.run(Self.defaultSchedule, stepMs: 1000)
    #expect(copies.map { ($0 - Self.t0) / 1000 } == [0, 31, 62, 124, 248, 496, 992, 1984])
    #expect(expiredAt == Self.t0 + 2044 * 1000)
  }

  @Test func theFirstCopyGoesAtOnceAndTheSecondAfter31Seconds() {
    let scheduler = Self.defaultSchedule
    let send = InFlightSend(
      id: 7, station: "OH7LZB-9", addressee: "KJ7ABC-7", text: "Hello", msgno: "42", createdAt: Self.t0)
    let first = scheduler.plan([send], now: Self.t0, canTransmit: true)
    #expect(
      first.changes == [
        .transmitted(id: 7, at: Self.t0, nextAt: Self.t0 + 31_000, expiresAt: Self.t0 + 2_044_000)
      ])
    #expect(first.lines[7] == Array("OH7LZB-9>APRS,TCPIP*::KJ7ABC-7 :Hello{42\r\n".utf8))
    var sent = send
    sent.transmissions = 1
    sent.lastSentAt = Self.t0
    sent.nextAt = Self.t0 + 31_000
    sent.expiresAt = Self.t0 + 2_044_000
    #expect(scheduler.plan([sent], now: Self.t0 + 30_999, canTransmit: true).changes.isEmpty)
    #expect(
      scheduler.plan([sent], now: Self.t0 + 31_000, canTransmit: true).changes
        == [
          .transmitted(id: 7, at: Self.t0 + 31_000, nextAt: Self.t0 + 62_000, expiresAt: Self.t0 + 2_044_000)
        ])
  }

  /// However the clock steps (a slow poll, a late first copy), two copies are never closer than 31 s.
  @Test(arguments: [1, 250, 999, 7_000, 29_000])
  func copiesAreNeverCloserThan31Seconds(stepMs: Int64) {
    // A schedule at the 31 s limit, and the first copy delayed by a link that comes up late.
    let tight = SendScheduler(offsetsMs: [0, 31_000, 62_000, 93_000], ackWaitMs: 10_000)
    for scheduler in [Self.defaultSchedule, tight] {
      let (copies, _) = Self.run(scheduler, stepMs: stepMs, canTransmit: { $0 >= Self.t0 + 700 })
      #expect(copies.count >= 2)
      for (previous, next) in zip(copies, copies.dropFirst()) {
        #expect(next - previous >= 31_000, "copies \(previous - Self.t0) and \(next - Self.t0) ms")
      }
    }
  }

  /// The listener was down (or the link was) from 40 s to 300 s: the copies due at 62, 124 and 248 s collapse into
  /// one copy when it is back, and the schedule goes on at 496 s. No burst.
  @Test func missedCopiesCollapseIntoOne() {
    let (copies, expiredAt) = Self.run(
      Self.defaultSchedule, stepMs: 1000,
      canTransmit: { !(Self.t0 + 40_000..<Self.t0 + 300_000).contains($0) })
    #expect(copies.map { ($0 - Self.t0) / 1000 } == [0, 31, 300, 496, 992, 1984])
    #expect(expiredAt == Self.t0 + 2044 * 1000)
  }

  @Test func withoutALoginNothingIsSentButTheMessageStillExpires() {
    let (copies, expiredAt) = Self.run(Self.defaultSchedule, stepMs: 1000, canTransmit: { _ in false })
    #expect(copies.isEmpty)
    #expect(expiredAt == Self.t0 + 2044 * 1000)
    // A new row is scheduled (so it is due again only when there is something to do).
    let fresh = InFlightSend(
      id: 3, station: "OH7LZB-9", addressee: "KJ7ABC-7", text: "x", msgno: "1", createdAt: Self.t0)
    #expect(
      Self.defaultSchedule.plan([fresh], now: Self.t0, canTransmit: false).changes
        == [.scheduled(id: 3, nextAt: Self.t0, expiresAt: Self.t0 + 2_044_000)])
  }

  @Test func aLateLastCopyStillGetsItsAckWait() {
    // The last copy goes out at 2000 s (link down at 1984 s): the answer may take ackWait after it.
    let (copies, expiredAt) = Self.run(
      Self.defaultSchedule, stepMs: 1000,
      canTransmit: { !(Self.t0 + 1_980_000..<Self.t0 + 2_000_000).contains($0) })
    #expect(copies.last == Self.t0 + 2_000_000)
    #expect(expiredAt == Self.t0 + 2_060_000)
  }

  @Test func aSingleCopyScheduleExpiresAfterItsWait() {
    let (copies, expiredAt) = Self.run(SendScheduler(offsetsMs: [0], ackWaitMs: 1_000), stepMs: 100)
    #expect(copies == [Self.t0])
    #expect(expiredAt == Self.t0 + 1_000)
  }

  /// Many sends over one budget, played with a clock stepping `stepMs`, applying each decision as the store
  /// would (the budget delay added to the row), the budget spent as the sender spends it. Returns each send's
  /// copies and when it expired.
  static func runMany(
    _ scheduler: SendScheduler, sends count: Int, budgetPerMinute: Int, stepMs: Int64 = 1000,
    spreadMs: Int64 = 0
  ) -> (copies: [[Int64]], expiredAt: [Int64?], all: [Int64]) {
    var sends = (0..<count).map {
      InFlightSend(
        id: Int64($0), station: "OH7LZB-9", addressee: "KJ7ABC-7", text: "hi", msgno: String($0 + 1),
        createdAt: t0 + Int64($0) * spreadMs)
    }
    var copies = [[Int64]](repeating: [], count: count)
    var expiredAt = [Int64?](repeating: nil, count: count)
    var all: [Int64] = []
    var budget = TransmitBudget(perMinute: budgetPerMinute)
    var waiting: Set<Int64> = []
    var now = t0
    while now < t0 + 7_200_000 && expiredAt.contains(where: { $0 == nil }) {
      // What dueSends returns: pending rows that are new, past their expiry or due; the copy due first first.
      let due =
        sends.filter { send in
          expiredAt[Int(send.id)] == nil && send.createdAt <= now
            && (send.expiresAt == nil || send.expiresAt! <= now || (send.nextAt.map { $0 <= now } ?? false))
        }
        .sorted { ($0.nextAt ?? $0.createdAt, $0.id) < ($1.nextAt ?? $1.createdAt, $1.id) }
      let plan = scheduler.plan(
        due, now: now, canTransmit: true, allowance: budget.available(now: now), waiting: waiting)
      var written = 0
      for change in plan.changes {
        switch change {
        case .transmitted(let id, let at, let nextAt, let expiresAt, let delay):
          copies[Int(id)].append(at)
          all.append(at)
          written += 1
          sends[Int(id)].transmissions += 1
          sends[Int(id)].lastSentAt = at
          sends[Int(id)].nextAt = nextAt
          sends[Int(id)].expiresAt = expiresAt
          sends[Int(id)].budgetDelayMs += delay
        case .scheduled(let id, let nextAt, let expiresAt):
          sends[Int(id)].nextAt = nextAt
          sends[Int(id)].expiresAt = expiresAt
        case .expired(let id), .completed(let id):
          expiredAt[Int(id)] = now
        }
      }
      budget.spend(written, now: now)
      waiting = Set(plan.waiting)
      now += stepMs
    }
    return (copies, expiredAt, all)
  }

  /// 40 sends at once over a budget of 10 lines a minute: no minute ever carries more than 10 lines, every
  /// send still gets all eight copies of its schedule, 31 s apart at least, and expires only after its last.
  @Test func theBudgetHoldsEveryMinuteAndNoScheduleLosesACopy() {
    let (copies, expiredAt, all) = Self.runMany(Self.defaultSchedule, sends: 40, budgetPerMinute: 10)
    for (index, start) in all.enumerated() {
      let inWindow = all[index...].prefix { $0 - start < 60_000 }.count
      #expect(inWindow <= 10, "\(inWindow) lines in the minute from \((start - Self.t0) / 1000) s")
    }
    #expect(all.count == 40 * 8)
    for (send, times) in copies.enumerated() {
      #expect(times.count == 8, "send \(send): \(times.count) copies")
      for (previous, next) in zip(times, times.dropFirst()) {
        #expect(next - previous >= 31_000, "send \(send): copies \(previous - Self.t0), \(next - Self.t0) ms")
      }
      if let last = times.last, let expired = expiredAt[send] {
        #expect(expired >= last + 60_000, "send \(send) expired before its ack wait")
      } else {
        Issue.record("send \(send) never expired")
      }
    }
    // The first minute: the ten sends accepted first go first (the copy due first first).
    #expect(copies.prefix(10).allSatisfy { $0.first == Self.t0 })
    #expect(copies[10].first! >= Self.t0 + 60_000)
  }

  /// With room in the budget the schedule is exactly the plain one: the budget changes nothing.
  /// A send stored before its addressee was refused (an older server took `EMAIL-2`): it is never transmitted,
  /// it expires at once.
  @Test(arguments: ["EMAIL-2", "SMSGTE", "CQ", "APRS", "BLN1"])
  func aSendToAnAddresseeNoLongerTakenExpiresUntransmitted(addressee: String) {
    let send = InFlightSend(
      id: 9, station: "OH7LZB-9", addressee: addressee, text: "hi", msgno: "1", createdAt: Self.t0)
    let plan = Self.defaultSchedule.plan([send], now: Self.t0, canTransmit: true)
    #expect(plan.changes == [.expired(id: 9)])
    #expect(plan.lines.isEmpty)
  }

  @Test func aBudgetWithRoomChangesNothing() {
    let (copies, expiredAt, _) = Self.runMany(Self.defaultSchedule, sends: 3, budgetPerMinute: 60)
    for times in copies {
      #expect(times.map { ($0 - Self.t0) / 1000 } == [0, 31, 62, 124, 248, 496, 992, 1984])
    }
    #expect(expiredAt.allSatisfy { $0 == Self.t0 + 2044 * 1000 })
  }

  @Test func aCopyOverTheAllowanceWaitsUnchangedAndThenMovesTheRestOfItsSchedule() {
    let scheduler = SendScheduler(offsetsMs: [0, 31_000, 62_000], ackWaitMs: 10_000)
    var send = InFlightSend(
      id: 5, station: "OH7LZB-9", addressee: "KJ7ABC-7", text: "x", msgno: "1", createdAt: Self.t0,
      transmissions: 1, lastSentAt: Self.t0, nextAt: Self.t0 + 31_000, expiresAt: Self.t0 + 72_000)
    // Due at 31 s, no room: nothing recorded, it waits.
    let held = scheduler.plan([send], now: Self.t0 + 31_000, canTransmit: true, allowance: 0)
    #expect(held.changes.isEmpty && held.waiting == [5] && held.lines.isEmpty)
    // Still waiting at 80 s, past its expiry (72 s): it does not expire while it waits.
    let late = scheduler.plan(
      [send], now: Self.t0 + 80_000, canTransmit: true, allowance: 0, waiting: [5])
    #expect(late.changes.isEmpty && late.waiting == [5])
    // Room at 100 s: it goes, 69 s late, and the last copy moves from 62 s to 131 s, the expiry with it.
    let sent = scheduler.plan(
      [send], now: Self.t0 + 100_000, canTransmit: true, allowance: 1, waiting: [5])
    #expect(
      sent.changes == [
        .transmitted(
          id: 5, at: Self.t0 + 100_000, nextAt: Self.t0 + 131_000, expiresAt: Self.t0 + 141_000,
          budgetDelayMs: 69_000)
      ])
    // The same send not known to be waiting (a restart, or a link that was down): past its expiry, it expires.
    send.nextAt = Self.t0 + 31_000
    #expect(
      scheduler.plan([send], now: Self.t0 + 80_000, canTransmit: true, allowance: 1).changes == [
        .expired(id: 5)
      ])
  }

  @Test func theAllowanceGoesToTheSendsInTheOrderGiven() {
    let sends = (1...4).map {
      InFlightSend(
        id: Int64($0), station: "OH7LZB-9", addressee: "KJ7ABC-7", text: "x", msgno: String($0),
        createdAt: Self.t0)
    }
    let plan = Self.defaultSchedule.plan(sends, now: Self.t0, canTransmit: true, allowance: 2)
    #expect(Set(plan.lines.keys) == [1, 2])
    #expect(plan.waiting == [3, 4])
    #expect(plan.changes.count == 2)
  }
}

/// The transmit budget's sliding window (`TransmitBudget`), with times the test picks.
@Suite struct TransmitBudgetTests {
  @Test func atMostPerMinuteLinesInAnySixtySeconds() {
    var budget = TransmitBudget(perMinute: 3)
    #expect(budget.available(now: 0) == 3 && !budget.isFull(now: 0) && budget.waitMs(now: 0) == 0)
    budget.spend(2, now: 0)
    budget.spend(1, now: 10_000)
    #expect(budget.isFull(now: 10_000) && budget.available(now: 59_999) == 0)
    #expect(budget.waitMs(now: 30_000) == 30_000, "the two lines at 0 leave the window at 60 s")
    #expect(budget.available(now: 60_000) == 2)
    #expect(budget.available(now: 70_000) == 3)
  }

  @Test func aBudgetOfZeroStillLetsOneLineAMinute() {
    var budget = TransmitBudget(perMinute: 0)
    #expect(budget.perMinute == 1 && budget.available(now: 5) == 1)
    budget.spend(1, now: 5)
    #expect(budget.waitMs(now: 6) == 59_999)
  }

  @Test func overSpendingKeepsOnlyTheNewestLines() {
    var budget = TransmitBudget(perMinute: 2, windowMs: 1_000)
    budget.spend(5, now: 100)
    #expect(budget.spentAt == [100, 100])
    #expect(budget.available(now: 1_100) == 2)
  }
}
