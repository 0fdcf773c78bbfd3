/// A parsed JSON document: what the API decodes request bodies into.
///
/// Objects keep their keys in document order; the parser refuses duplicate keys, so a lookup
/// by key is unambiguous.
public enum JSONValue: Sendable, Equatable {
  case null
  case bool(Bool)
  case number(JSONNumber)
  case string(String)
  case array([JSONValue])
  case object(JSONObject)

  /// A short name of the value's type for error messages ("a string", "an object", …).
  public var typeName: String {
    switch self {
    case .null: "null"
    case .bool: "a boolean"
    case .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }
}

/// A JSON number, kept as its literal text so integers are exact and range checks are honest.
public struct JSONNumber: Sendable, Equatable, CustomStringConvertible {
  /// The number exactly as it appeared in the document.
  public let literal: String

  /// Creates a number from its literal text (which the parser has already validated).
  public init(literal: String) { self.literal = literal }

  /// The value as a 64-bit integer, if it is written as one and fits (`1e3` and `1.0` are not integers).
  public var int64: Int64? { Int64(literal) }

  /// The value as a double (may round).
  public var double: Double? { Double(literal) }

  public var description: String { literal }
}

/// A JSON object: keys in document order, unique.
///
/// Keys are compared by their UTF-8 bytes, as the parser's duplicate check does (RFC 8259 §8.3), not by
/// Swift's Unicode canonical equivalence: `"\u{212A}"` (Kelvin sign) and `"K"` are different keys.
public struct JSONObject: Sendable, Equatable {
  /// The members in document order.
  public private(set) var members: [(key: String, value: JSONValue)]

  /// Creates an object from members whose keys are unique.
  public init(_ members: [(key: String, value: JSONValue)] = []) { self.members = members }

  /// The value for `key` (the same UTF-8 bytes), or `nil` when the key is absent.
  public subscript(key: String) -> JSONValue? {
    for member in members where Self.sameKey(member.key, key) { return member.value }
    return nil
  }

  /// The keys in document order.
  public var keys: [String] { members.map(\.key) }

  public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
    lhs.members.count == rhs.members.count
      && zip(lhs.members, rhs.members).allSatisfy { sameKey($0.key, $1.key) && $0.value == $1.value }
  }

  /// Whether two keys have the same UTF-8 bytes.
  private static func sameKey(_ lhs: String, _ rhs: String) -> Bool {
    lhs.utf8.count == rhs.utf8.count && lhs.utf8.elementsEqual(rhs.utf8)
  }
}
