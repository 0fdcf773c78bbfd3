/// Writes compact JSON straight into a byte buffer, the way responses and push payloads are built.
///
/// Commas are placed automatically; the caller only says what comes next:
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject()
/// writer.key("serverTime"); writer.int(1_700_000_000_000)
/// writer.endObject()
/// ```
public struct JSONWriter: Sendable {
  /// The document written so far, UTF-8.
  public private(set) var bytes: [UInt8]
  private var needsComma = false

  /// Starts an empty document, reserving `capacity` bytes.
  public init(capacity: Int = 256) {
    bytes = []
    bytes.reserveCapacity(capacity)
  }

  /// The document as a `String`.
  public var string: String { String(decoding: bytes, as: UTF8.self) }

  private mutating func separate() {
    if needsComma { bytes.append(UInt8(ascii: ",")) }
  }

  /// Opens an object (`{`).
  public mutating func beginObject() {
    separate()
    bytes.append(UInt8(ascii: "{"))
    needsComma = false
  }

  /// Closes the innermost object (`}`).
  public mutating func endObject() {
    bytes.append(UInt8(ascii: "}"))
    needsComma = true
  }

  /// Opens an array (`[`).
  public mutating func beginArray() {
    separate()
    bytes.append(UInt8(ascii: "["))
    needsComma = false
  }

  /// Closes the innermost array (`]`).
  public mutating func endArray() {
    bytes.append(UInt8(ascii: "]"))
    needsComma = true
  }

  /// Writes an object key; the next call writes its value.
  public mutating func key(_ key: String) {
    separate()
    appendQuoted(key)
    bytes.append(UInt8(ascii: ":"))
    needsComma = false
  }

  /// Writes a string value.
  public mutating func string(_ value: String) {
    separate()
    appendQuoted(value)
    needsComma = true
  }

  /// Writes a string value, or `null` when `value` is nil.
  public mutating func stringOrNull(_ value: String?) {
    if let value { string(value) } else { null() }
  }

  /// Writes an integer value.
  public mutating func int<T: BinaryInteger>(_ value: T) {
    separate()
    bytes.append(contentsOf: String(value).utf8)
    needsComma = true
  }

  /// Writes a number with at most `decimals` (0–9) digits after the point, rounded half away from zero, trailing
  /// zeros dropped, never in exponent form (`41.5`, `-81.123456`); `null` for a value that is not finite or whose
  /// magnitude is 1e15 or more (JSON has no infinities, and the digits would not be exact).
  public mutating func fixed(_ value: Double, decimals: Int) {
    let places = min(max(decimals, 0), 9)
    var scale: Int64 = 1
    for _ in 0..<places { scale *= 10 }
    guard value.isFinite, abs(value) < 1e15 else { return null() }
    let scaled = (abs(value) * Double(scale)).rounded(.toNearestOrAwayFromZero)
    guard scaled < 9.2e18 else { return null() }
    let units = Int64(scaled)
    var text = (value < 0 && units != 0 ? "-" : "") + String(units / scale)
    var fraction = units % scale
    if places > 0, fraction != 0 {
      var digits = places
      while fraction % 10 == 0 {
        fraction /= 10
        digits -= 1
      }
      let raw = String(fraction)
      text += "." + String(repeating: "0", count: digits - raw.count) + raw
    }
    separate()
    bytes.append(contentsOf: text.utf8)
    needsComma = true
  }

  /// Writes `true` or `false`.
  public mutating func bool(_ value: Bool) {
    separate()
    bytes.append(contentsOf: (value ? "true" : "false").utf8)
    needsComma = true
  }

  /// Writes `null`.
  public mutating func null() {
    separate()
    bytes.append(contentsOf: "null".utf8)
    needsComma = true
  }

  /// Writes any parsed value (numbers keep their literal text).
  public mutating func value(_ value: JSONValue) {
    switch value {
    case .null: null()
    case .bool(let flag): bool(flag)
    case .string(let text): string(text)
    case .number(let number):
      separate()
      bytes.append(contentsOf: number.literal.utf8)
      needsComma = true
    case .array(let elements):
      beginArray()
      for element in elements { self.value(element) }
      endArray()
    case .object(let object):
      beginObject()
      for member in object.members {
        key(member.key)
        self.value(member.value)
      }
      endObject()
    }
  }

  private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

  private mutating func appendQuoted(_ text: String) {
    bytes.append(UInt8(ascii: "\""))
    var text = text
    text.withUTF8 { utf8 in
      // Copy runs of plain bytes at once; only the bytes JSON requires escaping are handled one by one.
      var runStart = 0
      for index in 0..<utf8.count {
        let byte = utf8[index]
        guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F else {
          continue
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
        appendEscaped(byte)
        runStart = index + 1
      }
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
    }
    bytes.append(UInt8(ascii: "\""))
  }

  private mutating func appendEscaped(_ byte: UInt8) {
    bytes.append(UInt8(ascii: "\\"))
    switch byte {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
    case 0x0A: bytes.append(UInt8(ascii: "n"))
    case 0x0D: bytes.append(UInt8(ascii: "r"))
    case 0x09: bytes.append(UInt8(ascii: "t"))
    default:
      bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
      bytes.append(Self.hexDigits[Int(byte >> 4)])
      bytes.append(Self.hexDigits[Int(byte & 0xF)])
    }
  }
}
