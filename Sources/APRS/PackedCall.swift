/// A station address (`CALL` or `CALL-SSID`: 1–9 of `-`, `0`–`9`, `A`–`Z`) packed into the low 54 bits of
/// a `UInt64`, so that numeric order is the addresses' byte order and every prefix's addresses form one
/// contiguous range.
///
/// Each character takes 6 bits, the first one in the highest group (bits 53–48): `-` is 1, `0`–`9` are
/// 2–11, `A`–`Z` are 12–37 (ASCII order); groups after the last character are 0. So `N0C` < `N0CALL` <
/// `N0CALL-7` < `N0CB`, and the addresses starting with a prefix of `depth` characters are exactly the
/// keys in `prefix ..< prefix + span(depth)`. A sorted array of keys is therefore a prefix trie
/// (``PrefixTrie``) without any node objects.
enum PackedCall {
  /// The longest address: 9 characters (APRS-IS addressees and sources).
  static let maximumLength = 9
  /// Bits per character.
  static let bitsPerCharacter = 6
  /// The characters, in code order (code = index + 1).
  static let alphabet: [UInt8] = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
  /// The most characters a prefix entry may have before its `*`: aprsc collects at most 9 characters per
  /// entry and skips the character after them, so a `*` after 9 characters would be lost (the entry
  /// would become exact). Shorter prefixes are also what the planner wants.
  static let maximumPrefixLength = 8

  /// The code of an upper-case address character, nil for anything else.
  @inline(__always)
  static func code(of byte: UInt8) -> UInt64? {
    if ASCII.isUpper(byte) { return UInt64(byte - ASCII.upperA) + 12 }
    if ASCII.isDigit(byte) { return UInt64(byte - ASCII.zero) + 2 }
    return byte == ASCII.hyphen ? 1 : nil
  }

  /// The bit position of character `index` (0-based).
  @inline(__always)
  static func shift(_ index: Int) -> UInt64 { UInt64(bitsPerCharacter * (maximumLength - 1 - index)) }

  /// The key of `bytes` (upper case, 1–9 characters of the alphabet), nil when they are not an address.
  static func pack(_ bytes: some Sequence<UInt8>) -> UInt64? {
    var key: UInt64 = 0
    var index = 0
    for byte in bytes {
      guard index < maximumLength, let code = code(of: byte) else { return nil }
      key |= code << shift(index)
      index += 1
    }
    return index == 0 ? nil : key
  }

  /// The key of a station address (always valid: at most 9 characters of the alphabet).
  static func pack(_ station: StationAddress) -> UInt64 {
    pack(station.description.utf8)!
  }

  /// How many keys share a prefix of `depth` characters: the width of its range.
  @inline(__always)
  static func span(depth: Int) -> UInt64 { 1 << UInt64(bitsPerCharacter * (maximumLength - depth)) }

  /// The first `depth` characters of `key`, the rest cleared: the lowest key of that prefix's range.
  @inline(__always)
  static func prefix(_ key: UInt64, depth: Int) -> UInt64 { key & ~(span(depth: depth) - 1) }

  /// The code of character `index` of `key`, 0 past its end.
  @inline(__always)
  static func code(at index: Int, of key: UInt64) -> UInt64 { (key >> shift(index)) & 63 }

  /// The number of characters in `key`.
  static func length(_ key: UInt64) -> Int {
    var length = 0
    while length < maximumLength && code(at: length, of: key) != 0 { length += 1 }
    return length
  }

  /// The key of `CALL-0` for a bare call `CALL` (no SSID) of at most 7 characters: APRS names the same station
  /// either way, so an exact filter entry for `CALL` needs one for `CALL-0` beside it (aprsc's `g/` and `b/`
  /// match exactly, SSID included). Nil for an address with an SSID, and for a call of 8 or 9 characters
  /// (`CALL-0` would not fit the 9-character addressee field).
  static func zeroSSIDAlias(_ key: UInt64) -> UInt64? {
    let length = length(key)
    guard length <= maximumLength - 2 else { return nil }
    for index in 0..<length where code(at: index, of: key) == 1 { return nil }  // a `-`: it has an SSID
    return key | (1 << shift(length)) | (2 << shift(length + 1))  // `-` then `0`
  }

  /// What the exact entries of `key` cost on a filter line: its length plus one separator, and the same for
  /// its `CALL-0` alias (``zeroSSIDAlias(_:)``) when it has one.
  @inline(__always)
  static func entryBytes(_ key: UInt64) -> Int {
    let length = length(key)
    return length + 1 + (zeroSSIDAlias(key) == nil ? 0 : length + 3)
  }

  /// The characters of `key`, as a string.
  static func string(_ key: UInt64) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(maximumLength + 1)
    for index in 0..<maximumLength {
      let code = code(at: index, of: key)
      if code == 0 { break }
      bytes.append(alphabet[Int(code) - 1])
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
