/// Why a document is not acceptable JSON. Every case reads well inside `{"error": …}`.
public enum JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
  case empty
  case unexpectedEnd
  case unexpectedByte(UInt8, offset: Int)
  case invalidUTF8(offset: Int)
  case invalidEscape(offset: Int)
  /// A `\u` escape at `offset` is half of a UTF-16 surrogate pair without its other half (RFC 8259 §8.2: such
  /// a string has no Unicode text).
  case loneSurrogate(offset: Int)
  case controlCharacterInString(offset: Int)
  case invalidNumber(offset: Int)
  /// Objects and arrays nest deeper than `limit` levels.
  case tooDeep(limit: Int)
  /// One object has more than `limit` members.
  case tooManyMembers(limit: Int)
  /// The document has more than `limit` values in all.
  case tooManyValues(limit: Int)
  /// An object has this key twice (the same bytes after unescaping).
  case duplicateKey(String)
  case trailingData(offset: Int)
  case tooLarge(limit: Int)

  public var description: String {
    switch self {
    case .empty: "body is empty; expected a JSON object"
    case .unexpectedEnd: "body is not valid JSON: it ends too early"
    case .unexpectedByte(let byte, let offset):
      byte >= 0x20 && byte < 0x7F
        ? "body is not valid JSON: unexpected '\(Character(Unicode.Scalar(byte)))' at byte \(offset)"
        : "body is not valid JSON: unexpected byte 0x\(String(byte, radix: 16)) at byte \(offset)"
    case .invalidUTF8(let offset): "body is not valid UTF-8 (byte \(offset))"
    case .invalidEscape(let offset): "body is not valid JSON: bad escape sequence at byte \(offset)"
    case .loneSurrogate(let offset):
      "body is not valid JSON: the \\u escape at byte \(offset) is half a UTF-16 surrogate pair without its other half"
    case .controlCharacterInString(let offset):
      "body is not valid JSON: unescaped control character in a string at byte \(offset)"
    case .invalidNumber(let offset): "body is not valid JSON: bad number at byte \(offset)"
    case .tooDeep(let limit): "body nests deeper than \(limit) levels"
    case .tooManyMembers(let limit): "body has an object with more than \(limit) members"
    case .tooManyValues(let limit): "body has more than \(limit) values"
    case .duplicateKey(let key): "body has the key \"\(key.prefix(40))\" more than once"
    case .trailingData(let offset): "body has data after the JSON value (byte \(offset))"
    case .tooLarge(let limit): "body is larger than \(limit) bytes"
    }
  }
}
