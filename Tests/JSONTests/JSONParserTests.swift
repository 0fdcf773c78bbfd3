import JSON
import TestSupport
import Testing

@Suite struct JSONParserTests {
  private func parse(_ text: String) throws(JSONParseError) -> JSONValue {
    try JSONParser.parse(Array(text.utf8))
  }

  @Test func parsesARegisterBody() throws {
    let value = try parse(
      #"{"callsign":"n0call","ssid":7,"ackMessages":false,"since":0,"auth":"13023","avatarIcon":null}"#)
    guard case .object(let object) = value else {
      Issue.record("not an object")
      return
    }
    #expect(object.keys == ["callsign", "ssid", "ackMessages", "since", "auth", "avatarIcon"])
    #expect(object["callsign"] == .string("n0call"))
    #expect(object["ssid"] == .number(JSONNumber(literal: "7")))
    #expect(object["ackMessages"] == .bool(false))
    #expect(object["avatarIcon"] == .null)
    #expect(object["missing"] == nil)
  }

  @Test func integersStayExact() throws {
    let value = try parse("[9007199254740993, -9223372036854775808, 9223372036854775808, 1.0, 1e3]")
    guard case .array(let numbers) = value else {
      Issue.record("not an array")
      return
    }
    let ints = numbers.map { value -> Int64? in
      if case .number(let number) = value { return number.int64 }
      return nil
    }
    #expect(ints == [9_007_199_254_740_993, Int64.min, nil, nil, nil])
  }

  @Test func decodesEscapes() throws {
    #expect(try parse(#""a\"b\\c\/d\n\t\u00e9\ud83d\ude00""#) == .string("a\"b\\c/d\n\té😀"))
  }

  @Test(arguments: [
    ("", JSONParseError.empty),
    ("   ", .empty),
    ("{", .unexpectedEnd),
    (#"{"a":1,}"#, .unexpectedByte(UInt8(ascii: "}"), offset: 7)),
    (#"{"a":1}x"#, .trailingData(offset: 7)),
    (#"{"a":1,"a":2}"#, .duplicateKey("a")),
    ("[01]", .invalidNumber(offset: 1)),
    ("[-]", .invalidNumber(offset: 1)),
    ("[1.]", .invalidNumber(offset: 1)),
    ("[1e]", .invalidNumber(offset: 1)),
    (#"["\x"]"#, .invalidEscape(offset: 2)),
    (#"["\ud800"]"#, .loneSurrogate(offset: 2)),
    (#"["\udc00"]"#, .loneSurrogate(offset: 2)),
    (#"["\ud800\u0041"]"#, .loneSurrogate(offset: 2)),
    (#"["x\ud800\n"]"#, .loneSurrogate(offset: 3)),
    (#"["\ud800\u00"]"#, .invalidEscape(offset: 8)),
    (#"["\ud800"#, .loneSurrogate(offset: 2)),
    ("[\"a\u{01}\"]", .controlCharacterInString(offset: 3)),
    ("tru", .unexpectedEnd),
    ("nul!", .unexpectedByte(UInt8(ascii: "!"), offset: 3)),
    ("{'a':1}", .unexpectedByte(UInt8(ascii: "'"), offset: 1)),
    ("NaN", .unexpectedByte(UInt8(ascii: "N"), offset: 0)),
  ])
  func refusesMalformedDocuments(text: String, expected: JSONParseError) {
    #expect(throws: expected) { try parse(text) }
  }

  @Test func refusesInvalidUTF8() {
    let bytes: [UInt8] = [UInt8(ascii: "\""), 0xFF, 0xFE, UInt8(ascii: "\"")]
    #expect(throws: JSONParseError.invalidUTF8(offset: 1)) { try JSONParser.parse(bytes) }
    let overlong: [UInt8] = [UInt8(ascii: "\""), 0xC0, 0xAF, UInt8(ascii: "\"")]
    #expect(throws: JSONParseError.invalidUTF8(offset: 1)) { try JSONParser.parse(overlong) }
  }

  @Test func refusesDeepNestingWithoutRecursingFurther() {
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    #expect(throws: JSONParseError.tooDeep(limit: JSONParser.defaultMaxDepth)) { try parse(deep) }
    let ok = String(repeating: "[", count: 16) + String(repeating: "]", count: 16)
    #expect(throws: Never.self) { try parse(ok) }
  }

  @Test func everyErrorReadsAsASentence() {
    let errors: [JSONParseError] = [
      .empty, .unexpectedEnd, .unexpectedByte(0, offset: 1), .unexpectedByte(65, offset: 1),
      .invalidUTF8(offset: 2), .invalidEscape(offset: 3), .controlCharacterInString(offset: 4),
      .invalidNumber(offset: 5), .tooDeep(limit: 16), .duplicateKey("auth"), .trailingData(offset: 6),
      .tooLarge(limit: 65536), .tooManyMembers(limit: 1024), .tooManyValues(limit: 65536),
    ]
    for error in errors {
      #expect(error.description.hasPrefix("body"))
    }
    #expect(JSONParseError.unexpectedByte(0, offset: 1).description.contains("0x0"))
  }

  @Test func randomBytesNeverTrap() {
    var generator = SplitMix64(seed: 42)
    let alphabet: [UInt8] = Array(#"{}[]":,\ -0123456789.eEtrufalsn"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xFF]
    for _ in 0..<20_000 {
      let count = Int(generator.next() % 40)
      let bytes = (0..<count).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
      _ = try? JSONParser.parse(bytes)
    }
  }
}
