import APRS
import Testing

@testable import Listener
@testable import Store

/// `ackPolicy:"fallback"` in the writer (docs/design.md "Hearing the station's own radio"): the ACK held for the
/// station's radio, its answer heard, one ACK when it stays silent, and the push as `airAnswered` says.
@Suite struct FallbackWriterTests {
  static let message = "OH7AA-1>APRS,WIDE1-1,qAo,OH7AA::OH7LZB   :Testing, 1 2 3{42"
  static let radioAck = "OH7LZB>APK005,WIDE1-1,qAR,OH2XYZ::OH7AA-1  :ack42"
  static let radioRej = "OH7LZB>APK005,WIDE1-1,qAR,OH2XYZ::OH7AA-1  :rej42"
  static let ourAck = "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack42\r\n"
  static let t0: Int64 = 1_800_000_000_000

  /// A database with OH7LZB under `fallback` (a 5 s wait) and the stations as the listener sees them, the
  /// station followed by the filter unless `followed` is false.
  struct Setup {
    let test: TestDatabase
    let writer: MessageWriter
    let stations: LiveStationSet

    init(airAnswered: AirAnswered = .quiet, followed: Bool = true) throws {
      test = try TestDatabase()
      try test.register("OH7LZB", ackMessages: true)
      try test.database.updateStationSettings(
        "OH7LZB",
        StationSettingsUpdate(
          ackPolicy: .fallback, fallbackWait: FallbackWait(seconds: 5), airAnswered: airAnswered),
        now: 1_500)
      var stations = try test.stations()
      var own = OwnTransmissions(try test.database.stationsFollowingOwnTransmissions(heardSince: 0))
      if followed { own.planned(OwnTransmissionPlan(followed: ["OH7LZB"], fellBack: [])) }
      stations.own = own
      self.stations = stations
      writer = MessageWriter(database: test.database, router: LineRouter())
    }

    func process(_ line: String, at now: Int64, canTransmit: Bool = true) throws -> BatchResult {
      try writer.process([bytes(line)], stations: stations, canTransmit: canTransmit, now: now)
    }

    func settle(at now: Int64, canTransmit: Bool = true) throws -> BatchResult {
      try writer.settleFallbackAcks(now: now, stampedAt: now, canTransmit: canTransmit)
    }

    func answeredBy() throws -> AnsweredBy? {
      try test.database.sync(station: "OH7LZB", since: 0, now: t0 + 100_000).messages.first?.answeredBy
    }
  }

  @Test func theRadiosAckWithinTheWaitMeansNoAckFromTheServerEver() throws {
    let setup = try Setup()
    defer { setup.test.remove() }
    let stored = try setup.process(Self.message, at: Self.t0)
    #expect(stored.stored == 1 && stored.acks.isEmpty)
    #expect(setup.writer.fallback?.nextDeadline == Self.t0 + 5_000)
    // The push waits for the decision (airAnswered quiet).
    #expect(try setup.test.database.dueOutbox(now: Self.t0 + 1_000).isEmpty)
    let heard = try setup.process(Self.radioAck, at: Self.t0 + 3_000)
    #expect(heard.acks.isEmpty && heard.airAnswered == 1 && heard.fallbackAcks == 0)
    #expect(heard.skipped.isEmpty)
    #expect(heard.storedStations == ["OH7LZB"])  // the push sender is woken: the held push is due now
    #expect(try setup.test.database.dueOutbox(now: Self.t0 + 3_000).count == 1)
    #expect(try setup.answeredBy() == .air)
    #expect(setup.writer.fallback?.nextDeadline == nil)
    #expect(try setup.settle(at: Self.t0 + 10_000).acks.isEmpty)
    // A later copy: the sender missed the radio's ACK; the radio answers it again, the server never does.
    let copy = try setup.process(Self.message, at: Self.t0 + 40_000)
    #expect(copy.duplicates == 1 && copy.acks.isEmpty)
  }

  @Test func withoutTheRadioExactlyOneAckAtTheEndOfTheWaitThenEveryCopyAsToday() throws {
    let setup = try Setup()
    defer { setup.test.remove() }
    #expect(try setup.process(Self.message, at: Self.t0).acks.isEmpty)
    // A copy within the wait joins it and does not move its end.
    #expect(try setup.process(Self.message, at: Self.t0 + 2_000).acks.isEmpty)
    #expect(try setup.settle(at: Self.t0 + 4_999).acks.isEmpty)
    let due = try setup.settle(at: Self.t0 + 5_000)
    #expect(due.acks.map(text) == [Self.ourAck])
    #expect(due.fallbackAcks == 1 && due.airAnswered == 0)
    #expect(due.storedStations == ["OH7LZB"])
    #expect(try setup.test.database.dueOutbox(now: Self.t0 + 5_000).count == 1)
    #expect(try setup.answeredBy() == nil)
    #expect(try setup.settle(at: Self.t0 + 6_000).acks.isEmpty)  // once
    // The radio heard late changes nothing (it may be our own ACK heard back).
    #expect(try setup.process(Self.radioAck, at: Self.t0 + 7_000).acks.isEmpty)
    #expect(try setup.answeredBy() == nil)
    // A retransmission after the server's ACK is ACKed at once, under the 30 s rule.
    #expect(try setup.process(Self.message, at: Self.t0 + 20_000).acksSuppressed == 1)
    #expect(try setup.process(Self.message, at: Self.t0 + 36_000).acks.map(text) == [Self.ourAck])
  }

  @Test func theRadiosRejCountsAsAnswered() throws {
    let setup = try Setup()
    defer { setup.test.remove() }
    _ = try setup.process(Self.message, at: Self.t0)
    let heard = try setup.process(Self.radioRej, at: Self.t0 + 1_000)
    #expect(heard.airAnswered == 1 && heard.acks.isEmpty)
    #expect(try setup.settle(at: Self.t0 + 10_000).acks.isEmpty)
    #expect(try setup.answeredBy() == .air)
  }

  @Test func anAnswerHeardBeforeTheMessageIsStoredAnswersItAtOnce() throws {
    let setup = try Setup()
    defer { setup.test.remove() }
    let both = try setup.writer.process(
      [bytes(Self.radioAck), bytes(Self.message)], stations: setup.stations, canTransmit: true, now: Self.t0)
    #expect(both.acks.isEmpty && both.airAnswered == 1)
    #expect(setup.writer.fallback?.nextDeadline == nil)
    #expect(try setup.answeredBy() == .air)
  }

  @Test func airAnsweredNoneDropsThePushAndPushSendsItAtOnce() throws {
    let none = try Setup(airAnswered: .none)
    defer { none.test.remove() }
    _ = try none.process(Self.message, at: Self.t0)
    let heard = try none.process(Self.radioAck, at: Self.t0 + 1_000)
    #expect(heard.airAnswered == 1 && heard.storedStations.isEmpty)
    #expect(try none.test.database.dueOutbox(now: Self.t0 + 1_000_000).isEmpty)
    #expect(try none.answeredBy() == .air)

    let push = try Setup(airAnswered: .push)
    defer { push.test.remove() }
    _ = try push.process(Self.message, at: Self.t0)
    #expect(try push.test.database.dueOutbox(now: Self.t0).count == 1)  // not held
    #expect(try push.process(Self.radioAck, at: Self.t0 + 1_000).acks.isEmpty)
  }

  @Test func aStationTheFilterDoesNotFollowIsAckedAsUnderServer() throws {
    let setup = try Setup(followed: false)
    defer { setup.test.remove() }
    let stored = try setup.process(Self.message, at: Self.t0)
    #expect(stored.acks.map(text) == [Self.ourAck])
    #expect(setup.writer.fallback?.nextDeadline == nil)
    #expect(try setup.test.database.dueOutbox(now: Self.t0).count == 1)
    // Its radio's lines are not even looked at.
    let heard = try setup.process(Self.radioAck, at: Self.t0 + 1_000)
    #expect(heard.airAnswered == 0 && heard.skipped[.notForUs] == 1)
  }

  @Test func ourOwnTransmittedAckIsNeverTheRadiosAnswer() throws {
    let setup = try Setup()
    defer { setup.test.remove() }
    _ = try setup.process(Self.message, at: Self.t0)
    let echo = try setup.writer.process(
      [QueuedLine(bytes(Self.radioAck), origin: .transmitted)], stations: setup.stations, canTransmit: true,
      now: Self.t0 + 1_000)
    #expect(echo.airAnswered == 0)
    #expect(try setup.settle(at: Self.t0 + 5_000).acks.map(text) == [Self.ourAck])
  }

  @Test func noConnectionAtTheEndOfTheWaitSendsNothingButDecides() throws {
    let setup = try Setup()
    defer { setup.test.remove() }
    _ = try setup.process(Self.message, at: Self.t0, canTransmit: false)
    let due = try setup.settle(at: Self.t0 + 5_000, canTransmit: false)
    #expect(due.acks.isEmpty && due.fallbackAcks == 1)
    #expect(try setup.test.database.dueOutbox(now: Self.t0 + 5_000).count == 1)
  }

  @Test func afterARestartACopyIsAckedAtOnceUnlessTheRadioHadAnswered() throws {
    let setup = try Setup()
    defer { setup.test.remove() }
    _ = try setup.process(Self.message, at: Self.t0)
    // The listener restarts within the wait: a new writer, a schedule that knows nothing.
    let restarted = MessageWriter(database: setup.test.database, router: LineRouter())
    #expect(restarted.fallback?.nextDeadline == nil)
    let copy = try restarted.process(
      [bytes(Self.message)], stations: setup.stations, canTransmit: true, now: Self.t0 + 30_000)
    #expect(copy.duplicates == 1 && copy.acks.map(text) == [Self.ourAck])  // never held again
    #expect(restarted.fallback?.nextDeadline == nil)

    // The radio had answered before the restart: the stored entry says so, and a copy earns nothing.
    let answered = "OH7AA-1>APRS,WIDE1-1,qAo,OH7AA::OH7LZB   :Second{43"
    _ = try setup.process(answered, at: Self.t0)
    _ = try setup.process(
      "OH7LZB>APK005,WIDE1-1,qAR,OH2XYZ::OH7AA-1  :ack43", at: Self.t0 + 1_000)
    let again = MessageWriter(database: setup.test.database, router: LineRouter())
    let late = try again.process(
      [bytes(answered)], stations: setup.stations, canTransmit: true, now: Self.t0 + 40_000)
    #expect(late.duplicates == 1 && late.acks.isEmpty && late.airAnswered == 0)
  }

  @Test func aFailedTransactionPutsTheScheduleBack() throws {
    let fallback = FallbackAcks()
    let ack = PlannedAck(key: "k", line: bytes(Self.ourAck))
    #expect(throws: StoreError.self) {
      try fallback.transact { (schedule) throws(StoreError) in
        _ = schedule.messageStored(
          station: "OH7LZB", sender: "OH7AA-1", msgno: "42", ack: ack, now: Self.t0)
        #expect(schedule.heldCount == 1)
        throw StoreError.busy
      }
    }
    #expect(fallback.schedule.heldCount == 0 && fallback.nextDeadline == nil)
  }
}
