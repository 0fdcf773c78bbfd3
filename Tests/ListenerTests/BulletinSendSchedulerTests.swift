import APRS
import Logging
import Store
import Testing

@testable import Listener

/// The schedule of bulletin and announcement sends (`SendScheduler+Bulletins.swift`; docs/protocol.md "Bulletins and
/// announcements"): the pure decisions, then the sender shell on a real database with a clock the test moves.
@Suite struct BulletinSendSchedulerTests {
  static let t0: Int64 = 1_800_000_000_000
  static let scheduler = SendScheduler(
    offsetsMs: [0, 31, 62, 124, 248, 496, 992, 1984].map { $0 * 1000 }, ackWaitMs: 60_000)

  static func bulletin(_ addressee: String, id: Int64 = 1) -> InFlightSend {
    InFlightSend(
      id: id, station: "OH7LZB-9", addressee: addressee, text: "Net tonight", msgno: nil, createdAt: t0,
      kind: .bulletin)
  }

  /// Plays `send`'s schedule with the clock stepping `stepMs` until it ends (at most `untilMs` after t0), applying
  /// each decision as the store would; `canTransmit` and `allowance` say when copies may go. Returns the copies'
  /// times (ms after t0), their lines, and when the send ended.
  static func run(
    _ start: InFlightSend, stepMs: Int64, untilMs: Int64, canTransmit: (Int64) -> Bool = { _ in true },
    allowance: (Int64) -> Int = { _ in .max }
  ) -> (copies: [Int64], lines: Set<String>, ended: (at: Int64, change: SendScheduleChange)?) {
    var send = start
    var copies: [Int64] = []
    var lines: Set<String> = []
    var waiting: Set<Int64> = []
    var now = t0
    while now <= t0 + untilMs {
      let plan = scheduler.plan(
        [send], now: now, canTransmit: canTransmit(now - t0), allowance: allowance(now - t0), waiting: waiting
      )
      waiting = Set(plan.waiting)
      for change in plan.changes {
        switch change {
        case .transmitted(_, let at, let nextAt, let expiresAt, let delay):
          copies.append(at - t0)
          send.transmissions += 1
          send.lastSentAt = at
          send.nextAt = nextAt
          send.expiresAt = expiresAt
          send.budgetDelayMs += delay
        case .scheduled(_, let nextAt, let expiresAt):
          send.nextAt = nextAt
          send.expiresAt = expiresAt
        case .expired, .completed:
          return (copies, lines, (now - t0, change))
        }
      }
      for line in plan.lines.values { lines.insert(String(decoding: line, as: UTF8.self)) }
      now += stepMs
    }
    return (copies, lines, nil)
  }

  @Test func aBulletinGoesOutThirteenTimesOnTheTwentyMinuteGridUnnumberedThenCompletes() {
    let (copies, lines, ended) = Self.run(Self.bulletin("BLN3WX"), stepMs: 60_000, untilMs: 6 * 3_600_000)
    #expect(copies == (0...12).map { Int64($0) * 1_200_000 })
    #expect(lines == ["OH7LZB-9>APRS,TCPIP*::BLN3WX   :Net tonight\r\n"])
    // It ends with its last copy, as completed (never expired: nobody answers a bulletin).
    #expect(ended?.at == 4 * 3_600_000 && ended?.change == .completed(id: 1))
  }

  @Test func anAnnouncementGoesOutHourlyForFourDays97Times() {
    let (copies, lines, ended) = Self.run(Self.bulletin("BLNAEVT"), stepMs: 600_000, untilMs: 5 * 86_400_000)
    #expect(copies.count == 97)
    #expect(copies == (0...96).map { Int64($0) * 3_600_000 })
    #expect(lines == ["OH7LZB-9>APRS,TCPIP*::BLNAEVT  :Net tonight\r\n"])
    #expect(ended?.at == 4 * 86_400_000 && ended?.change == .completed(id: 1))
  }

  @Test func slotsMissedWhileTheLinkIsDownCollapseAndAGridPastItsEndCompletesWithoutACopy() {
    // Down from 30 min to 75 min: the 40 and 60 min slots become one copy at 75 min, then the grid goes on.
    let (copies, _, _) = Self.run(
      Self.bulletin("BLN1"), stepMs: 60_000, untilMs: 6 * 3_600_000,
      canTransmit: { !(1_800_000..<4_500_000).contains($0) })
    #expect(copies.prefix(4) == [0, 1_200_000, 4_500_000, 4_800_000])
    #expect(copies.last == 14_400_000)
    // Down from 3.5 h on: the send completes after its grid is over, with no late copy.
    let (late, _, ended) = Self.run(
      Self.bulletin("BLN1"), stepMs: 60_000, untilMs: 6 * 3_600_000, canTransmit: { $0 < 12_600_000 })
    #expect(late.count == 11 && late.last == 12_000_000)
    #expect(ended?.change == .completed(id: 1) && (ended?.at ?? 0) > 14_400_000)
  }

  @Test func aLastCopyDueALittleLateStillGoesOutAndEndsTheBulletin() {
    var send = Self.bulletin("BLN3WX")
    send.transmissions = 12
    send.lastSentAt = Self.t0 + 13_200_000
    send.nextAt = Self.t0 + 14_400_000
    send.expiresAt = Self.t0 + 15_000_000
    let now = Self.t0 + 14_405_000
    let plan = Self.scheduler.plan([send], now: now, canTransmit: true)
    #expect(
      plan.changes == [
        .transmitted(id: 1, at: now, nextAt: nil, expiresAt: Self.t0 + 15_000_000), .completed(id: 1),
      ])
    #expect(plan.lines[1] != nil)
  }

  @Test func aCopyTheBudgetHoldsBackMovesTheRestOfTheGrid() {
    // No room between 20 and 25 minutes: the second copy goes at 25, the later ones 5 minutes later too.
    let (copies, _, ended) = Self.run(
      Self.bulletin("BLN2"), stepMs: 60_000, untilMs: 6 * 3_600_000,
      allowance: { (1_200_000..<1_500_000).contains($0) ? 0 : .max })
    #expect(copies.count == 13)
    #expect(copies.prefix(3) == [0, 1_500_000, 2_700_000])
    #expect(copies.last == 14_700_000)
    #expect(ended?.change == .completed(id: 1))
  }

  @Test func aBulletinToNoBulletinAddressIsCompletedUnsentAndAMessageKeepsItsNumber() {
    let plan = Self.scheduler.plan([Self.bulletin("BLN12345678")], now: Self.t0, canTransmit: true)
    #expect(plan.changes == [.completed(id: 1)] && plan.lines.isEmpty)
    let message = InFlightSend(
      id: 2, station: "OH7LZB-9", addressee: "KJ7ABC-7", text: "Hi", msgno: "7", createdAt: Self.t0)
    let numbered = Self.scheduler.plan([message], now: Self.t0, canTransmit: true)
    #expect(numbered.lines[2] == Array("OH7LZB-9>APRS,TCPIP*::KJ7ABC-7 :Hi{7\r\n".utf8))
  }

  // MARK: The sender on a real database

  @Test func theSenderTransmitsTheBulletinOnItsGridAnAckNeverStopsItAndACancelDoes() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB-9")
    let rig = OutboundSenderTests.Rig()
    let sender = try rig.sender(test.path)
    defer { sender.database.close() }
    let creation = try test.database.createSend(
      NewSend(
        station: "OH7LZB-9", addressee: "BLN3WX", text: "Net tonight", clientId: "net", kind: .bulletin,
        client: "192.0.2.1"),
      limits: SendLimits(), now: Self.t0)
    guard case .created = creation else {
      Issue.record("not created: \(creation)")
      return
    }
    let line = "OH7LZB-9>APRS,TCPIP*::BLN3WX   :Net tonight\r\n"
    try sender.check()
    #expect(rig.written == [line])
    // 31 s on, where a message would go again: nothing.
    rig.advance(to: 31_000)
    try sender.check()
    #expect(rig.written.count == 1)
    // Acks, rejs and reply-acks from anyone (the addressee included) stop nothing: a bulletin has no number.
    let writer = MessageWriter(database: test.database, router: LineRouter())
    for (index, answer) in [
      "BLN3WX>APDR16,TCPIP*,qAC,T2TEST::OH7LZB-9 :ack1", "KJ7ABC-7>APDR16,TCPIP*,qAC,T2TEST::OH7LZB-9 :rej1",
      "KJ7ABC-7>APDR16,TCPIP*,qAC,T2TEST::OH7LZB-9 :thanks{5}1",
    ].enumerated() {
      let result = try writer.process(
        [bytes(answer)], stations: try test.stations(), canTransmit: true,
        now: Self.t0 + 40_000 + Int64(index))
      #expect(result.sendsAnswered.isEmpty)
    }
    _ = try test.database.answerSends(
      [SendAnswer(station: "OH7LZB-9", peer: "BLN3WX", msgno: "1", kind: .ack)], now: Self.t0 + 50_000)
    rig.advance(to: 1_200_000)
    try sender.check()
    #expect(rig.written == [line, line])
    rig.advance(to: 2_400_000)
    try sender.check()
    #expect(rig.written.count == 3)
    #expect(try test.database.sendStatus().bulletinTransmissions == 3)
    #expect(try test.database.sendStatus().transmissions == 3)
    // The station cancels: no copy goes out any more.
    let cancelled = try test.database.cancelSend(
      station: "OH7LZB-9", clientId: "net", now: Self.t0 + 2_500_000, client: "192.0.2.1")
    guard case .cancelled(let message, _) = cancelled else {
      Issue.record("not cancelled: \(cancelled)")
      return
    }
    #expect(message.state == .cancelled)
    for minutes in stride(from: 60, through: 300, by: 20) {
      rig.advance(to: Int64(minutes) * 60_000)
      try sender.check()
    }
    #expect(rig.written.count == 3)
    #expect(rig.pushes.withLock { $0 }.isEmpty)
  }

  @Test func theSenderCompletesTheBulletinAfterItsLastCopyWithoutAPush() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB-9")
    let rig = OutboundSenderTests.Rig()
    let sender = try rig.sender(test.path)
    defer { sender.database.close() }
    _ = try test.database.createSend(
      NewSend(station: "OH7LZB-9", addressee: "BLN1", text: "Hi all", clientId: nil, kind: .bulletin),
      limits: SendLimits(), now: Self.t0)
    // Bounded: one look a minute over five hours.
    for minute in 0...300 {
      rig.advance(to: Int64(minute) * 60_000)
      try sender.check()
    }
    #expect(rig.written.count == 13)
    let status = try test.database.sendStatus()
    #expect(status[.completed] == 1 && status[.expired] == 0 && status.inFlight == 0)
    let sent = try test.database.sync(station: "OH7LZB-9", since: 0, now: Self.t0).messages.last {
      $0.direction == .sent
    }
    #expect(sent?.state == .completed && sent?.msgno == nil && sent?.peer == "BLN1")
    #expect(rig.pushes.withLock { $0 }.isEmpty)
  }
}
