import APRS
import Testing

@testable import Listener

/// ``FallbackAckSchedule``: issue 39's cases as pure sequences of inputs with their `now`, no clock, no sleep.
@Suite struct FallbackAckScheduleTests {
  static let t0: Int64 = 1_800_000_000_000
  static let station = "N0CALL-7"
  static let sender = "OH7AA-1"

  /// The ACK a copy of message `msgno` (echo `seqId`) earns today.
  static func ack(_ msgno: String = "12", seqId: String? = nil, key: String? = nil) -> PlannedAck {
    let message = AddressedPacket(
      source: sender, addressee: station, text: "hi", msgno: msgno, kind: .message)
    var echoed = message
    if let seqId {
      echoed.replyAck = String(seqId.split(separator: "}", omittingEmptySubsequences: false).last!)
    }
    return PlannedAck(key: key ?? "key-\(msgno)", line: OutgoingLine.ack(for: echoed)!)
  }

  static func key(_ msgno: String = "12", station: String = station, sender: String = sender)
    -> FallbackAckKey
  {
    FallbackAckKey(station: station, sender: sender, msgno: msgno)
  }

  /// Stores message `msgno` at `at` (seconds after t0).
  static func store(
    _ schedule: inout FallbackAckSchedule, _ msgno: String = "12", at seconds: Double, wait: Int = 20,
    station: String = station, sender: String = sender, ack: PlannedAck? = nil
  ) -> [FallbackAckDecision] {
    schedule.messageStored(
      station: station, sender: sender, msgno: msgno, ack: ack ?? Self.ack(msgno), now: ms(seconds),
      wait: FallbackWait(seconds: wait)!)
  }

  static func ms(_ seconds: Double) -> Int64 { t0 + Int64(seconds * 1000) }

  /// Ticks every 100 ms from `from` to `to` (seconds), collecting what each tick decides with its time.
  static func run(_ schedule: inout FallbackAckSchedule, from: Double, to: Double) -> [(
    Int64, FallbackAckDecision
  )] {
    var result: [(Int64, FallbackAckDecision)] = []
    var now = ms(from)
    while now <= ms(to) {
      for decision in schedule.tick(now: now) { result.append((now, decision)) }
      now += 100
    }
    return result
  }

  @Test("the station's own ack 3 s after the message: answeredByAir at once, never a sendAck")
  func radioAcks() {
    var schedule = FallbackAckSchedule()
    #expect(Self.store(&schedule, at: 0).isEmpty)
    #expect(schedule.nextDeadline == Self.ms(20))
    #expect(Self.run(&schedule, from: 0, to: 2.9).isEmpty)
    let heard = schedule.heard(
      from: "n0call-7", to: "OH7AA-1  ", msgno: "12", rejected: false, now: Self.ms(3))
    #expect(heard == [.answeredByAir(Self.key(), rejected: false)])
    #expect(schedule.nextDeadline == nil && schedule.heldCount == 0)
    #expect(Self.run(&schedule, from: 3, to: 120).isEmpty)
  }

  @Test("no radio answer: exactly one sendAck, at stored + 20 s and not before")
  func noRadioAck() {
    var schedule = FallbackAckSchedule()
    #expect(Self.store(&schedule, at: 0).isEmpty)
    #expect(Self.run(&schedule, from: 0, to: 19.9).isEmpty)
    #expect(schedule.tick(now: Self.ms(20) - 1).isEmpty)
    let decided = Self.run(&schedule, from: 20, to: 300)
    #expect(decided.count == 1)
    #expect(decided.first?.0 == Self.ms(20))
    #expect(decided.first?.1 == .sendAck(Self.key(), ack: Self.ack()))
    #expect(schedule.nextDeadline == nil)
  }

  @Test("a late tick loses nothing: the ACK comes at the first input after the wait")
  func lateTick() {
    var schedule = FallbackAckSchedule()
    _ = Self.store(&schedule, at: 0)
    #expect(schedule.tick(now: Self.ms(45)) == [.sendAck(Self.key(), ack: Self.ack())])
    var other = FallbackAckSchedule()
    _ = Self.store(&other, at: 0)
    // Another message's input after the wait settles the first one too.
    #expect(Self.store(&other, "13", at: 25) == [.sendAck(Self.key(), ack: Self.ack())])
    #expect(other.isHeld(Self.key("13")))
  }

  @Test("a retransmission after the fallback ACK is ACKed once, at once, as today")
  func retransmissionAfterAck() {
    var schedule = FallbackAckSchedule()
    _ = Self.store(&schedule, at: 0)
    #expect(schedule.tick(now: Self.ms(20)).count == 1)
    // The sender retries 30 s after its first copy: one ACK, now (the caller's 30 s rule, ackDue, still applies).
    #expect(Self.store(&schedule, at: 30) == [.sendAck(Self.key(), ack: Self.ack())])
    #expect(Self.run(&schedule, from: 30, to: 200).isEmpty)
    #expect(Self.store(&schedule, at: 90) == [.sendAck(Self.key(), ack: Self.ack())])
    // An answer heard after the server's ACK (maybe that ACK itself, heard back) changes nothing.
    #expect(
      schedule.heard(from: Self.station, to: Self.sender, msgno: "12", rejected: false, now: Self.ms(95))
        .isEmpty)
    #expect(Self.store(&schedule, at: 150) == [.sendAck(Self.key(), ack: Self.ack())])
  }

  @Test("copies within the wait join the held one: one ACK, with the newest echo, the end never moved")
  func copiesWithinWait() {
    var schedule = FallbackAckSchedule()
    #expect(Self.store(&schedule, "12", at: 0, ack: Self.ack("12", seqId: "12}AA")).isEmpty)
    #expect(Self.store(&schedule, "12", at: 15, ack: Self.ack("12", seqId: "12}AB")).isEmpty)
    #expect(schedule.nextDeadline == Self.ms(20))
    let decided = Self.run(&schedule, from: 15, to: 100)
    #expect(decided.count == 1 && decided.first?.0 == Self.ms(20))
    #expect(decided.first?.1 == .sendAck(Self.key(), ack: Self.ack("12", seqId: "12}AB")))
    let line = String(decoding: Self.ack("12", seqId: "12}AB").line, as: UTF8.self)
    #expect(line.hasSuffix(":ack12}AB\r\n"))
  }

  @Test("a copy that arrives as its wait ends earns the one ACK, not two")
  func copyAtDeadline() {
    var schedule = FallbackAckSchedule()
    _ = Self.store(&schedule, at: 0)
    let decided = Self.store(&schedule, at: 20, ack: Self.ack("12", seqId: "12}ZZ"))
    #expect(decided == [.sendAck(Self.key(), ack: Self.ack("12", seqId: "12}ZZ"))])
    #expect(schedule.tick(now: Self.ms(21)).isEmpty)
  }

  @Test("the answer at the wait's very end is too late: the ACK went first")
  func answerAtDeadline() {
    var schedule = FallbackAckSchedule()
    _ = Self.store(&schedule, at: 0)
    let decided = schedule.heard(
      from: Self.station, to: Self.sender, msgno: "12", rejected: false, now: Self.ms(20))
    #expect(decided == [.sendAck(Self.key(), ack: Self.ack())])
    var early = FallbackAckSchedule()
    _ = Self.store(&early, at: 0)
    #expect(
      early.heard(from: Self.station, to: Self.sender, msgno: "12", rejected: false, now: Self.ms(20) - 1)
        == [.answeredByAir(Self.key(), rejected: false)])
  }

  @Test("the radio's rej counts as answered")
  func rejAnswers() {
    var schedule = FallbackAckSchedule()
    _ = Self.store(&schedule, at: 0)
    #expect(
      schedule.heard(from: Self.station, to: Self.sender, msgno: "12", rejected: true, now: Self.ms(5))
        == [.answeredByAir(Self.key(), rejected: true)])
    #expect(Self.run(&schedule, from: 5, to: 60).isEmpty)
  }

  @Test("after the air answered, later copies earn nothing from the server")
  func copiesAfterAirAnswer() {
    var schedule = FallbackAckSchedule()
    _ = Self.store(&schedule, at: 0)
    _ = schedule.heard(from: Self.station, to: Self.sender, msgno: "12", rejected: false, now: Self.ms(3))
    #expect(Self.store(&schedule, at: 30).isEmpty)
    #expect(Self.store(&schedule, at: 90).isEmpty)
    #expect(!schedule.isHeld(Self.key()))
    #expect(Self.run(&schedule, from: 90, to: 400).isEmpty)
  }

  @Test("an answer heard before the message is stored: answeredByAir when it is, with no wait, once")
  func answerBeforeStore() {
    var schedule = FallbackAckSchedule()
    #expect(
      schedule.heard(from: Self.station, to: Self.sender, msgno: "12", rejected: false, now: Self.ms(0))
        .isEmpty)
    #expect(Self.store(&schedule, at: 1) == [.answeredByAir(Self.key(), rejected: false)])
    #expect(schedule.nextDeadline == nil)
    #expect(Self.store(&schedule, at: 40).isEmpty)
  }

  @Test("matching: number exact (case kept), station and sender by call and SSID in any case, spaces trimmed")
  func matching() {
    var schedule = FallbackAckSchedule()
    _ = Self.store(&schedule, "Ab1", at: 0, station: "N0CALL-7", sender: "OH7AA-1")
    func hear(_ from: String, _ to: String, _ msgno: String) -> [FallbackAckDecision] {
      schedule.heard(from: from, to: to, msgno: msgno, rejected: false, now: Self.ms(2))
    }
    #expect(hear("N0CALL-7", "OH7AA-1", "AB1").isEmpty)  // another number
    #expect(hear("N0CALL-7", "OH7AA-1", "Ab").isEmpty)
    #expect(hear("N0CALL", "OH7AA-1", "Ab1").isEmpty)  // another SSID of the call
    #expect(hear("N0CALL-7", "OH7AA", "Ab1").isEmpty)  // another sender
    #expect(hear("N0CALL-7", "OH7AA-10", "Ab1").isEmpty)
    #expect(schedule.isHeld(FallbackAckKey(station: "N0CALL-7", sender: "OH7AA-1", msgno: "Ab1")))
    #expect(
      hear(" n0call-7 ", "oh7aa-1  ", "Ab1")
        == [
          .answeredByAir(
            FallbackAckKey(station: "N0CALL-7", sender: "OH7AA-1", msgno: "Ab1"), rejected: false)
        ])
    // `CALL-0` is the bare call.
    _ = Self.store(&schedule, "5", at: 3, station: "N0CALL", sender: "DL1ABC")
    #expect(hear("N0CALL-0", "DL1ABC-0", "5").count == 1)
  }

  @Test("messages of several stations and senders are decided apart, in order of their ends")
  func severalMessages() {
    var schedule = FallbackAckSchedule()
    _ = Self.store(&schedule, "1", at: 0, wait: 30)
    _ = Self.store(&schedule, "2", at: 1, wait: 10)
    _ = Self.store(&schedule, "1", at: 2, wait: 20, station: "W1AW", sender: Self.sender)
    #expect(schedule.nextDeadline == Self.ms(11))
    let all = schedule.tick(now: Self.ms(40))
    #expect(all.map(\.key) == [Self.key("2"), Self.key("1", station: "W1AW"), Self.key("1")])
  }

  @Test("fallbackWait: 1…60 s as a setting (0, negative, 61 refused); clamped into it for older values")
  func waitBounds() {
    #expect(FallbackWait.default.seconds == 20)
    #expect(
      FallbackWait(seconds: 0) == nil && FallbackWait(seconds: -5) == nil && FallbackWait(seconds: 61) == nil)
    #expect(FallbackWait(seconds: 1)?.seconds == 1 && FallbackWait(seconds: 60)?.seconds == 60)
    #expect(FallbackWait(clamping: 0).seconds == 1 && FallbackWait(clamping: -7).seconds == 1)
    #expect(FallbackWait(clamping: 600).seconds == 60 && FallbackWait(clamping: 20) == .default)
    #expect(FallbackWait(clamping: 45).milliseconds == 45_000)
    var schedule = FallbackAckSchedule()
    _ = schedule.messageStored(
      station: Self.station, sender: Self.sender, msgno: "9", ack: Self.ack("9"), now: Self.ms(0),
      wait: FallbackWait(clamping: 900))
    #expect(schedule.nextDeadline == Self.ms(60))
    #expect(schedule.tick(now: Self.ms(60) - 1).isEmpty && schedule.tick(now: Self.ms(60)).count == 1)
  }

  @Test("held cap: holding one more decides the oldest held early, as an ACK (never a missing one)")
  func heldCap() {
    var schedule = FallbackAckSchedule(limits: .init(maximumHeld: 3, maximumDecided: 100))
    for index in 0..<3 { #expect(Self.store(&schedule, "\(index)", at: Double(index)).isEmpty) }
    #expect(Self.store(&schedule, "3", at: 3) == [.sendAck(Self.key("0"), ack: Self.ack("0"))])
    #expect(schedule.heldCount == 3 && schedule.evictedHeld == 1)
    // The early ACK is a decision like any: a later copy is ACKed at once.
    #expect(Self.store(&schedule, "0", at: 4) == [.sendAck(Self.key("0"), ack: Self.ack("0"))])
    #expect(schedule.tick(now: Self.ms(100)).map(\.key) == ["1", "2", "3"].map { Self.key($0) })
  }

  @Test("decision cap and memory: the least recently touched dropped first, old ones age out")
  func decisionCap() {
    var schedule = FallbackAckSchedule(limits: .init(maximumHeld: 100, maximumDecided: 3, memoryMs: 600_000))
    for index in 0..<3 {
      _ = schedule.heard(
        from: Self.station, to: Self.sender, msgno: "\(index)", rejected: false, now: Self.ms(0))
    }
    // A copy touches "0": it becomes the most recent.
    #expect(Self.store(&schedule, "0", at: 1) == [.answeredByAir(Self.key("0"), rejected: false)])
    _ = schedule.heard(from: Self.station, to: Self.sender, msgno: "3", rejected: false, now: Self.ms(2))
    #expect(schedule.decidedCount == 3 && schedule.forgottenDecisions == 1)
    // "1" was dropped: its message is new to the schedule, and held.
    #expect(Self.store(&schedule, "1", at: 3).isEmpty && schedule.isHeld(Self.key("1")))
    #expect(Self.store(&schedule, "2", at: 3) == [.answeredByAir(Self.key("2"), rejected: false)])
    // Ten minutes after the last touch, everything is forgotten.
    _ = schedule.tick(now: Self.ms(3) + 600_000)
    #expect(schedule.decidedCount == 1)  // "1", ACKed by this very tick (its wait ended at 23 s)
    _ = schedule.tick(now: Self.ms(3) + 1_200_000)
    #expect(schedule.decidedCount == 0 && schedule.heldCount == 0)
  }

  @Test("memory stays bounded under a flood of answers and copies")
  func boundedFlood() {
    var schedule = FallbackAckSchedule(limits: .init(maximumHeld: 50, maximumDecided: 200))
    for index in 0..<20_000 {
      let now = Self.ms(Double(index) / 10)
      let msgno = String(index % 5000, radix: 36)
      if index % 3 == 0 {
        _ = schedule.heard(from: Self.station, to: "S\(index % 7)", msgno: msgno, rejected: false, now: now)
      } else {
        _ = schedule.messageStored(
          station: Self.station, sender: "S\(index % 7)", msgno: msgno, ack: Self.ack(msgno), now: now)
      }
      #expect(schedule.heldCount <= 50 && schedule.decidedCount <= 200)
    }
    // The same decision touched over and over keeps the eviction order small too.
    var repeated = FallbackAckSchedule(limits: .init(maximumHeld: 10, maximumDecided: 10))
    _ = repeated.heard(from: Self.station, to: "OLD", msgno: "1", rejected: false, now: Self.ms(0))
    for index in 0..<50_000 {
      _ = repeated.heard(
        from: Self.station, to: Self.sender, msgno: "1", rejected: false, now: Self.ms(Double(index) / 100))
    }
    #expect(repeated.decidedCount == 2 && repeated.orderLength < 2_000)
  }
}

/// The pure pieces together on real lines: the message classified as the router does, its ACK as today's
/// (``OutgoingLine/ack(for:toCall:)``), the station's own line recognised by ``StationAnswer``.
@Suite struct FallbackAckLinesTests {
  static func packet(_ line: String) -> TNC2Packet {
    guard case .success(.packet(let packet)) = TNC2Packet.parse(Array(line.utf8)) else {
      preconditionFailure("not a packet: \(line)")
    }
    return packet
  }

  /// What the caller would do with a message line: the number alone, the ACK with the full echo.
  static func stored(
    _ schedule: inout FallbackAckSchedule, _ line: String, now: Int64
  ) -> [FallbackAckDecision] {
    let message = AddressedPacket.classify(packet(line)).addressed!
    let ack = PlannedAck(key: DedupKey(message).digest, line: OutgoingLine.ack(for: message)!)
    return schedule.messageStored(
      station: message.addressee, sender: message.sender, msgno: message.msgno!, ack: ack, now: now)
  }

  @Test("a reply-ack message, the station's radio answering with its own reply-ack: no ACK from the server")
  func replyAckAnswer() {
    var schedule = FallbackAckSchedule()
    let t0: Int64 = 1_800_000_000_000
    #expect(Self.stored(&schedule, "OH7AA-1>APRS,qAR,DIGI::n0call-7 :dinner?{AB}", now: t0).isEmpty)
    let own = StationAnswer(Self.packet("N0CALL-7>APDR16,WIDE1-1,qAR,IGATE::OH7AA-1  :on my way{07}AB"))!
    #expect(
      schedule.heard(own, now: t0 + 3000)
        == [
          .answeredByAir(FallbackAckKey(station: "N0CALL-7", sender: "OH7AA-1", msgno: "AB"), rejected: false)
        ])
    #expect(schedule.tick(now: t0 + 60_000).isEmpty)
  }

  @Test("no answer: the one ACK is today's line for the newest copy (source the addressee as named)")
  func fallbackLine() {
    var schedule = FallbackAckSchedule()
    let t0: Int64 = 1_800_000_000_000
    _ = Self.stored(&schedule, "OH7AA-1>APRS,qAR,DIGI::n0call-7 :dinner?{AB}CD", now: t0)
    _ = Self.stored(&schedule, "OH7AA-1>APRS,qAR,DIGI::n0call-7 :dinner?{AB}CE", now: t0 + 10_000)
    // Another station's ack, and the station's ack to another sender, answer nothing here.
    _ = schedule.heard(StationAnswer(Self.packet("N0CALL-8>APRS::OH7AA-1  :ackAB"))!, now: t0 + 11_000)
    _ = schedule.heard(StationAnswer(Self.packet("N0CALL-7>APRS::OH7AA-2  :ackAB"))!, now: t0 + 12_000)
    let decided = schedule.tick(now: t0 + 20_000)
    guard case .sendAck(let key, let ack) = decided.first, decided.count == 1 else {
      Issue.record("expected one sendAck, got \(decided)")
      return
    }
    #expect(key == FallbackAckKey(station: "N0CALL-7", sender: "OH7AA-1", msgno: "AB"))
    #expect(String(decoding: ack.line, as: UTF8.self) == "n0call-7>APZACL,TCPIP*::OH7AA-1  :ackAB}CE\r\n")
  }
}
