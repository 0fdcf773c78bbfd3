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

  @Test("bulletin, announcement and weather addressees are refused; stations are fine")
  func addressees() {
    for bulletin in ["BLN", "BLN1", "BLN3WX", "BLNA", "SKYCWA", "CWAABC", "BOM123"] {
      #expect(OutgoingMessage.addresseeProblem(bulletin) != nil, "\(bulletin)")
    }
    for station in ["KJ7ABC-7", "N0CALL", "W1AW", "ANSRVR", "WXBOT", "EMAIL-2"] {
      #expect(OutgoingMessage.addresseeProblem(station) == nil, "\(station)")
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
