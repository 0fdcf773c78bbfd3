import Testing

@testable import APRS

@Suite struct DedupKeyTests {
  @Test("retries with another reply-ack, padding or trailing spaces are the same message")
  func retries() throws {
    let first = try #require(addressed("W1AW>APRS::N0CALL   :hello there{12}AA"))
    let retry = try #require(addressed("W1AW>APRS,WIDE2-1::n0call:hello there   {12}BB"))
    #expect(DedupKey(first) == DedupKey(retry))
    #expect(DedupKey(first).digest == DedupKey(retry).digest)
    #expect(DedupKey(first).msgno == "12")
  }

  @Test("number, text, sender and addressee each tell messages apart")
  func distinct() throws {
    let lines = [
      "W1AW>APRS::N0CALL   :hello{12", "W1AW>APRS::N0CALL   :hello{13", "W1AW>APRS::N0CALL   :hullo{12",
      "W1AW-1>APRS::N0CALL   :hello{12", "W1AW>APRS::N0CALL-1 :hello{12", "W1AW>APRS::N0CALL   :hello",
    ]
    let keys = try lines.map { DedupKey(try #require(addressed($0))) }
    #expect(Set(keys).count == lines.count)
    #expect(Set(keys.map(\.digest)).count == lines.count)
  }

  @Test("windows: an hour when numbered, half an hour when not")
  func windows() throws {
    let numbered = DedupKey(try #require(addressed("W1AW>APRS::N0CALL   :hello{12")))
    let plain = DedupKey(try #require(addressed("W1AW>APRS::N0CALL   :hello")))
    #expect(numbered.isNumbered && numbered.window == 3600)
    #expect(!plain.isNumbered && plain.window == 1800)
    #expect(DedupKey.numberedWindow == 3600 && DedupKey.unnumberedWindow == 1800)
  }

  @Test("the digest joins the normalised fields with U+001F")
  func digest() {
    let key = DedupKey(sender: " w1aw ", addressee: "n0call-7", msgno: "AB}CD", text: "hi  ")
    #expect(key.digest == "W1AW\u{1F}N0CALL-7\u{1F}AB\u{1F}hi")
    let plain = DedupKey(sender: "W1AW", addressee: "N0CALL", msgno: String?.none, text: "hi")
    #expect(plain.digest == "W1AW\u{1F}N0CALL\u{1F}\u{1F}hi")
    let empty = DedupKey(sender: "W1AW", addressee: "N0CALL", msgno: "", text: "hi")
    #expect(empty == plain)
  }
}
