/// Byte constants and tiny byte predicates shared by the parsers. Internal: callers see only typed APIs.
enum ASCII {
  static let nul: UInt8 = 0x00
  static let tab: UInt8 = 0x09
  static let lf: UInt8 = 0x0A
  static let cr: UInt8 = 0x0D
  static let space: UInt8 = 0x20
  static let hash: UInt8 = 0x23  // #
  static let asterisk: UInt8 = 0x2A  // *
  static let comma: UInt8 = 0x2C  // ,
  static let hyphen: UInt8 = 0x2D  // -
  static let period: UInt8 = 0x2E  // .
  static let zero: UInt8 = 0x30  // 0
  static let nine: UInt8 = 0x39  // 9
  static let colon: UInt8 = 0x3A  // :
  static let greaterThan: UInt8 = 0x3E  // >
  static let questionMark: UInt8 = 0x3F  // ?
  static let upperA: UInt8 = 0x41  // A
  static let upperZ: UInt8 = 0x5A  // Z
  static let underscore: UInt8 = 0x5F  // _
  static let lowerA: UInt8 = 0x61  // a
  static let lowerZ: UInt8 = 0x7A  // z
  static let openBrace: UInt8 = 0x7B  // {
  static let closeBrace: UInt8 = 0x7D  // }
  static let unitSeparator: UInt8 = 0x1F

  @inline(__always)
  static func isDigit(_ byte: UInt8) -> Bool { byte &- zero < 10 }

  @inline(__always)
  static func isUpper(_ byte: UInt8) -> Bool { byte &- upperA < 26 }

  @inline(__always)
  static func isLower(_ byte: UInt8) -> Bool { byte &- lowerA < 26 }

  /// `[A-Za-z]`: clearing bit 5 maps exactly the lower-case letters onto the upper-case ones.
  @inline(__always)
  static func isLetter(_ byte: UInt8) -> Bool { isUpper(byte & 0xDF) }

  /// `[A-Za-z0-9]`.
  @inline(__always)
  static func isAlphanumeric(_ byte: UInt8) -> Bool { isDigit(byte) || isLetter(byte) }

  /// Upper-cases an ASCII letter, leaves every other byte alone.
  @inline(__always)
  static func upper(_ byte: UInt8) -> UInt8 { isLower(byte) ? byte &- 0x20 : byte }

  /// Space, tab, CR, LF, vertical tab, form feed.
  @inline(__always)
  static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || (byte >= tab && byte <= cr) }

  /// Printable ASCII without the space: `!` to `~`.
  @inline(__always)
  static func isGraphic(_ byte: UInt8) -> Bool { byte > space && byte < 0x7F }
}
