import JSON

/// A request body decoded as a JSON object, with typed field access whose errors name the field.
///
/// Unknown keys are ignored (newer apps may send more); a known key with the wrong type is a 400.
/// `null` counts as absent for optional fields.
struct RequestBody {
  let object: JSONObject

  /// A body over an object already parsed (a member of a larger document, such as an export's settings).
  init(object: JSONObject) { self.object = object }

  /// Parses `bytes`, which must hold one JSON object.
  init(_ bytes: [UInt8]) throws(APIError) {
    let value: JSONValue
    do {
      value = try JSONParser.parse(bytes)
    } catch {
      throw .badRequest(error.description)
    }
    guard case .object(let object) = value else {
      throw .badRequest("body must be a JSON object, not \(value.typeName)")
    }
    self.object = object
  }

  /// The value of `key`, or nil when absent or null.
  private func present(_ key: String) -> JSONValue? {
    switch object[key] {
    case nil, .null?: nil
    case let value?: value
    }
  }

  /// An optional string field.
  func string(_ key: String, maxLength: Int = 256) throws(APIError) -> String? {
    guard let value = present(key) else { return nil }
    guard case .string(let text) = value else {
      throw .badRequest("\(key) must be a string, not \(value.typeName)")
    }
    guard text.utf8.count <= maxLength else {
      throw .badRequest("\(key) is longer than \(maxLength) bytes")
    }
    return text
  }

  /// A required string field.
  func requiredString(_ key: String, maxLength: Int = 256) throws(APIError) -> String {
    guard let text = try string(key, maxLength: maxLength) else { throw .badRequest("\(key) is required") }
    return text
  }

  /// An optional integer field within `range`.
  func int(_ key: String, in range: ClosedRange<Int64>) throws(APIError) -> Int64? {
    guard let value = present(key) else { return nil }
    guard case .number(let number) = value else {
      throw .badRequest("\(key) must be an integer, not \(value.typeName)")
    }
    guard let integer = number.int64 else {
      throw .badRequest("\(key) must be an integer between \(range.lowerBound) and \(range.upperBound)")
    }
    guard range.contains(integer) else {
      throw .badRequest("\(key) must be between \(range.lowerBound) and \(range.upperBound)")
    }
    return integer
  }

  /// An optional boolean field.
  func bool(_ key: String) throws(APIError) -> Bool? {
    guard let value = present(key) else { return nil }
    guard case .bool(let flag) = value else {
      throw .badRequest("\(key) must be true or false, not \(value.typeName)")
    }
    return flag
  }

  /// Whether the key is in the body at all (even as null).
  func contains(_ key: String) -> Bool { object[key] != nil }

  /// The raw value of a key, for fields with a shape of their own (arrays).
  subscript(key: String) -> JSONValue? { present(key) }

  /// `auth`: the passcode as a decimal string (what the app sends) or a JSON number (curl users).
  func passcode() throws(APIError) -> Int {
    guard let value = present("auth") else { throw .badRequest("auth is required (the APRS-IS passcode)") }
    let text: String
    switch value {
    case .string(let string): text = string.trimmingASCIISpaces()
    case .number(let number): text = number.literal
    default: throw .badRequest("auth must be the passcode as a decimal string, not \(value.typeName)")
    }
    guard text.utf8.count <= 8, let code = Int(text), code >= 0 else {
      throw .badRequest("auth must be the passcode as a decimal string")
    }
    return code
  }
}

extension String {
  /// The string without leading and trailing ASCII spaces and tabs.
  func trimmingASCIISpaces() -> String {
    let utf8 = self.utf8
    guard let first = utf8.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }) else { return "" }
    let last = utf8.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })!
    return String(self[first...last])
  }
}
