/// A strict RFC 8259 parser for untrusted request bodies, in time linear in the document's size.
///
/// Beyond the grammar it refuses what a server must not guess about: duplicate keys (compared by their
/// unescaped UTF-8 bytes, see ``JSONKeySet``), invalid UTF-8, and anything after the top-level value. It also
/// refuses documents bigger in shape than any caller needs: nesting deeper than `maxDepth`, an object with
/// more than `maxMembers` members, more than `maxValues` values in all. It never traps: every failure is a
/// `JSONParseError`.
public struct JSONParser {
  /// The default nesting limit (levels of objects and arrays); request bodies of the /v1 API nest two levels.
  public static let defaultMaxDepth = 16

  /// The default limit on members of one object. The /v1 API reads fewer than 20 keys and ignores unknown
  /// ones; 1,024 leaves newer apps room while keeping a wide object cheap to check and to look up in.
  public static let defaultMaxMembers = 1_024

  /// The default limit on values in the whole document: every object, array, string, number, `true`,
  /// `false` and `null` counts one (keys do not). A value takes at least two bytes (`0,`), so a 64 KB request
  /// body holds at most 32,768: the cap bounds what larger documents (provider responses, files) may hold.
  public static let defaultMaxValues = 65_536

  /// Parses one JSON document.
  /// - Throws: ``JSONParseError``; `.tooDeep`, `.tooManyMembers` and `.tooManyValues` name the limit passed.
  public static func parse(
    _ bytes: [UInt8], maxDepth: Int = defaultMaxDepth, maxMembers: Int = defaultMaxMembers,
    maxValues: Int = defaultMaxValues
  ) throws(JSONParseError) -> JSONValue {
    try parseMeasuringWork(bytes, maxDepth: maxDepth, maxMembers: maxMembers, maxValues: maxValues).value
  }

  /// ``parse(_:maxDepth:maxMembers:maxValues:)`` that also returns the key-table slots its duplicate checks
  /// inspected (``JSONKeySet/probes``), so tests can check the work grows linearly without timing anything.
  static func parseMeasuringWork(
    _ bytes: [UInt8], maxDepth: Int = defaultMaxDepth, maxMembers: Int = defaultMaxMembers,
    maxValues: Int = defaultMaxValues
  ) throws(JSONParseError) -> (value: JSONValue, keyProbes: Int) {
    let result: Result<(JSONValue, Int), JSONParseError> = bytes.withUnsafeBufferPointer { buffer in
      var parser = JSONParser(
        buffer: buffer, maxDepth: maxDepth, maxMembers: maxMembers, maxValues: maxValues)
      do throws(JSONParseError) {
        let value = try parser.parseDocument()
        return .success((value, parser.keySets.reduce(0) { $0 + $1.probes }))
      } catch {
        return .failure(error)
      }
    }
    return try result.get()
  }

  private let buffer: UnsafeBufferPointer<UInt8>
  private let maxDepth: Int
  private let maxMembers: Int
  private let maxValues: Int
  private var offset = 0
  private var depth = 0
  /// Values started so far, against `maxValues`.
  private var values = 0
  /// The keys of the object open at each nesting level (index `depth - 1`), reused by the next object there.
  private var keySets: [JSONKeySet] = []

  private init(buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int, maxMembers: Int, maxValues: Int) {
    self.buffer = buffer
    self.maxDepth = maxDepth
    self.maxMembers = maxMembers
    self.maxValues = maxValues
  }

  private mutating func parseDocument() throws(JSONParseError) -> JSONValue {
    skipWhitespace()
    if offset == buffer.count { throw .empty }
    let value = try parseValue()
    skipWhitespace()
    if offset != buffer.count { throw .trailingData(offset: offset) }
    return value
  }

  private mutating func skipWhitespace() {
    while offset < buffer.count {
      switch buffer[offset] {
      case 0x20, 0x09, 0x0A, 0x0D: offset += 1
      default: return
      }
    }
  }

  private func peek() throws(JSONParseError) -> UInt8 {
    guard offset < buffer.count else { throw .unexpectedEnd }
    return buffer[offset]
  }

  private mutating func expect(_ literal: StaticString) throws(JSONParseError) {
    let count = literal.utf8CodeUnitCount
    let start = literal.utf8Start
    for index in 0..<count {
      let byte = try peek()
      guard byte == start[index] else { throw .unexpectedByte(byte, offset: offset) }
      offset += 1
    }
  }

  private mutating func parseValue() throws(JSONParseError) -> JSONValue {
    let byte = try peek()
    values += 1
    if values > maxValues { throw .tooManyValues(limit: maxValues) }
    switch byte {
    case UInt8(ascii: "{"): return .object(try parseObject())
    case UInt8(ascii: "["): return .array(try parseArray())
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"):
      try expect("true")
      return .bool(true)
    case UInt8(ascii: "f"):
      try expect("false")
      return .bool(false)
    case UInt8(ascii: "n"):
      try expect("null")
      return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      return .number(try parseNumber())
    default:
      throw .unexpectedByte(byte, offset: offset)
    }
  }

  private mutating func enter() throws(JSONParseError) {
    depth += 1
    if depth > maxDepth { throw .tooDeep(limit: maxDepth) }
    offset += 1
  }

  private mutating func parseObject() throws(JSONParseError) -> JSONObject {
    try enter()
    defer { depth -= 1 }
    let level = depth - 1
    while keySets.count <= level { keySets.append(JSONKeySet()) }
    keySets[level].removeAll()
    var members: [(key: String, value: JSONValue)] = []
    skipWhitespace()
    if try peek() == UInt8(ascii: "}") {
      offset += 1
      return JSONObject(members)
    }
    while true {
      skipWhitespace()
      let byte = try peek()
      guard byte == UInt8(ascii: "\"") else { throw .unexpectedByte(byte, offset: offset) }
      if members.count == maxMembers { throw .tooManyMembers(limit: maxMembers) }
      var key = try parseString()
      // The string holds exactly the unescaped bytes (validated, never normalized).
      let isNew = key.withUTF8 { keySets[level].insert($0) }
      if !isNew { throw .duplicateKey(key) }
      skipWhitespace()
      let colon = try peek()
      guard colon == UInt8(ascii: ":") else { throw .unexpectedByte(colon, offset: offset) }
      offset += 1
      skipWhitespace()
      members.append((key, try parseValue()))
      skipWhitespace()
      let next = try peek()
      offset += 1
      if next == UInt8(ascii: "}") { return JSONObject(members) }
      guard next == UInt8(ascii: ",") else { throw .unexpectedByte(next, offset: offset - 1) }
    }
  }

  private mutating func parseArray() throws(JSONParseError) -> [JSONValue] {
    try enter()
    defer { depth -= 1 }
    var elements: [JSONValue] = []
    skipWhitespace()
    if try peek() == UInt8(ascii: "]") {
      offset += 1
      return elements
    }
    while true {
      skipWhitespace()
      elements.append(try parseValue())
      skipWhitespace()
      let next = try peek()
      offset += 1
      if next == UInt8(ascii: "]") { return elements }
      guard next == UInt8(ascii: ",") else { throw .unexpectedByte(next, offset: offset - 1) }
    }
  }

  private mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
    let start = offset
    if buffer[offset] == UInt8(ascii: "-") { offset += 1 }
    guard offset < buffer.count else { throw .invalidNumber(offset: start) }
    if buffer[offset] == UInt8(ascii: "0") {
      offset += 1
    } else if try scanDigits() == 0 {
      throw .invalidNumber(offset: start)
    }
    if offset < buffer.count, buffer[offset] == UInt8(ascii: ".") {
      offset += 1
      if try scanDigits() == 0 { throw .invalidNumber(offset: start) }
    }
    if offset < buffer.count, buffer[offset] | 0x20 == UInt8(ascii: "e") {
      offset += 1
      if offset < buffer.count, buffer[offset] == UInt8(ascii: "+") || buffer[offset] == UInt8(ascii: "-") {
        offset += 1
      }
      if try scanDigits() == 0 { throw .invalidNumber(offset: start) }
    }
    if offset < buffer.count, isDigit(buffer[offset]) { throw .invalidNumber(offset: start) }
    return JSONNumber(
      literal: String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<offset]), as: UTF8.self))
  }

  private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

  private mutating func scanDigits() throws(JSONParseError) -> Int {
    let start = offset
    while offset < buffer.count, isDigit(buffer[offset]) { offset += 1 }
    return offset - start
  }

  private mutating func parseString() throws(JSONParseError) -> String {
    offset += 1  // the opening quote
    let start = offset
    // Fast path: no escapes.
    while offset < buffer.count {
      let byte = buffer[offset]
      if byte == UInt8(ascii: "\"") {
        let slice = UnsafeBufferPointer(rebasing: buffer[start..<offset])
        guard let string = String(validating: slice, as: UTF8.self) else { throw .invalidUTF8(offset: start) }
        offset += 1
        return string
      }
      if byte == UInt8(ascii: "\\") { break }
      if byte < 0x20 { throw .controlCharacterInString(offset: offset) }
      offset += 1
    }
    guard offset < buffer.count else { throw .unexpectedEnd }
    return try parseEscapedString(from: start)
  }

  private mutating func parseEscapedString(from start: Int) throws(JSONParseError) -> String {
    var bytes = Array(UnsafeBufferPointer(rebasing: buffer[start..<offset]))
    while true {
      let byte = try peek()
      switch byte {
      case UInt8(ascii: "\""):
        offset += 1
        guard let string = String(validating: bytes, as: UTF8.self) else { throw .invalidUTF8(offset: start) }
        return string
      case UInt8(ascii: "\\"):
        offset += 1
        try appendEscape(to: &bytes)
      case 0..<0x20:
        throw .controlCharacterInString(offset: offset)
      default:
        bytes.append(byte)
        offset += 1
      }
    }
  }

  private mutating func appendEscape(to bytes: inout [UInt8]) throws(JSONParseError) {
    let escapeOffset = offset - 1
    let byte = try peek()
    offset += 1
    switch byte {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(byte)
    case UInt8(ascii: "b"): bytes.append(0x08)
    case UInt8(ascii: "f"): bytes.append(0x0C)
    case UInt8(ascii: "n"): bytes.append(0x0A)
    case UInt8(ascii: "r"): bytes.append(0x0D)
    case UInt8(ascii: "t"): bytes.append(0x09)
    case UInt8(ascii: "u"):
      var scalar = try parseHex4(escapeOffset: escapeOffset)
      if (0xD800...0xDBFF).contains(scalar) {
        guard offset + 1 < buffer.count, buffer[offset] == UInt8(ascii: "\\"),
          buffer[offset + 1] == UInt8(ascii: "u")
        else { throw .loneSurrogate(offset: escapeOffset) }
        offset += 2
        let low = try parseHex4(escapeOffset: escapeOffset + 6)
        guard (0xDC00...0xDFFF).contains(low) else { throw .loneSurrogate(offset: escapeOffset) }
        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
      } else if (0xDC00...0xDFFF).contains(scalar) {
        throw .loneSurrogate(offset: escapeOffset)
      }
      guard let unicode = Unicode.Scalar(scalar) else { throw .invalidEscape(offset: escapeOffset) }
      bytes.append(contentsOf: UTF8.encode(unicode)!)
    default:
      throw .invalidEscape(offset: escapeOffset)
    }
  }

  private mutating func parseHex4(escapeOffset: Int) throws(JSONParseError) -> UInt32 {
    var value: UInt32 = 0
    for _ in 0..<4 {
      let byte = try peek()
      let digit: UInt8
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
      default: throw .invalidEscape(offset: escapeOffset)
      }
      value = value << 4 | UInt32(digit)
      offset += 1
    }
    return value
  }
}
