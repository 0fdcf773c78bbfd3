import Testing

@testable import APRS

@Suite struct PasscodeTests {
  @Test(
    "docs/protocol.md vectors",
    arguments: [
      ("N0CALL", 13023), ("n0call", 13023), ("N0CALL-10", 13023), ("TESTCALL", 31742),
      ("SUCHCALL", 27890), ("MUCHSIGN", 27128), ("WOW", 29613), ("W5AGO", 10896), ("SRC", 25520),
      ("TESTING", 31421), ("OH7LZB", 20900),
    ])
  func vectors(callsign: String, expected: Int) {
    #expect(Passcode.compute(callsign) == expected)
  }

  @Test("trims whitespace, cuts at the first '-', works on substrings")
  func normalisation() {
    #expect(Passcode.compute("  n0call-7 \t") == 13023)
    #expect(Passcode.compute("N0CALL-7-8") == 13023)
    let line = "xxN0CALLxx"
    #expect(Passcode.compute(line.dropFirst(2).dropLast(2)) == 13023)
  }

  @Test("no truncation: a 10-character call differs from its 9-character prefix")
  func noTruncation() {
    #expect(Passcode.compute("ABCDEFGHIJ") != Passcode.compute("ABCDEFGHI"))
  }

  @Test("the empty call is the masked seed; odd lengths count a missing 0")
  func edges() {
    #expect(Passcode.compute("") == 0x73E2)
    #expect(Passcode.compute("-5") == 0x73E2)
    #expect(Passcode.compute("A") == (0x73E2 ^ (0x41 << 8)) & 0x7FFF)
  }
}
