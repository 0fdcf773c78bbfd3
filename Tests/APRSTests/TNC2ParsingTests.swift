import TestSupport
import Testing

@testable import APRS

@Suite struct TNC2ParsingTests {
  static let example = "OH7AA-1>APRS,WIDE1-1,WIDE2-2,qAo,OH7AA::OH7LZB   :Testing, 1 2 3{42"

  @Test("the OH7AA example's header and information")
  func example() throws {
    let parsed = try #require(packet(Self.example))
    #expect(parsed.source == "OH7AA-1")
    #expect(parsed.destination == "APRS")
    #expect(parsed.path == ["WIDE1-1", "WIDE2-2", "qAo", "OH7AA"])
    #expect(parsed.information == bytes(":OH7LZB   :Testing, 1 2 3{42"))
  }

  @Test(
    "CR, LF, CR LF or no line ending give the same packet", arguments: ["", "\r", "\n", "\r\n", "\r\n\r\n"])
  func lineEndings(ending: String) throws {
    let parsed = try #require(packet(Self.example + ending))
    #expect(parsed == packet(Self.example))
  }

  @Test("parses any contiguous or non-contiguous byte collection")
  func collections() throws {
    let array = bytes(Self.example + "\r\n")
    let expected = try #require(packet(Self.example))
    #expect(TNC2Packet.parse(array[...]) == .success(.packet(expected)))
    #expect(TNC2Packet.parse(Self.example.utf8) == .success(.packet(expected)))
    #expect(TNC2Packet.parse(array.lazy.map { $0 }) == .success(.packet(expected)))
    #expect(TNC2Line.parse(array) == .success(.packet(expected)))
  }

  @Test("no path, empty information")
  func minimal() throws {
    let parsed = try #require(packet("A>B:"))
    #expect(parsed.source == "A" && parsed.destination == "B" && parsed.path.isEmpty)
    #expect(parsed.information.isEmpty)
  }

  @Test("the first ':' ends the header; later ':' and '>' belong to the information")
  func firstColon() throws {
    let parsed = try #require(packet("N0CALL>APRS,TCPIP*:>status: a>b:c"))
    #expect(parsed.path == ["TCPIP*"])
    #expect(parsed.information == bytes(">status: a>b:c"))
  }

  @Test("comment lines keep their bytes, '#' included, without the line ending")
  func comments() {
    let line = bytes("# aprsc 2.1.21-g1234 29 Nov 2025 14:07:00 GMT T2TEST 1.2.3.4:14580\r\n")
    #expect(TNC2Packet.parse(line) == .success(.comment(Array(line.dropLast(2)))))
    #expect(TNC2Packet.parse(bytes("#")) == .success(.comment(bytes("#"))))
    #expect(TNC2Line.parse(bytes("# logresp N0CALL verified, server T2TEST")).map(\.packet) == .success(nil))
  }

  @Test(
    "errors, each with its reason",
    arguments: [
      ("", TNC2Error.empty), ("\r\n", .empty), ("\n\n", .empty), ("N0CALL", .noInformation),
      ("N0CALL>APRS", .noInformation), ("N0CALL:hello", .noSource), ("N0CALL,APRS:x>y", .noSource),
      (">APRS:x", .invalidSource), ("ABCDEFGHIJ>APRS:x", .invalidSource), ("N0*CALL>APRS:x", .invalidSource),
      ("N0 CALL>APRS:x", .invalidSource), ("N0CALL>:x", .noDestination), ("N0CALL>,WIDE:x", .noDestination),
      ("N0CALL>APRS,,WIDE:x", .invalidPath), ("N0CALL>APRS,:x", .invalidPath), ("}", .noInformation),
      (":", .noSource), ("}}}}", .noInformation),
    ])
  func errors(line: String, error: TNC2Error) {
    #expect(parseError(bytes(line)) == error)
  }

  @Test("error descriptions are distinct")
  func errorDescriptions() {
    let all: [TNC2Error] = [
      .empty, .tooLong(length: 600), .noSource, .noInformation, .invalidSource, .noDestination, .invalidPath,
    ]
    #expect(Set(all.map(\.description)).count == all.count)
    #expect(TNC2Error.tooLong(length: 600).description.contains("600"))
    #expect(TNC2Error.noInformation.description == "no ':' before the information field")
  }

  @Test("lower-case and '-' sources pass APRS-IS's lenient check")
  func lenientSource() throws {
    #expect(try #require(packet("oh7aa-1>APRS::N0CALL   :x")).source == "oh7aa-1")
    #expect(try #require(packet("ABCDEFGHI>APRS:x")).source == "ABCDEFGHI")
    #expect(try #require(packet("A-B-C>APRS:x")).source == "A-B-C")
  }

  /// A packet line of exactly `length` bytes before its line ending.
  static func line(length: Int) -> [UInt8] {
    let header = bytes("N0CALL>APRS,TCPIP*::OH7LZB   :")
    return header + [UInt8](repeating: 0x78, count: length - header.count)
  }

  @Test("510 bytes plus CR LF (512 in all) is the longest line")
  func longestLine() throws {
    let line = Self.line(length: 510) + bytes("\r\n")
    #expect(line.count == 512)
    guard case .success(.packet(let parsed)) = TNC2Packet.parse(line) else {
      Issue.record("a 512-byte line must parse")
      return
    }
    #expect(parsed.information.count == 510 - "N0CALL>APRS,TCPIP*:".utf8.count)
  }

  @Test("513 bytes and more are too long", arguments: [511, 512, 600, 5000])
  func tooLong(length: Int) {
    #expect(parseError(Self.line(length: length) + bytes("\r\n")) == .tooLong(length: length))
    #expect(parseError(Self.line(length: length)) == .tooLong(length: length))
  }

  @Test("a 511-byte line without an ending still breaks the 510-byte content rule")
  func contentRule() {
    #expect(parseError(Self.line(length: 511)) == .tooLong(length: 511))
    #expect(parseError(Self.line(length: 510)) == nil)
  }

  @Test("NUL, 0xFF, invalid UTF-8 and control bytes never crash")
  func hostileBytes() throws {
    let information: [UInt8] = [0x3A, 0x00, 0xFF, 0xFE, 0xC3, 0x28, 0x07, 0x1B, 0x0D, 0x41]
    let raw = bytes("N0CALL>AP") + [0x00] + bytes("RS,W") + [0xFF] + bytes("IDE:") + information
    guard case .success(.packet(let parsed)) = TNC2Packet.parse(raw) else {
      Issue.record("control bytes in the header must not stop parsing")
      return
    }
    #expect(parsed.information == information)
    #expect(parsed.destination == "AP\u{00}RS")
    #expect(parsed.path == ["W\u{FFFD}IDE"])
    #expect(parseError([0x00]) == .noInformation)
    #expect(parseError([0xFF, 0x3E, 0x41, 0x3A]) == .invalidSource)
    #expect(parseError([0x41, 0x3E, 0x41, 0x3A, 0xFF, 0x00]) == nil)
  }

  @Test("random byte soup never crashes", arguments: 0..<20)
  func fuzz(seed: Int) {
    var generator = SplitMix64(seed: UInt64(seed))
    for _ in 0..<500 {
      let length = Int(generator.next() % 80)
      let alphabet = bytes("AN0>:,{}-* \r\nack9BLN?")
      let line = (0..<length).map { _ -> UInt8 in
        generator.next() % 4 == 0
          ? UInt8(truncatingIfNeeded: generator.next())
          : alphabet[Int(generator.next() % UInt64(alphabet.count))]
      }
      _ = LineSummary(line: line)
      if case .success(.packet(let parsed)) = TNC2Packet.parse(line) {
        _ = AddressedPacket.classify(parsed)
      }
    }
  }
}
