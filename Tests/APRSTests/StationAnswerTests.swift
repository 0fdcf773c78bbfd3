import Testing

@testable import APRS

/// ``StationAnswer``: a station's own ack, rej or reply-ack, recognised in a line it transmitted, from the
/// classification every line gets.
@Suite struct StationAnswerTests {
  static func answer(_ line: String) -> StationAnswer? {
    guard case .success(.packet(let packet)) = TNC2Packet.parse(Array(line.utf8)) else { return nil }
    return StationAnswer(packet)
  }

  @Test("ack and rej through an igate: station, peer (field trimmed, upper case) and the number")
  func ackAndRej() {
    #expect(
      Self.answer("N0CALL-7>APRS,WIDE1-1,qAR,IGATE::OH7AA-1  :ack12")
        == StationAnswer(station: "N0CALL-7", peer: "OH7AA-1", msgno: "12", kind: .ack))
    let rej = Self.answer("N0CALL-7>APRS,qAR,IGATE::OH7AA-1  :rej12")
    #expect(rej == StationAnswer(station: "N0CALL-7", peer: "OH7AA-1", msgno: "12", kind: .rej))
    #expect(rej?.rejected == true)
    // Lower case and unpadded, trailing CR and spaces, `-0` as the bare call.
    #expect(
      Self.answer("n0call-0>APRS,qAR,IGATE::oh7aa:ackAb1  \r")
        == StationAnswer(station: "N0CALL", peer: "OH7AA", msgno: "Ab1", kind: .ack))
    // Five alphanumerics, kept as written.
    #expect(Self.answer("N0CALL-7>APRS::OH7AA-1  :ackZz9Q1")?.msgno == "Zz9Q1")
    // Third party: the inner packet's source.
    #expect(
      Self.answer("IGATE>APRS,WIDE1*:}N0CALL-7>APRS,TCPIP,IGATE*::OH7AA-1  :ack56")
        == StationAnswer(station: "N0CALL-7", peer: "OH7AA-1", msgno: "56", kind: .ack))
  }

  @Test("reply-acks: a message's }AA answers AA; an ack's ackMM}AA answers MM only")
  func replyAcks() {
    #expect(
      Self.answer("N0CALL-7>APRS,qAR,IGATE::OH7AA-1  :see you there{03}12")
        == StationAnswer(station: "N0CALL-7", peer: "OH7AA-1", msgno: "12", kind: .replyAck))
    #expect(Self.answer("N0CALL-7>APRS::OH7AA-1  :see you there{03}") == nil)
    #expect(Self.answer("N0CALL-7>APRS::OH7AA-1  :see you there{03") == nil)
    #expect(
      Self.answer("N0CALL-7>APRS::OH7AA-1  :ack12}34")
        == StationAnswer(station: "N0CALL-7", peer: "OH7AA-1", msgno: "12", kind: .ack))
    // HTCommander's authenticated ACK answers its number.
    #expect(Self.answer("N0CALL-7>APRS::OH7AA-1  :ack556}eL8OYs")?.msgno == "556")
  }

  @Test("everything else answers nothing")
  func nothing() {
    for line in [
      "N0CALL-7>APRS:!6028.51N/02505.68E#position",
      "N0CALL-7>APRS::OH7AA-1  :plain text",
      "N0CALL-7>APRS::OH7AA-1  :numbered{12",
      "N0CALL-7>APRS::OH7AA-1  :acknowledged",
      "N0CALL-7>APRS::BLN1     :bulletin{3}4",
      "N0CALL-7>APRS::N0CALL-7 :ack12",
      "N0CALL-7>APRS::N0CALL-7 :note{1}2",
      "N0CALL-7>APRS::N0CALL-7 :PARM.A,B{1}2",
      "N0CALL-7>APRS::OH7AA-1  :?APRSP{1}2",
    ] {
      #expect(Self.answer(line) == nil, "\(line)")
    }
    #expect(Self.answer("N0CALL-7>APRS::OH7AA-1  :ack12")?.isFrom("n0call-7") == true)
    #expect(Self.answer("N0CALL-7>APRS::OH7AA-1  :ack12")?.isFrom("N0CALL") == false)
  }
}
