import Testing

@testable import APRS

/// HTCommander's authenticated ACK (`ack<msgno>}<TOKEN>`), and what the rule must leave as it was.
@Suite struct AuthenticatedAckTests {
  @Test(
    "ack or rej, a number, } and 1–8 base64 characters answer that number",
    arguments: [
      ("ack556}eL8OYs", PacketKind.ack, "556", "eL8OYs"), ("rej556}eL8OYs", .rej, "556", "eL8OYs"),
      ("ack1}a+/b=9Z", .ack, "1", "a+/b=9Z"), ("ack12345}ABCDEFGH", .ack, "12345", "ABCDEFGH"),
      ("ackAB}+", .ack, "AB", "+"), ("ack7}/==", .ack, "7", "/=="),
      ("ack556}eL8OYs  ", .ack, "556", "eL8OYs"),
      ("ack556}eL8OYs\r", .ack, "556", "eL8OYs"), ("ack9}abcdef", .ack, "9", "abcdef"),
      // An ACK that also carries a number of its own is still an ACK.
      ("ack556}eL8OYs{77", .ack, "556", "eL8OYs"),
    ] as [(String, PacketKind, String, String)])
  func authenticated(text: String, kind: PacketKind, acked: String, token: String) throws {
    let ack = try #require(addressed("KJ7ABC-7>APRS,TCPIP*::N0CALL-5 :" + text))
    #expect(ack.kind == kind)
    #expect(ack.ackedMsgno == acked)
    #expect(ack.ackToken == token)
    #expect(ack.replyAck == nil)
    #expect(ack.msgno == nil)
    #expect(ack.addressee == "N0CALL-5" && ack.source == "KJ7ABC-7")
    // Never ACKed, never REJed.
    #expect(OutgoingLine.ack(for: ack) == nil && OutgoingLine.rej(for: ack) == nil)
  }

  @Test("a third-party wrapped authenticated ACK is an ACK from the inner sender")
  func thirdParty() throws {
    let ack = try #require(addressed("IGATE>APRS,TCPIP*:}KJ7ABC-7>APRS,TCPIP,IGATE*::N0CALL-5 :ack42}Zm9v+/"))
    #expect(
      ack.kind == .ack && ack.ackedMsgno == "42" && ack.ackToken == "Zm9v+/" && ack.source == "KJ7ABC-7")
  }

  @Test(
    "what fits the reply-ack form stays a reply-ack ACK",
    arguments: [
      ("ack12}34", "12", "34"), ("ackAB}CD", "AB", "CD"), ("ack1}", "1", ""), ("rejX}", "X", ""),
      ("ack12}abcde", "12", "abcde"),
    ] as [(String, String, String)])
  func replyAcks(text: String, acked: String, replyAck: String) throws {
    let ack = try #require(addressed("KJ7ABC-7>APRS::N0CALL   :" + text))
    #expect(ack.kind == (text.hasPrefix("rej") ? .rej : .ack))
    #expect(ack.ackedMsgno == acked)
    #expect(ack.replyAck == replyAck)
    #expect(ack.ackToken == nil)
  }

  @Test(
    "texts that only look like authenticated ACKs are messages",
    arguments: [
      "acknowledged", "acknowledged}eL8OYs", "ack12}ABCDEFGHI", "ack12}eL8-Ys", "ack12}eL8 OYs", "ack}eL8OYs",
      "ack123456}abcdef", "ACK12}eL8OYs", "Ack12}eL8OYs", "ack12}}eL8OY", "ack 12}eL8OYs", "ack12}eL8OYs}",
      "ack12}eL8.Ys",
    ])
  func lookalikes(text: String) throws {
    let message = try #require(addressed("KJ7ABC-7>APRS::N0CALL   :" + text + "{5"))
    #expect(message.kind == .message)
    #expect(message.text == text)
    #expect(message.msgno == "5" && message.ackToken == nil)
    #expect(OutgoingLine.ack(for: message) != nil)
  }

  @Test("a message ending }TOKEN{msgno keeps the token in its text and is ACKed with its number")
  func tokenMessage() throws {
    let message = try #require(addressed("KJ7ABC-7>APRS,TCPIP*::N0CALL   :Hello there}eL8OYs{556"))
    #expect(message.kind == .message)
    #expect(message.text == "Hello there}eL8OYs")
    #expect(message.msgno == "556" && message.replyAck == nil && message.seqId == "556")
    let ack = try #require(OutgoingLine.ack(for: message))
    #expect(String(decoding: ack, as: UTF8.self) == "N0CALL>APZACL,TCPIP*::KJ7ABC-7 :ack556\r\n")
  }

  @Test("a sent text that would read back as an authenticated ACK is refused")
  func sendText() throws {
    let problem = try #require(OutgoingMessage.textProblem("ack556}eL8OYs"))
    #expect(problem.contains("ack"), "\(problem)")
    #expect(OutgoingMessage.textProblem("acknowledged}eL8OYs") == nil)
  }
}
