import Store
import Testing

@testable import Listener

/// The transmit budget shared fairly (docs/design.md "Who may do what"): when it cannot take every due copy, the
/// stations take turns, so one station's burst never holds back another's first copy.
@Suite struct SendFairnessSchedulerTests {
  static let t0: Int64 = 1_800_000_000_000

  @Test func stationsTakeTurnsWhenTheBudgetIsShort() {
    var sends = (1...6).map {
      InFlightSend(
        id: Int64($0), station: "BURST-1", addressee: "KJ7ABC-7", text: "b\($0)", msgno: "\($0)",
        createdAt: Self.t0)
    }
    sends.append(
      InFlightSend(
        id: 7, station: "QUIET-2", addressee: "KJ7ABC-7", text: "q", msgno: "1", createdAt: Self.t0 + 1))
    sends.append(
      InFlightSend(
        id: 8, station: "OTHER-3", addressee: "KJ7ABC-7", text: "o", msgno: "1", createdAt: Self.t0 + 2))
    let plan = SendSchedulerTests.defaultSchedule.plan(
      sends, now: Self.t0 + 10, canTransmit: true, allowance: 4)
    let transmitted = plan.changes.compactMap { change -> Int64? in
      if case .transmitted(let id, _, _, _, _) = change { id } else { nil }
    }
    #expect(transmitted == [1, 7, 8, 2])
    #expect(plan.waiting == [3, 4, 5, 6])
    #expect(SendScheduler.fairOrder(sends).map(\.id) == [1, 7, 8, 2, 3, 4, 5, 6])
  }

  @Test func aSendAcceptedPastEveryonesBudgetGoesOutWhenItsWaitIsOver() {
    var send = InFlightSend(
      id: 1, station: "QUEUE-1", addressee: "KJ7ABC-7", text: "q", msgno: "1", createdAt: Self.t0)
    send.budgetDelayMs = 40_000
    let early = SendSchedulerTests.defaultSchedule.plan([send], now: Self.t0 + 39_999, canTransmit: true)
    #expect(early.lines.isEmpty)
    #expect(
      early.changes == [.scheduled(id: 1, nextAt: Self.t0 + 40_000, expiresAt: Self.t0 + 40_000 + 2_044_000)])
    let due = SendSchedulerTests.defaultSchedule.plan([send], now: Self.t0 + 40_000, canTransmit: true)
    #expect(due.lines[1] != nil)
  }
}
