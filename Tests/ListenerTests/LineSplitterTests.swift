import Testing

@testable import Listener

@Suite struct LineSplitterTests {
  private func split(_ chunks: [[UInt8]]) -> [LineSplitter.Piece] {
    var splitter = LineSplitter()
    var pieces: [LineSplitter.Piece] = []
    for chunk in chunks { splitter.feed(chunk) { pieces.append($0) } }
    return pieces
  }

  @Test func everyLineEndingAndEmptyLinesSkipped() {
    let pieces = split([bytes("a\r\nb\nc\rd\r\n\r\n\n")])
    #expect(pieces == [.line(bytes("a")), .line(bytes("b")), .line(bytes("c")), .line(bytes("d"))])
  }

  @Test func linesSplitAcrossReads() {
    let pieces = split([bytes("# aprsc 2.1"), bytes(".21\r"), bytes("\nN0CALL>APRS:>hi"), bytes("\r\n")])
    #expect(pieces == [.line(bytes("# aprsc 2.1.21")), .line(bytes("N0CALL>APRS:>hi"))])
  }

  @Test func a510ByteLineIsKeptA511ByteOneIsNot() {
    let ok = [UInt8](repeating: 0x41, count: 510)
    let long = [UInt8](repeating: 0x42, count: 511)
    #expect(split([ok + bytes("\r\n")]) == [.line(ok)])
    #expect(split([long + bytes("\r\n")]) == [.tooLong(length: 511)])
  }

  @Test func aLongLineIsDiscardedWholeEvenAcrossReadsAndTheNextLineSurvives() {
    let long = [UInt8](repeating: 0x43, count: 600)
    let pieces = split([Array(long[0..<300]), Array(long[300...]) + bytes("\r\nnext\r\n")])
    #expect(pieces == [.tooLong(length: 600), .line(bytes("next"))])
  }

  @Test func binaryBytesPassUntouched() {
    let line: [UInt8] = [0x00, 0xFF, 0x80, 0x7F, 0x41]
    #expect(split([line + [0x0D, 0x0A]]) == [.line(line)])
  }

  @Test func resetForgetsAPartialLine() {
    var splitter = LineSplitter()
    var pieces: [LineSplitter.Piece] = []
    splitter.feed(bytes("half a li")) { pieces.append($0) }
    #expect(splitter.pendingCount == 9)
    splitter.reset()
    splitter.feed(bytes("ne\r\n")) { pieces.append($0) }
    #expect(pieces == [.line(bytes("ne"))])
  }
}
