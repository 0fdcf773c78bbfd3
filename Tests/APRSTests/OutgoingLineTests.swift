import Testing

@testable import APRS

@Suite struct OutgoingLineTests {
  @Test("ACK: source is the addressee as named, sender padded to 9, CR LF")
  func ack() throws {
    let message = try #require(
      addressed("OH7AA-1>APRS,WIDE1-1,WIDE2-2,qAo,OH7AA::OH7LZB   :Testing, 1 2 3{42"))
    let line = try #require(OutgoingLine.ack(for: message))
    #expect(String(decoding: line, as: UTF8.self) == "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack42\r\n")
  }

  @Test(
    "the echo rule: everything after '{'",
    arguments: [
      ("hi{MM}AA", "ackMM}AA"), ("hi{MM}", "ackMM}"), ("hi{12345}ABCDE", "ack12345}ABCDE"),
      ("hi{7  ", "ack7"),
    ]
  )
  func echo(text: String, expected: String) throws {
    let message = try #require(addressed("KJ7ABC-7>APDR16,TCPIP*::N0CALL-5 :" + text))
    let line = try #require(OutgoingLine.ack(for: message))
    #expect(String(decoding: line, as: UTF8.self) == "N0CALL-5>APZACL,TCPIP*::KJ7ABC-7 :\(expected)\r\n")
  }

  @Test("ACK source keeps the addressee's case and form as sent; custom tocall")
  func asSent() throws {
    let message = try #require(addressed("W1AW>APRS::n0call:hi{3"))
    let line = try #require(OutgoingLine.ack(for: message, toCall: "APZXYZ"))
    #expect(String(decoding: line, as: UTF8.self) == "n0call>APZXYZ,TCPIP*::W1AW     :ack3\r\n")
  }

  @Test("unnumbered messages, acks, bulletins and messages to self get no ACK")
  func noAck() throws {
    for line in [
      "W1AW>APRS::N0CALL   :hi", "W1AW>APRS::N0CALL   :ack1", "W1AW>APRS::BLN1     :x{1",
      "N0CALL>APRS::N0CALL   :x{1", "W1AW>APRS::N0CALL   :PARM.x{1", "W1AW>APRS::N0CALL   :?APRSP{1",
    ] {
      let message = try #require(addressed(line))
      #expect(OutgoingLine.ack(for: message) == nil, "\(line)")
      #expect(OutgoingLine.rej(for: message) == nil, "\(line)")
    }
  }

  @Test("REJ mirrors ACK")
  func rej() throws {
    let message = try #require(addressed("W1AW>APRS::N0CALL   :hi{AB}CD"))
    let line = try #require(OutgoingLine.rej(for: message))
    #expect(String(decoding: line, as: UTF8.self) == "N0CALL>APZACL,TCPIP*::W1AW     :rejAB}CD\r\n")
    let direct = OutgoingLine.rej(from: "N0CALL", to: "W1AW", echo: "AB}CD")
    #expect(direct == line)
  }

  @Test("an ACK line parses back as an ack from the addressee to the sender")
  func roundTrip() throws {
    let line = OutgoingLine.ack(from: "N0CALL-7", to: "KJ7ABC", echo: "12}34")
    let ack = try #require(addressed(String(decoding: line, as: UTF8.self)))
    #expect(ack.kind == .ack && ack.source == "N0CALL-7" && ack.addressee == "KJ7ABC")
    #expect(ack.ackedMsgno == "12" && ack.replyAck == "34")
    #expect(OutgoingLine.defaultToCall == "APZACL")
  }

  @Test("login line, with and without filter, verified and not")
  func login() {
    let full = OutgoingLine.login(
      user: "N0CALL", passcode: 13023, softwareName: "aprs-cloud", softwareVersion: "0.1", filter: "g/A/B")
    #expect(
      String(decoding: full, as: UTF8.self) == "user N0CALL pass 13023 vers aprs-cloud 0.1 filter g/A/B\r\n")
    let bare = OutgoingLine.login(
      user: "N0CALL", passcode: -1, softwareName: "aprs cloud", softwareVersion: "1.0 beta")
    #expect(String(decoding: bare, as: UTF8.self) == "user N0CALL pass -1 vers aprs-cloud 1.0-beta\r\n")
    let empty = OutgoingLine.login(
      user: "N0CALL", passcode: 1, softwareName: "a", softwareVersion: "b", filter: "")
    #expect(String(decoding: empty, as: UTF8.self) == "user N0CALL pass 1 vers a b\r\n")
  }

  @Test("#filter line")
  func filter() {
    #expect(
      String(decoding: OutgoingLine.filter("g/N0CALL b/W1AW"), as: UTF8.self) == "#filter g/N0CALL b/W1AW\r\n"
    )
  }

  @Test("inputs cannot inject a second line")
  func injection() {
    let login = OutgoingLine.login(
      user: "N0CALL\r\n#filter", passcode: 1, softwareName: "x\n", softwareVersion: "1\r", filter: "g/A\r\n#x"
    )
    #expect(login.filter { $0 == 0x0D || $0 == 0x0A }.count == 2)
    #expect(login.suffix(2) == [0x0D, 0x0A])
    let ack = OutgoingLine.ack(from: "N0CALL\r\n", to: "W1AW\u{00}", echo: "1\n2")
    #expect(String(decoding: ack, as: UTF8.self) == "N0CALL>APZACL,TCPIP*::W1AW     :ack12\r\n")
    #expect(OutgoingLine.filter("g/A\r\nuser x").filter { $0 == 0x0A }.count == 1)
  }
}
