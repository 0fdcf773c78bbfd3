import Testing

@testable import APRS

@Suite struct ClassificationTests {
  @Test("the OH7AA example is a numbered message to OH7LZB")
  func example() throws {
    let message = try #require(
      addressed("OH7AA-1>APRS,WIDE1-1,WIDE2-2,qAo,OH7AA::OH7LZB   :Testing, 1 2 3{42"))
    #expect(
      message
        == AddressedPacket(
          source: "OH7AA-1", addressee: "OH7LZB", text: "Testing, 1 2 3", msgno: "42", kind: .message))
    #expect(message.seqId == "42")
    #expect(!message.isToSelf)
  }

  @Test("the third-party example is an ack from C to DEF for 56")
  func thirdPartyAck() throws {
    let ack = try #require(addressed("A-1>APRS,B-2,WIDE1*:}C>APU25N,TCPIP,A-1*::DEF      :ack56"))
    #expect(ack.kind == .ack)
    #expect(ack.source == "C")
    #expect(ack.addressee == "DEF")
    #expect(ack.ackedMsgno == "56")
    #expect(ack.msgno == nil && ack.replyAck == nil)
    #expect(ack.text == "ack56")
  }

  @Test("a third-party message takes sender, addressee, text and msgno from the inner packet")
  func thirdPartyMessage() throws {
    let message = try #require(
      addressed("IGATE>APRS,TCPIP*:}W1AW-9>APDR16,TCPIP,IGATE*::n0call-7 :73 de W1AW{AB}CD"))
    #expect(message.source == "W1AW-9")
    #expect(message.addressee == "N0CALL-7")
    #expect(message.addresseeAsSent == "n0call-7")
    #expect(message.text == "73 de W1AW")
    #expect(message.msgno == "AB" && message.replyAck == "CD")
    #expect(message.kind == .message)
  }

  @Test("nested wrappers are unwrapped to the innermost packet, up to the depth bound")
  func nested() throws {
    let inner = "E-1>APRS::G        :hi{9"
    let two = try #require(addressed("A>B:}C>D,TCPIP:}" + inner))
    #expect(two.source == "E-1" && two.addressee == "G" && two.text == "hi" && two.msgno == "9")

    func wrapped(_ depth: Int) -> String {
      String(repeating: "X>Y:}", count: depth) + inner
    }
    #expect(classified(wrapped(AddressedPacket.maximumThirdPartyDepth))?.kind == .message)
    #expect(classified(wrapped(AddressedPacket.maximumThirdPartyDepth + 1)) == .other)
    // A 490-byte tower of wrappers stays a bounded, harmless `.other`.
    #expect(classified(String(repeating: "X>Y:}", count: 95) + "Z>W::N0CALL   :x") == .other)
  }

  @Test(
    "broken third-party packets are .other",
    arguments: [
      "A>B:}", "A>B:}}", "A>B:}garbage", "A>B:}C>D", "A>B:}>D::N0CALL   :x", "A>B:}C>D:!4903.50N/07201.75W-",
    ]
  )
  func brokenThirdParty(line: String) {
    #expect(classified(line) == .other)
  }

  @Test(
    "reply-ack suffixes",
    arguments: [
      ("hello{MM}AA", "hello", "MM", "AA", "MM}AA"), ("hello{MM}", "hello", "MM", "", "MM}"),
      ("hello{12345}ABCDE", "hello", "12345", "ABCDE", "12345}ABCDE"), ("hello{1", "hello", "1", nil, "1"),
      ("hello{a1B2c", "hello", "a1B2c", nil, "a1B2c"),
    ] as [(String, String, String, String?, String)])
  func replyAck(text: String, expectedText: String, msgno: String, replyAck: String?, seqId: String) throws {
    let message = try #require(addressed("N0CALL>APRS::KJ7ABC   :" + text))
    #expect(message.text == expectedText)
    #expect(message.msgno == msgno)
    #expect(message.replyAck == replyAck)
    #expect(message.seqId == seqId)
    #expect(message.kind == .message)
  }

  @Test(
    "suffixes that are not message numbers leave the whole text",
    arguments: [
      "hi{123456", "hi{", "hi{12}ABCDEF", "hi{12 34", "hi{1-2", "hi{12}}", "hi{12}A B", "{", "x{y{",
      "hi{\u{00E9}1",
    ])
  func notNumbers(text: String) throws {
    let message = try #require(addressed("N0CALL>APRS::KJ7ABC   :" + text))
    #expect(message.text == text)
    #expect(message.msgno == nil && message.replyAck == nil && message.seqId == nil)
  }

  @Test("the split is on the last '{': earlier braces stay in the text")
  func lastBrace() throws {
    let message = try #require(addressed("N0CALL>APRS::KJ7ABC   :a{b} c{d{12"))
    #expect(message.text == "a{b} c{d")
    #expect(message.msgno == "12")
    // The last brace's suffix is invalid: no fallback to an earlier one.
    let whole = try #require(addressed("N0CALL>APRS::KJ7ABC   :a{12 b{c d"))
    #expect(whole.text == "a{12 b{c d" && whole.msgno == nil)
  }

  @Test("trailing spaces and CR after the msgno and before the brace are dropped")
  func trailing() throws {
    let spaces = try #require(addressed("N0CALL>APRS::KJ7ABC   :hello   {12   "))
    #expect(spaces.text == "hello" && spaces.msgno == "12")
    let information = bytes(":KJ7ABC   :hello{AB}CD \r")
    let inner = AddressedPacket.classify(
      TNC2Packet(source: "N0CALL", destination: "APRS", path: [], information: information))
    #expect(inner.addressed?.msgno == "AB" && inner.addressed?.replyAck == "CD")
    let carriage = AddressedPacket.classify(
      TNC2Packet(source: "N0CALL", destination: "APRS", path: [], information: bytes(":KJ7ABC   :hello\r \r"))
    )
    #expect(carriage.addressed?.text == "hello")
    let leading = try #require(addressed("N0CALL>APRS::KJ7ABC   :  indented"))
    #expect(leading.text == "  indented")
  }

  /// Decision: unpadded and lower-case addressees are accepted, trimmed and upper-cased.
  @Test(
    "unpadded and lower-case addressees are accepted and normalised",
    arguments: [
      (":N0CALL:hi{1", "N0CALL", "N0CALL"), (":n0call   :hi{1", "N0CALL", "n0call"),
      (":n0call-7:hi{1", "N0CALL-7", "n0call-7"), (":Kj7Abc-15:hi{1", "KJ7ABC-15", "Kj7Abc-15"),
      (": N0CALL  :hi{1", "N0CALL", "N0CALL"), (":A:hi{1", "A", "A"),
      (":ABCDEFGHI:hi{1", "ABCDEFGHI", "ABCDEFGHI"),
    ])
  func addresseeForms(information: String, addressee: String, asSent: String) throws {
    let message = try #require(addressed("W1AW>APRS:" + information))
    #expect(message.addressee == addressee)
    #expect(message.addresseeAsSent == asSent)
    #expect(message.text == "hi" && message.msgno == "1" && message.kind == .message)
  }

  @Test(
    "malformed addressee fields are .other",
    arguments: [
      "::hi", ":         :hi", ":ABCDEFGHIJ:hi", ":N0 CALL  :hi", ":N0CALL    hi", ":N0CALL", ":", "::",
      ":N0\u{00}CALL  :hi", ":N0CALL\u{00E9}:hi",
    ])
  func badAddressee(information: String) {
    #expect(classified("W1AW>APRS:" + information) == .other)
  }

  /// Decision: a message-format packet with an empty text (after dropping `{msgno` and trailing spaces) is
  /// `.other`: nothing to store, show or ACK.
  @Test("empty texts are .other", arguments: ["", "   ", "{12", "  {12}AB  ", "\r"])
  func emptyText(text: String) {
    #expect(classified("W1AW>APRS::N0CALL   :" + text) == .other)
  }

  @Test(
    "acks and rejs",
    arguments: [
      ("ack12", PacketKind.ack, "12", nil), ("rej12", .rej, "12", nil), ("ackAB}CD", .ack, "AB", "CD"),
      ("ack1}", .ack, "1", ""), ("ack12345  ", .ack, "12345", nil), ("rejX}", .rej, "X", ""),
      ("ack12{34", .ack, "12", nil), ("rej7}AB{99}", .rej, "7", "AB"),
    ] as [(String, PacketKind, String, String?)])
  func acks(text: String, kind: PacketKind, acked: String, replyAck: String?) throws {
    let ack = try #require(addressed("N0CALL>APRS,TCPIP*::KJ7ABC-7 :" + text))
    #expect(ack.kind == kind)
    #expect(ack.ackedMsgno == acked)
    #expect(ack.replyAck == replyAck)
    #expect(ack.msgno == nil)
    #expect(OutgoingLine.ack(for: ack) == nil)
  }

  @Test(
    "texts that only start like acks are messages",
    arguments: ["ack", "rej", "acknowledged, thanks", "ack123456", "ack 12", "ACK12", "Ack12", "ack{12"]
  )
  func ackLookalikes(text: String) throws {
    #expect(try #require(addressed("N0CALL>APRS::KJ7ABC   :" + text)).kind == .message)
  }

  /// Decision: `BLN` + digit is a bulletin (group bulletins `BLN3WX` included), `BLN` + letter an
  /// announcement (APRS101 ch. 14), bare `BLN` a bulletin.
  @Test(
    "bulletins, announcements and weather by addressee",
    arguments: [
      ("BLN0     ", PacketKind.bulletin), ("BLN9", .bulletin), ("BLN3WX   ", .bulletin),
      ("bln1     ", .bulletin),
      ("BLN      ", .bulletin), ("BLN_X    ", .bulletin), ("BLNA     ", .announcement),
      ("BLNZ     ", .announcement),
      ("blnq", .announcement), ("BLNAWX   ", .announcement), ("NWS-WARN ", .weather), ("NWS_ADVIS", .weather),
      ("nws-torn ", .weather), ("SKYCWA   ", .weather), ("SKY", .weather), ("CWA123   ", .weather),
      ("BOM_VIC  ", .weather), ("NWSABC   ", .message), ("NWS      ", .message), ("BL1N     ", .message),
      ("BO1M     ", .message),
    ] as [(String, PacketKind)])
  func addresseeKinds(addressee: String, kind: PacketKind) throws {
    let packet = try #require(addressed("WXSRV>APRS::\(addressee):Severe weather{12"))
    #expect(packet.kind == kind)
    #expect(packet.msgno == "12")
    let ackExpected: Bool = kind == .message
    #expect((OutgoingLine.ack(for: packet) != nil) == ackExpected)
  }

  @Test(
    "telemetry metadata and queries by text",
    arguments: [
      ("PARM.Battery,Temp", PacketKind.telemetry), ("UNIT.Volts,deg.F", .telemetry),
      ("EQNS.0,2.6,0,0,.53,-32", .telemetry), ("BITS.10110101,PROJECT", .telemetry), ("parm.x", .message),
      ("PARM", .message), ("PARMS.x", .message), ("?APRSP", .query), ("?IGATE?", .query), ("?", .query),
      ("what?", .message), (" ?APRSP", .message),
    ] as [(String, PacketKind)])
  func textKinds(text: String, kind: PacketKind) throws {
    #expect(try #require(addressed("N0CALL>APRS::N0CALL   :" + text)).kind == kind)
  }

  @Test("a message to self is flagged; the same base call with another SSID is not")
  func toSelf() throws {
    let own = try #require(addressed("N0CALL>APRS::N0CALL   :note to self{1"))
    #expect(own.isToSelf && own.kind == .message)
    #expect(OutgoingLine.ack(for: own) == nil)
    #expect(try #require(addressed("n0call-7>APRS::N0CALL-7 :x")).isToSelf)
    let other = try #require(addressed("N0CALL-7>APRS::N0CALL   :hi{1"))
    #expect(!other.isToSelf)
    #expect(OutgoingLine.ack(for: other) != nil)
    #expect(!(try #require(addressed("N0CALL>APRS::N0CALL-1 :x")).isToSelf))
  }

  @Test(
    "non-message packets are .other",
    arguments: [
      "N0CALL>APRS:!4903.50N/07201.75W-Test", "N0CALL>APRS:>status text",
      "N0CALL>APRS:_10090556c220s004g005t077",
      "N0CALL>APRS:;OBJECT   *092345z4903.50N/07201.75W>", "N0CALL>APRS:T#005,199,000,255,073,123,01101001",
      "N0CALL>APRS:", "N0CALL>APRS:?APRS?", "N0CALL>APRS: :N0CALL   :hi",
    ])
  func others(line: String) {
    #expect(classified(line) == .other)
    #expect(classified(line)?.kind == .other)
    #expect(classified(line)?.addressed == nil)
  }

  @Test("a 200-character text is kept whole")
  func longText() throws {
    let text = String(repeating: "0123456789", count: 20)
    let message = try #require(addressed("N0CALL>APRS::KJ7ABC   :\(text){99"))
    #expect(message.text == text && message.msgno == "99")
  }

  @Test("control bytes and invalid UTF-8 in the text decode leniently")
  func hostileText() throws {
    let information = bytes(":KJ7ABC   :a") + [0x00, 0xFF, 0x07, 0xC3] + bytes("b{1")
    let result = AddressedPacket.classify(
      TNC2Packet(source: "N0CALL", destination: "APRS", path: [], information: information))
    let message = try #require(result.addressed)
    #expect(message.text == "a\u{00}\u{FFFD}\u{07}\u{FFFD}b")
    #expect(message.msgno == "1")
    let utf8 = try #require(addressed("N0CALL>APRS::KJ7ABC   :Grüße 73 ✓{7"))
    #expect(utf8.text == "Grüße 73 ✓")
  }

  @Test("the source keeps its case; the addressee is upper-cased")
  func cases() throws {
    let message = try #require(addressed("oh7aa>APRS::oh7lzb   :hi"))
    #expect(message.source == "oh7aa" && message.addressee == "OH7LZB")
    #expect(message.isToSelf == false)
  }

  @Test("PacketKind raw values are the CLI's kind strings")
  func rawValues() {
    #expect(
      PacketKind.allCases.map(\.rawValue)
        == ["message", "ack", "rej", "bulletin", "announcement", "weather", "telemetry", "query", "other"])
  }
}
