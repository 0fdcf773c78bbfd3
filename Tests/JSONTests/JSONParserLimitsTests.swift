import Testing

@testable import JSON

/// Duplicate keys by their unescaped bytes, the member and value caps, and work that grows linearly.
@Suite struct JSONParserLimitsTests {
  private func parse(_ text: String) throws(JSONParseError) -> JSONValue {
    try JSONParser.parse(Array(text.utf8))
  }

  private func object(_ text: String) throws -> JSONObject {
    guard case .object(let object) = try parse(text) else { throw JSONParseError.empty }
    return object
  }

  /// `{"k0":0,"k1":1,…}` with `count` distinct keys.
  private func wideObject(_ count: Int) -> String {
    "{" + (0..<count).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + "}"
  }

  @Test func keysEqualOnlyUnderUnicodeEquivalenceAreDistinct() throws {
    // U+0340 is canonically equivalent to U+0300, so Swift's `==` calls them equal; their bytes differ.
    #expect("\u{300}" == "\u{340}")
    let marks = try object(#"{"\u0300":1,"\u0340":2}"#)
    #expect(marks.keys.map { Array($0.utf8) } == [[0xCC, 0x80], [0xCD, 0x80]])
    #expect(marks["\u{340}"] == .number(JSONNumber(literal: "2")))
    #expect(marks["\u{300}"] == .number(JSONNumber(literal: "1")))
    // Precomposed é and e + combining acute; the Kelvin sign and K.
    let accents = try object("{\"\u{E9}\":1,\"e\u{301}\":2,\"\u{212A}\":3,\"K\":4}")
    #expect(accents.members.count == 4)
    #expect(accents["K"] == .number(JSONNumber(literal: "4")))
    #expect(accents["\u{212A}"] == .number(JSONNumber(literal: "3")))
  }

  @Test(arguments: [
    (#"{"a":1,"\u0061":2}"#, "a"),
    (#"{"\u0061":1,"a":2}"#, "a"),
    (#"{"\/":1,"/":2}"#, "/"),
    (#"{"caf\u00e9":1,"café":2}"#, "café"),
    (#"{"\ud83d\ude00":1,"😀":2}"#, "😀"),
    (#"{"x":1,"y":{"x":1},"x":3}"#, "x"),
  ])
  func escapedSpellingsOfOneKeyAreDuplicates(text: String, key: String) {
    #expect(throws: JSONParseError.duplicateKey(key)) { try parse(text) }
  }

  @Test func theSameKeyInSiblingAndNestedObjectsIsFine() throws {
    let value = try parse(#"[{"a":1,"b":{"a":2,"b":3}},{"a":4,"b":5},{"b":{"a":{"a":6}}}]"#)
    guard case .array(let elements) = value else {
      Issue.record("not an array")
      return
    }
    #expect(elements.count == 3)
  }

  @Test func anObjectMayHave1024MembersNotMore() throws {
    #expect(JSONParser.defaultMaxMembers == 1_024)
    #expect(try object(wideObject(1_024)).members.count == 1_024)
    #expect(throws: JSONParseError.tooManyMembers(limit: 1_024)) { try parse(wideObject(1_025)) }
    // The cap is per object: several wide objects in one document are fine.
    let three = "[" + Array(repeating: wideObject(1_024), count: 3).joined(separator: ",") + "]"
    #expect(throws: Never.self) { try parse(three) }
    #expect(throws: JSONParseError.tooManyMembers(limit: 4)) {
      try JSONParser.parse(Array(wideObject(5).utf8), maxMembers: 4)
    }
  }

  @Test func aDocumentMayHold65536ValuesNotMore() throws {
    #expect(JSONParser.defaultMaxValues == 65_536)
    // The array itself is one value.
    let zeros = { (count: Int) in "[" + Array(repeating: "0", count: count).joined(separator: ",") + "]" }
    guard case .array(let elements) = try parse(zeros(65_535)) else {
      Issue.record("not an array")
      return
    }
    #expect(elements.count == 65_535)
    #expect(throws: JSONParseError.tooManyValues(limit: 65_536)) { try parse(zeros(65_536)) }
    // Every kind of value counts, keys do not: 1 array + 3 × (1 object + 2 values) = 10.
    let mixed = #"[{"a":null,"b":"s"},{"a":true,"b":[]},{"a":1.5,"b":{}}]"#
    #expect(throws: Never.self) { try JSONParser.parse(Array(mixed.utf8), maxValues: 10) }
    #expect(throws: JSONParseError.tooManyValues(limit: 9)) {
      try JSONParser.parse(Array(mixed.utf8), maxValues: 9)
    }
  }

  @Test func a60KBBodyOf9000KeysIsRefused() {
    let body = Array(wideObject(9_000).utf8)
    #expect(body.count > 60_000)
    #expect(throws: JSONParseError.tooManyMembers(limit: 1_024)) { try JSONParser.parse(body) }
  }

  @Test func deepNestingOfObjectsIsStillRefused() {
    let deep = String(repeating: #"{"a":"#, count: 50_000) + "1" + String(repeating: "}", count: 50_000)
    #expect(throws: JSONParseError.tooDeep(limit: 16)) { try parse(deep) }
    let ok = String(repeating: #"{"a":"#, count: 16) + "1" + String(repeating: "}", count: 16)
    #expect(throws: Never.self) { try parse(ok) }
  }

  @Test func theLimitErrorsNameTheirLimit() {
    #expect(
      JSONParseError.tooManyMembers(limit: 1_024).description
        == "body has an object with more than 1024 members")
    #expect(JSONParseError.tooManyValues(limit: 65_536).description == "body has more than 65536 values")
  }

  /// The duplicate check's work (key-table slots touched) per key stays a small constant as objects widen,
  /// where comparing every key with every other would touch n(n-1)/2 (499,500 for 1,000 keys).
  @Test func duplicateCheckWorkGrowsLinearly() throws {
    for count in [250, 500, 1_000] {
      let (value, probes) = try JSONParser.parseMeasuringWork(Array(wideObject(count).utf8))
      guard case .object(let object) = value else {
        Issue.record("not an object")
        return
      }
      #expect(object.members.count == count)
      #expect(probes >= count && probes <= 8 * count, "\(count) keys: \(probes) probes")
    }
  }

  /// A wide object and then many small ones at the same level reuse one key table; emptying it costs the keys
  /// it held, not its size.
  @Test func manySmallObjectsAfterAWideOneStayLinear() throws {
    let small = Array(repeating: #"{"a":1}"#, count: 20_000).joined(separator: ",")
    let text = "[" + wideObject(1_024) + "," + small + "]"
    let (_, probes) = try JSONParser.parseMeasuringWork(Array(text.utf8))
    let keys = 1_024 + 20_000
    #expect(probes <= 8 * keys, "\(keys) keys: \(probes) probes")
  }

  @Test func keySetFindsEqualBytesOnly() {
    var set = JSONKeySet()
    let insert = { (set: inout JSONKeySet, key: [UInt8]) in key.withUnsafeBufferPointer { set.insert($0) } }
    for index in 0..<3_000 { #expect(insert(&set, Array("key\(index)".utf8))) }
    #expect(set.count == 3_000)
    for index in [0, 1, 999, 2_999] { #expect(!insert(&set, Array("key\(index)".utf8))) }
    #expect(insert(&set, []))
    #expect(!insert(&set, []))
    #expect(insert(&set, [0xCC, 0x80]))
    #expect(insert(&set, [0xCD, 0x80]))
    set.removeAll()
    #expect(set.count == 0)
    #expect(insert(&set, Array("key0".utf8)))
    #expect(!insert(&set, Array("key0".utf8)))
  }
}
