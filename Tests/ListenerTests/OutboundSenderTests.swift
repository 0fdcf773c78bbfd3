import APRS
import Logging
import Store
import Synchronization
import Testing

@testable import Listener

/// The sender shell (`OutboundSender`) on a real database, with a clock the test moves and a fake connection
/// that records the lines it is handed.
@Suite struct OutboundSenderTests {
  static let t0: Int64 = 1_800_000_000_000
  static let line = "OH7LZB-9>APRS,TCPIP*::KJ7ABC-7 :Hello{1\r\n"

  final class Rig: Sendable {
    let clock = Atomic<Int64>(OutboundSenderTests.t0)
    let online = Atomic<Bool>(true)
    let lines = Mutex<[String]>([])
    /// Each line with the time it was handed over (ms after t0).
    let stamped = Mutex<[(at: Int64, line: String)]>([])
    let pushes = Mutex<[String]>([])
    /// What the sender told of its budget, in order.
    let budgetStates = Mutex<[Bool]>([])

    var now: Int64 { clock.load(ordering: .relaxed) }
    func advance(to offsetMs: Int64) { clock.store(OutboundSenderTests.t0 + offsetMs, ordering: .relaxed) }
    var written: [String] { lines.withLock { $0 } }

    /// A sender on its own connection to `path` (as the listener's sender thread has).
    func sender(
      _ path: String, schedule: [Int64] = [0, 31, 62, 124], ackWaitMs: Int64 = 60_000, budget: Int = 60
    ) throws -> OutboundSender {
      OutboundSender(
        database: try Database(path: path),
        scheduler: SendScheduler(offsetsMs: schedule.map { $0 * 1000 }, ackWaitMs: ackWaitMs), pollMs: 50,
        logger: Logger(level: .error), canTransmit: { self.online.load(ordering: .relaxed) },
        transmit: { lines in
          let texts = lines.map { String(decoding: $0, as: UTF8.self) }
          let at = self.now - OutboundSenderTests.t0
          self.lines.withLock { $0 += texts }
          self.stamped.withLock { $0 += texts.map { (at, $0) } }
        },
        pushesQueued: { stations in self.pushes.withLock { $0 += stations } },
        budget: TransmitBudget(perMinute: budget),
        budgetChanged: { full in self.budgetStates.withLock { $0.append(full) } },
        clock: { self.clock.load(ordering: .relaxed) },
        // The budget's clock moves with the test's (any origin will do for a monotonic clock).
        monotonic: { self.clock.load(ordering: .relaxed) })
    }
  }

  private func send(_ test: TestDatabase, _ text: String = "Hello", clientId: String? = nil, now: Int64)
    throws
  {
    let creation = try test.database.createSend(
      NewSend(station: "OH7LZB-9", addressee: "KJ7ABC-7", text: text, clientId: clientId),
      limits: SendLimits(), now: now)
    guard case .created = creation else { throw TestError("not created: \(creation)") }
  }

  private func state(_ test: TestDatabase) throws -> SendState? {
    try test.database.sync(station: "OH7LZB-9", since: 0, now: Self.t0).messages.last {
      $0.direction == .sent
    }?
    .state
  }

  @Test func theFirstCopyGoesAtOnceTheSecondAfter31SecondsAndAnAckStopsThem() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB-9")
    let rig = Rig()
    let sender = try rig.sender(test.path)
    defer { sender.database.close() }
    try send(test, now: Self.t0)
    try sender.check()
    #expect(rig.written == [Self.line])
    rig.advance(to: 30_999)
    try sender.check()
    #expect(rig.written.count == 1)
    rig.advance(to: 31_000)
    try sender.check()
    #expect(rig.written == [Self.line, Self.line])
    // The addressee's ack arrives through the writer: the schedule stops at once.
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let result = try writer.process(
      [bytes("KJ7ABC-7>APDR16,TCPIP*,qAC,T2TEST::OH7LZB-9 :ack1")], stations: try test.stations(),
      canTransmit: true, now: Self.t0 + 40_000)
    #expect(result.sendsAnswered.map(\.state) == [.acked])
    #expect(result.receipts == 1)
    #expect(try state(test) == .acked)
    for offset: Int64 in [62_000, 124_000, 500_000] {
      rig.advance(to: offset)
      try sender.check()
    }
    #expect(rig.written.count == 2)
    #expect(rig.pushes.withLock { $0 }.isEmpty)
  }

  /// HTCommander answers a message with `ack<msgno>}<TOKEN>`: that is the addressee's ACK, not a message.
  @Test(arguments: ["ack1}eL8OYs", "ack1}a+/b=9", "rej1}eL8OYs"])
  func anAuthenticatedAckStopsThemAndIsNoMessage(answer: String) throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB-9")
    let rig = Rig()
    let sender = try rig.sender(test.path)
    defer { sender.database.close() }
    let writer = MessageWriter(database: test.database, router: LineRouter())
    // Earlier, a message from the same app (its own token before the number): stored as a message.
    let first = try writer.process(
      [bytes("KJ7ABC-7>APDR16,TCPIP*,qAC,T2TEST::OH7LZB-9 :Hi there}eL8OYs{9")],
      stations: try test.stations(),
      canTransmit: true, now: Self.t0 - 5000)
    #expect(first.stored == 1)
    let received = try #require(
      try test.database.sync(station: "OH7LZB-9", since: 0, now: Self.t0).messages.first)
    #expect(received.text == "Hi there}eL8OYs" && received.msgno == "9")
    try send(test, now: Self.t0)
    try sender.check()
    #expect(rig.written == [Self.line])

    let result = try writer.process(
      [bytes("KJ7ABC-7>APDR16,TCPIP*,qAC,T2TEST::OH7LZB-9 :" + answer)], stations: try test.stations(),
      canTransmit: true, now: Self.t0 + 10_000)
    let rejected = answer.hasPrefix("rej")
    #expect(result.sendsAnswered.map(\.state) == [rejected ? .rejected : .acked])
    #expect(result.receipts == 1)
    #expect(result.stored == 0 && result.acks.isEmpty)
    #expect(result.storedStations == (rejected ? ["OH7LZB-9"] : []))
    #expect(try state(test) == (rejected ? .rejected : .acked))
    // No message was stored for the answer, and the received message kept its timestamp.
    let messages = try test.database.sync(station: "OH7LZB-9", since: 0, now: Self.t0 + 20_000).messages
    #expect(messages.filter { $0.direction == .received } == [received])
    #expect(messages.filter { $0.direction == .sent }.count == 1)
    for offset: Int64 in [31_000, 62_000, 124_000, 500_000] {
      rig.advance(to: offset)
      try sender.check()
    }
    #expect(rig.written.count == 1)
    #expect(rig.pushes.withLock { $0 }.isEmpty)
  }

  @Test(arguments: [SendAnswer.Kind.rej, .replyAck])
  func aRejOrAReplyAckStopsThemToo(kind: SendAnswer.Kind) throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB-9")
    let rig = Rig()
    let sender = try rig.sender(test.path)
    defer { sender.database.close() }
    try send(test, now: Self.t0)
    try sender.check()
    let answer =
      kind == .rej
      ? "KJ7ABC-7>APDR16,TCPIP*,qAC,T2TEST::OH7LZB-9 :rej1"
      : "KJ7ABC-7>APDR16,TCPIP*,qAC,T2TEST::OH7LZB-9 :Got it{AB}1"
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let result = try writer.process(
      [bytes(answer)], stations: try test.stations(), canTransmit: true, now: Self.t0 + 10_000)
    #expect(result.sendsAnswered.map(\.state) == [kind == .rej ? .rejected : .acked])
    // A rejection queues a sendFailed push and wakes the push sender; the reply is stored as a message.
    #expect(result.storedStations == ["OH7LZB-9"])
    #expect(try test.database.dueOutbox(now: Self.t0 + 20_000).count == 1)
    rig.advance(to: 31_000)
    try sender.check()
    #expect(rig.written.count == 1)
    // Someone else's ack of that number stops nothing.
    if kind == .rej {
      try send(test, "Second", now: Self.t0 + 32_000)
      rig.advance(to: 32_000)
      try sender.check()
      _ = try writer.process(
        [bytes("W1AW>APDR16,TCPIP*,qAC,T2TEST::OH7LZB-9 :ack2")], stations: try test.stations(),
        canTransmit: true,
        now: Self.t0 + 33_000)
      #expect(try state(test) == .pending)
    }
  }

  @Test func expiryAfterTheLastCopyQueuesAPushAndWakesThePushSender() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB-9")
    let rig = Rig()
    let sender = try rig.sender(test.path, schedule: [0, 31], ackWaitMs: 5_000)
    defer { sender.database.close() }
    try send(test, now: Self.t0)
    try sender.check()
    rig.advance(to: 31_000)
    try sender.check()
    rig.advance(to: 35_999)
    try sender.check()
    #expect(try state(test) == .pending)
    rig.advance(to: 36_000)
    try sender.check()
    #expect(try state(test) == .expired)
    #expect(rig.written.count == 2)
    #expect(rig.pushes.withLock { $0 } == ["OH7LZB-9"])
    let push = try #require(try test.database.dueOutbox(now: Self.t0 + 40_000).first)
    #expect(push.message.state == .expired && push.message.direction == .sent)
  }

  /// A listener killed after the first copy: the next one (another sender, another connection) sends nothing
  /// until the second copy is due, then exactly one copy; a long outage collapses the missed copies into one.
  @Test func aRestartResumesTheScheduleWithoutABurst() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB-9")
    let rig = Rig()
    let first = try rig.sender(test.path)
    try send(test, now: Self.t0)
    try first.check()
    first.database.close()
    #expect(rig.written.count == 1)

    rig.advance(to: 5_000)
    let second = try rig.sender(test.path)
    defer { second.database.close() }
    try second.check()
    #expect(rig.written.count == 1, "no copy before the second is due")
    rig.advance(to: 31_000)
    try second.check()
    #expect(rig.written.count == 2)
    // Down from 40 s to 130 s: the copies due at 62 and 124 s become one.
    second.database.close()
    rig.advance(to: 130_000)
    let third = try rig.sender(test.path)
    defer { third.database.close() }
    try third.check()
    try third.check()
    #expect(rig.written.count == 3)
    let row = try #require(try test.database.dueSends(now: Self.t0 + 1_000_000, canTransmit: true).first)
    #expect(row.transmissions == 3 && row.lastSentAt == Self.t0 + 130_000)
    #expect(row.nextAt == nil, "the schedule has no copy left")
    #expect(row.expiresAt == Self.t0 + 190_000)
  }

  @Test func copiesWaitForAVerifiedLoginAndANewSendIsNoticedOnTheNextCheck() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB-9")
    let rig = Rig()
    rig.online.store(false, ordering: .relaxed)
    let sender = try rig.sender(test.path)
    defer { sender.database.close() }
    try sender.check()
    try send(test, now: Self.t0)
    rig.advance(to: 100)
    try sender.check()
    #expect(rig.written.isEmpty)
    rig.online.store(true, ordering: .relaxed)
    rig.advance(to: 200)
    try sender.check()
    #expect(rig.written == [Self.line])
    // A replayed clientId is no new send: nothing more goes out.
    try send(test, "Again", clientId: "c", now: Self.t0 + 300)
    rig.advance(to: 400)
    try sender.check()
    #expect(rig.written.count == 2)
    let replay = try test.database.createSend(
      NewSend(station: "OH7LZB-9", addressee: "KJ7ABC-7", text: "Again", clientId: "c"), limits: SendLimits(),
      now: Self.t0 + 500)
    guard case .replayed = replay else { throw TestError("not a replay: \(replay)") }
    rig.advance(to: 600)
    try sender.check()
    #expect(rig.written.count == 2)
  }

  /// Five sends at once over a budget of 2 lines a minute, the clock stepping a second at a time: no minute
  /// carries more than 2 lines, every send gets its four copies at least 31 s apart (the copies that waited move
  /// the rest of their schedule), the copies that waited are counted, and the sender says when the budget is full
  /// and when it has room again.
  @Test func theBudgetHoldsEveryMinuteAndEverySendStillGetsEveryCopy() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB-9")
    let rig = Rig()
    let sender = try rig.sender(test.path, budget: 2)
    defer { sender.database.close() }
    for number in 1...5 { try send(test, "Message \(number)", now: Self.t0) }
    var offset: Int64 = 0
    while offset < 3_000_000 {
      rig.advance(to: offset)
      try sender.check()
      offset += 1_000
    }
    let stamped = rig.stamped.withLock { $0 }
    #expect(stamped.count == 20, "\(stamped.count) lines")
    for (index, first) in stamped.enumerated() {
      let inWindow = stamped[index...].prefix { $0.at - first.at < 60_000 }.count
      #expect(inWindow <= 2, "\(inWindow) lines in the minute from \(first.at / 1000) s")
    }
    for number in 1...5 {
      let times = stamped.filter { $0.line.contains(":Message \(number){") }.map(\.at)
      #expect(times.count == 4, "message \(number): \(times.map { $0 / 1000 })")
      for (previous, next) in zip(times, times.dropFirst()) {
        #expect(next - previous >= 31_000, "message \(number): \(times.map { $0 / 1000 })")
      }
    }
    // The first two went at once, the rest in the order they were due.
    #expect(stamped.prefix(2).allSatisfy { $0.at == 0 })
    #expect(stamped[2].line.contains(":Message 3{") && stamped[2].at == 60_000)
    let status = try test.database.sendStatus()
    #expect(status.transmissions == 20 && status.budgetDelayed > 0 && status[.expired] == 5)
    let states = rig.budgetStates.withLock { $0 }
    #expect(states.first == true && states.last == false && !sender.budgetFull)
  }

  /// A send whose copy waits for the budget, cancelled: it never goes out; the other one goes when there is room.
  @Test func aCancelledSendThatWaitsForTheBudgetIsNeverTransmitted() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB-9")
    let rig = Rig()
    let sender = try rig.sender(test.path, schedule: [0, 31], budget: 1)
    defer { sender.database.close() }
    try send(test, "First", clientId: "a", now: Self.t0)
    try send(test, "Second", clientId: "b", now: Self.t0)
    try sender.check()
    #expect(rig.written.count == 1 && sender.budgetFull)
    guard
      case .cancelled = try test.database.cancelSend(station: "OH7LZB-9", clientId: "b", now: Self.t0 + 1_000)
    else { throw TestError("not cancelled") }
    // 1 s: nothing waits (the cancelled send is not read any more); 31 s: the first send's second copy waits
    // for the budget, which has room again at 60 s.
    for offset: Int64 in [1_000, 31_000, 60_000, 61_000, 91_000, 110_000] {
      rig.advance(to: offset)
      try sender.check()
    }
    #expect(rig.written.count == 2, "\(rig.written)")
    #expect(rig.written.allSatisfy { $0.contains(":First{") })
    #expect(!sender.budgetFull && rig.budgetStates.withLock { $0 } == [true, false, true, false])
    #expect(rig.pushes.withLock { $0 }.isEmpty, "a cancel pushes nothing")
    #expect(try test.database.sendStatus()[.cancelled] == 1)
  }

  /// A listener that starts counts the copies its predecessor recorded in the last minute: a restart opens no
  /// fresh budget.
  @Test func aRestartKeepsTheLastMinutesCopiesInTheBudget() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB-9")
    let rig = Rig()
    let first = try rig.sender(test.path, budget: 2)
    try send(test, "one", now: Self.t0)
    try send(test, "two", now: Self.t0)
    try first.check()
    first.database.close()
    #expect(rig.written.count == 2)
    rig.advance(to: 10_000)
    let second = try rig.sender(test.path, budget: 2)
    defer { second.database.close() }
    try send(test, "three", now: Self.t0 + 10_000)
    try second.check()
    #expect(rig.written.count == 2 && second.budgetFull, "the two copies of the last minute still count")
    // A minute after them there is room for two: the copy due first (three, due at 10 s) goes first, then one's
    // second copy (due at 31 s).
    rig.advance(to: 60_000)
    try second.check()
    #expect(rig.written.count == 4, "\(rig.written)")
    #expect(rig.written.dropFirst(2).first?.contains(":three{") == true, "\(rig.written)")
  }
}
