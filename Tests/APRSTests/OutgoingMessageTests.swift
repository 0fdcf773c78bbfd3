import Testing

@testable import APRS

@Suite struct OutgoingMessageTests {
  @Test("the line: STATION>APRS,TCPIP*::ADDRESSEE padded to 9:TEXT{MSGNO CR LF, byte for byte")
  func line() {
    let line = OutgoingMessage.line(from: "OH7LZB-9", to: "KJ7ABC-7", text: "Hello, 1 2 3", msgno: "42")
    #expect(line == bytes("OH7LZB-9>APRS,TCPIP*::KJ7ABC-7 :Hello, 1 2 3{42\r\n"))
    #expect(
      OutgoingMessage.line(from: "W1AW", to: "N0CALL", text: "x", msgno: "12345")
        == bytes("W1AW>APRS,TCPIP*::N0CALL   :x{12345\r\n"))
    // A nine-character addressee needs no padding.
    #expect(
      OutgoingMessage.line(from: "W1AW", to: "KJ7ABCD-1", text: "x", msgno: "1")
        == bytes("W1AW>APRS,TCPIP*::KJ7ABCD-1:x{1\r\n"))
    // UTF-8 text goes as its bytes; control bytes never make a second line.
    #expect(
      OutgoingMessage.line(from: "W1AW", to: "N0CALL", text: "Grüße\r\n#filter g/*", msgno: "1")
        == bytes("W1AW>APRS,TCPIP*::N0CALL   :Grüße#filter g/*{1\r\n"))
  }

  @Test("the line reads back as the same message, numbered, from the station to the addressee")
  func readsBack() throws {
    let line = OutgoingMessage.line(from: "OH7LZB-9", to: "KJ7ABC-7", text: "Are you there?", msgno: "7")
    let message = try #require(addressed(String(decoding: line.dropLast(2), as: UTF8.self)))
    #expect(message.kind == .message)
    #expect(message.source == "OH7LZB-9")
    #expect(message.addressee == "KJ7ABC-7")
    #expect(message.text == "Are you there?")
    #expect(message.msgno == "7")
    #expect(message.replyAck == nil)
  }

  @Test(
    "texts that can be sent",
    arguments: [
      "hi", "a", String(repeating: "x", count: 67), "Grüße aus Köln 👋", " leading space", "a}b", "50% off!",
      "family 👨\u{200D}👩\u{200D}👧",  // a zero-width joiner inside an emoji sequence is fine
    ]
  )
  func goodText(text: String) {
    #expect(OutgoingMessage.textProblem(text) == nil)
  }

  @Test(
    "texts that cannot, each with a reason that names the text",
    arguments: [
      ("", "empty"), (String(repeating: "x", count: 68), "68 characters"), ("a{b", "'{'"), ("a|b", "'|'"),
      ("a~b", "'~'"), ("tab\there", "control"), ("bell\u{07}", "control"), ("c1\u{85}", "control"),
      ("del\u{7F}", "control"), ("   ", "only spaces"), ("ack12", "ack"), ("rej1", "rej"),
      ("PARM.Volt,Temp", "telemetry"), ("?APRSP", "query"), ("trailing ", "read back"),
      ("two\u{2028}lines", "line separators"), ("para\u{2029}graph", "line separators"),
      ("pay \u{202E}0001\u{202C}", "direction overrides"), ("iso\u{2066}late\u{2069}", "direction overrides"),
    ]
  )
  func badText(text: String, reason: String) throws {
    let problem = try #require(OutgoingMessage.textProblem(text))
    #expect(problem.hasPrefix("text"), "\(problem)")
    #expect(problem.contains(reason), "\(problem)")
  }

  @Test("67 characters counted as characters, not bytes")
  func lengthInCharacters() {
    #expect(OutgoingMessage.textProblem(String(repeating: "ä", count: 67)) == nil)
    #expect(OutgoingMessage.textProblem(String(repeating: "ä", count: 68)) != nil)
  }

  @Test(
    "addressees that are no station are refused, each with a reason naming it",
    arguments: [
      // Bulletins, announcements, weather.
      ("BLN", "bulletin"), ("BLN1", "bulletin"), ("BLN3WX", "bulletin"), ("BLNA", "bulletin"),
      ("BLNX-1", "bulletin"), ("SKYCWA", "weather"), ("CWAABC", "weather"), ("BOM123", "weather"),
      ("NWS", "weather"), ("NWSALL", "weather"), ("NWS-1", "weather"),
      // Reserved names, with any SSID.
      ("SERVER", "reserved"), ("TCPIP", "reserved"), ("TCPXX", "reserved"), ("NOCALL", "reserved"),
      ("N0CALL", "reserved"), ("N0CALL-7", "reserved"), ("NOCALL-1", "reserved"), ("RELAY", "reserved"),
      ("RFONLY", "reserved"), ("NOGATE", "reserved"), ("TCPIP-1", "reserved"),
      // q-constructs.
      ("QAC", "q-construct"), ("QAR", "q-construct"), ("QAS", "q-construct"), ("QAX", "q-construct"),
      ("QAO", "q-construct"), ("QAI", "q-construct"), ("QAZ", "q-construct"), ("qAr", "q-construct"),
      // Path aliases.
      ("WIDE", "alias"), ("WIDE1-1", "alias"), ("WIDE2-2", "alias"), ("WIDE7-7", "alias"), ("TRACE", "alias"),
      ("TRACE3-3", "alias"), ("WIDEN", "alias"),
      // The server's own login.
      ("N0CALL-10", "own APRS-IS login"), ("OH7LZB-15", "own APRS-IS login"),
    ]
  )
  func refusedAddressee(addressee: String, reason: String) throws {
    let login = addressee == "N0CALL-10" ? "N0CALL-10" : "oh7lzb-15"
    let problem = try #require(OutgoingMessage.addresseeProblem(addressee, login: login), "\(addressee)")
    #expect(problem.hasPrefix(addressee), "\(problem)")
    #expect(problem.contains(reason), "\(problem)")
  }

  @Test(
    "stations are accepted, other SSIDs of the login and calls that only resemble reserved names too",
    arguments: [
      "KJ7ABC-7", "W1AW", "ANSRVR", "WXBOT", "OH7LZB", "OH7LZB-14", "QA1", "QAB1", "QA", "Q1AB",
      "SERVER1", "XWIDE", "TRACK", "N0CALM", "BL1N", "NW5", "RELAYS1", "K1ABC-15",
      // Real calls that begin like a generic destination or a gateway: only whole calls are refused.
      "AP2ABC", "DX1ABC-9", "W1CQ", "K1ID", "EMAILS", "SMS1A",
    ]
  )
  func acceptedAddressee(addressee: String) {
    #expect(OutgoingMessage.addresseeProblem(addressee, login: "OH7LZB-15") == nil, "\(addressee)")
    #expect(OutgoingMessage.addresseeProblem(addressee) == nil, "\(addressee)")
  }

  @Test(
    "gateways out of APRS and the generic destination calls are refused with any SSID, saying which",
    arguments: [
      ("EMAIL-2", "email gateway"), ("EMAIL", "email gateway"), ("email-2", "email gateway"),
      ("SMSGTE", "SMS gateway"), ("SMSGTE-01", "SMS gateway"), ("SMS", "SMS gateway"),
      ("APRS", "generic APRS destination"), ("CQ", "generic APRS destination"),
      ("BEACON", "generic APRS destination"), ("ID", "generic APRS destination"),
      ("QST-1", "generic APRS destination"), ("ALL", "generic APRS destination"),
    ]
  )
  func serviceAddressee(addressee: String, reason: String) throws {
    for login in [nil, "OH7LZB-15"] {
      let problem = try #require(OutgoingMessage.addresseeProblem(addressee, login: login), "\(addressee)")
      #expect(problem.hasPrefix(addressee), "\(problem)")
      #expect(problem.contains(reason), "\(problem)")
      #expect(problem.contains("not a station"), "\(problem)")
    }
  }

  @Test("aprsc's disallowed sources: whole calls only")
  func disallowedSources() {
    for call in ["N0CALL", "NOCALL", "SERVER"] { #expect(OutgoingMessage.isDisallowedSource(call)) }
    for call in ["N0CALL-7", "NOCALL-1", "SERVER1", "W1AW"] {
      #expect(!OutgoingMessage.isDisallowedSource(call))
    }
  }
}
