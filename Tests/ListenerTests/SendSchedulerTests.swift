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
        case .transmitted(_, let at, let nextAt, let expiresAt):
          copies.append(at)
          send.transmissions += 1
          send.lastSentAt = at
          send.nextAt = nextAt
          send.expiresAt = expiresAt
        case .scheduled(_, let nextAt, let expiresAt):
          send.nextAt = nextAt
          send.expiresAt = expiresAt
        case .expired:
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
}
