/// A pattern of bulletin addressees (`BLN*`, `BLN?WX`, `BLN3`): `?` matches one character, `*` any run (also
/// none). Patterns are upper case, 3–9 characters, start with `BLN`, and hold only letters, digits, `?` and `*`:
/// APRS101 ch. 14 bulletins are `BLN0`–`BLN9`, announcements `BLNA`–`BLNZ`, group bulletins `BLN<n><group>`.
public struct BulletinPattern: Hashable, Sendable, CustomStringConvertible {
  /// The pattern as given, upper case.
  public let text: String
  private let bytes: [UInt8]

  /// Why a pattern was refused.
  public enum Problem: Error, Equatable, Sendable {
    case empty
    case tooLong
    case notBulletin
    case badCharacter
  }

  /// Validates `pattern` (case-insensitive).
  public init(_ pattern: String) throws(Problem) {
    let upper = pattern.uppercased()
    let bytes = Array(upper.utf8)
    guard !bytes.isEmpty else { throw .empty }
    guard bytes.count <= StationAddress.maximumAddressLength else { throw .tooLong }
    guard bytes.starts(with: Array("BLN".utf8)) else { throw .notBulletin }
    for byte in bytes {
      guard
        ASCII.isLetter(byte) || ASCII.isDigit(byte) || byte == ASCII.questionMark || byte == ASCII.asterisk
      else { throw .badCharacter }
    }
    self.text = upper
    self.bytes = bytes
  }

  public var description: String { text }

  /// Whether the pattern matches `addressee` (upper case, as ``AddressedPacket/addressee``).
  public func matches(_ addressee: String) -> Bool {
    Self.matches(bytes[...], Array(addressee.utf8)[...])
  }

  /// Glob match with `?` and `*`; iterative with one backtrack point (linear for the 9-character addressees).
  static func matches(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
    var p = pattern.startIndex
    var t = text.startIndex
    var star: Int?
    var resume = t
    while t < text.endIndex {
      if p < pattern.endIndex && (pattern[p] == ASCII.questionMark || pattern[p] == text[t]) {
        p += 1
        t += 1
      } else if p < pattern.endIndex && pattern[p] == ASCII.asterisk {
        star = p
        p += 1
        resume = t
      } else if let star {
        p = star + 1
        resume += 1
        t = resume
      } else {
        return false
      }
    }
    while p < pattern.endIndex && pattern[p] == ASCII.asterisk { p += 1 }
    return p == pattern.endIndex
  }

  /// The shortest prefix before the first wildcard (`BLN` for `BLN?WX`): what an APRS-IS `g/` filter entry
  /// with `*` needs to let every match through.
  public var literalPrefix: String {
    String(decoding: bytes.prefix { $0 != ASCII.questionMark && $0 != ASCII.asterisk }, as: UTF8.self)
  }

  /// Whether the pattern has no wildcard (one exact addressee).
  public var isExact: Bool { !bytes.contains(ASCII.questionMark) && !bytes.contains(ASCII.asterisk) }
}
