import Testing

@testable import APRS

@Suite struct LineSummaryTests {
  @Test(
    "one summary per kind",
    arguments: [
      (
        "OH7AA-1>APRS,WIDE1-1,WIDE2-2,qAo,OH7AA::OH7LZB   :Testing, 1 2 3{42\r\n",
        LineSummary(
          kind: "message", source: "OH7AA-1", addressee: "OH7LZB", text: "Testing, 1 2 3", msgno: "42")
      ),
      (
        "A-1>APRS,B-2,WIDE1*:}C>APU25N,TCPIP,A-1*::DEF      :ack56",
        LineSummary(kind: "ack", source: "C", addressee: "DEF", text: "ack56", msgno: "56")
      ),
      (
        "N0CALL>APRS::KJ7ABC   :rejAB}CD",
        LineSummary(
          kind: "rej", source: "N0CALL", addressee: "KJ7ABC", text: "rejAB}CD", msgno: "AB", replyAck: "CD")
      ),
      (
        "N0CALL>APRS::KJ7ABC   :hi{MM}",
        LineSummary(
          kind: "message", source: "N0CALL", addressee: "KJ7ABC", text: "hi", msgno: "MM", replyAck: "")
      ),
      (
        "W1AW>APRS::BLN1     :Net at 8",
        LineSummary(kind: "bulletin", source: "W1AW", addressee: "BLN1", text: "Net at 8")
      ),
      (
        "W1AW>APRS::BLNA     :Hamfest",
        LineSummary(kind: "announcement", source: "W1AW", addressee: "BLNA", text: "Hamfest")
      ),
      (
        "WXSRV>APRS::NWS-WARN :Tornado",
        LineSummary(kind: "weather", source: "WXSRV", addressee: "NWS-WARN", text: "Tornado")
      ),
      (
        "N0CALL>APRS::N0CALL   :PARM.Vbat",
        LineSummary(kind: "telemetry", source: "N0CALL", addressee: "N0CALL", text: "PARM.Vbat")
      ),
      (
        "N0CALL>APRS::KJ7ABC   :?APRSP",
        LineSummary(kind: "query", source: "N0CALL", addressee: "KJ7ABC", text: "?APRSP")
      ),
      ("N0CALL>APRS:!4903.50N/07201.75W-", LineSummary(kind: "other", source: "N0CALL")),
      ("# aprsc 2.1.21\r\n", LineSummary(kind: "comment", text: "# aprsc 2.1.21")),
      ("", LineSummary(kind: "invalid", error: "empty line")),
      ("N0CALL APRS", LineSummary(kind: "invalid", error: "no ':' before the information field")),
      ("N0CALL:x", LineSummary(kind: "invalid", error: "no '>' after the source call")),
    ])
  func summaries(line: String, expected: LineSummary) {
    #expect(LineSummary.summarize(bytes(line)) == expected)
    #expect(LineSummary(line: bytes(line)[...]) == expected)
  }

  @Test("only invalid lines carry an error")
  func errorsOnlyForInvalid() {
    let lines = ["N0CALL>APRS::KJ7ABC   :hi", "# x", "N0CALL>APRS:>x", "N0CALL>APRS::KJ7ABC   :ack1"]
    for line in lines { #expect(LineSummary.summarize(bytes(line)).error == nil) }
    let long = LineSummary.summarize([UInt8](repeating: 0x41, count: 600))
    #expect(long.kind == LineSummary.invalidKind)
    #expect(long.error == TNC2Error.tooLong(length: 600).description)
  }
}
