/// A registered station: a base callsign plus an SSID, as docs/protocol.md "Identity" defines it.
///
/// The base is upper case, 1–9 characters of `[A-Z0-9]`; the SSID is 0–15; ``description`` (`CALL` or
/// `CALL-SSID`) is at most 9 characters. Values can only be made through the validating initialisers, so a
/// `StationAddress` is always valid.
public struct StationAddress: Hashable, Sendable, CustomStringConvertible {
  /// The base callsign, upper case, 1–9 of `[A-Z0-9]`.
  public let base: String
  /// The secondary station identifier, 0–15.
  public let ssid: Int

  /// The longest base callsign.
  public static let maximumBaseLength = 9
  /// The longest station address, `CALL-SSID` together.
  public static let maximumAddressLength = 9
  /// The largest SSID.
  public static let maximumSSID = 15

  /// `CALL` when ``ssid`` is 0, else `CALL-SSID`: the form APRS-IS uses for addressees and sources.
  public var description: String { ssid == 0 ? base : "\(base)-\(ssid)" }

  /// Parses `CALL` or `CALL-N` in any case, trimming surrounding whitespace.
  ///
  /// `"n0call-7"` gives base `N0CALL`, SSID 7; `"N0CALL-0"` is the same as `"N0CALL"`.
  /// - Throws: ``CallsignError`` saying what is wrong.
  public init(parsing text: some StringProtocol) throws(CallsignError) {
    let parts = try Self.split(Array(text.utf8))
    try self.init(validatedBase: parts.base, ssid: parts.ssid ?? 0)
  }

  /// Builds an address from a base callsign and an SSID, as the /v1 API receives them.
  ///
  /// The base is trimmed and upper-cased. It may itself carry `-N` (curl users send `callsign:"N0CALL-7"`
  /// without `ssid`): that SSID is used when `ssid` is 0 or equal to it; a different non-zero `ssid` is
  /// ``CallsignError/ssidConflict``.
  /// - Throws: ``CallsignError`` saying what is wrong.
  public init(base: some StringProtocol, ssid: Int) throws(CallsignError) {
    guard ssid >= 0 && ssid <= Self.maximumSSID else { throw .badSSID }
    let parts = try Self.split(Array(base.utf8))
    var effective = ssid
    if let carried = parts.ssid {
      guard ssid == 0 || ssid == carried else { throw .ssidConflict }
      effective = carried
    }
    try self.init(validatedBase: parts.base, ssid: effective)
  }

  /// The last step of both initialisers: `base` is already upper-case `[A-Z0-9]{1,9}`.
  private init(validatedBase: [UInt8], ssid: Int) throws(CallsignError) {
    let ssidLength = ssid == 0 ? 0 : (ssid < 10 ? 2 : 3)
    guard validatedBase.count + ssidLength <= Self.maximumAddressLength else { throw .addressTooLong }
    self.base = String(decoding: validatedBase, as: UTF8.self)
    self.ssid = ssid
  }

  /// `address` trimmed of whitespace and upper-cased (ASCII letters only), with a final SSID `-0` dropped:
  /// `n0call-0` → `N0CALL`. APRS names the station without an SSID either way (`N0CALL-0` is `N0CALL`), so
  /// routing, to-self and dedup compare calls in this form. Anything else is kept as it is (`N0CALL-00`,
  /// `-0` alone).
  public static func canonical(_ address: some StringProtocol) -> String {
    let bytes = Array(address.utf8)
    var lower = 0
    var upper = bytes.count
    while lower < upper && ASCII.isWhitespace(bytes[lower]) { lower += 1 }
    while upper > lower && ASCII.isWhitespace(bytes[upper - 1]) { upper -= 1 }
    let kept = bytes.withUnsafeBufferPointer { dropsZeroSSID($0, lower..<upper) } ? upper - 2 : upper
    return String(decoding: bytes[lower..<kept].lazy.map(ASCII.upper), as: UTF8.self)
  }

  /// Whether `buffer[range]` ends in `-0` after at least one other character that is not `-`: the SSID 0 that
  /// names the bare call.
  static func dropsZeroSSID(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
    let end = range.upperBound
    return range.count >= 3 && buffer[end - 1] == ASCII.zero && buffer[end - 2] == ASCII.hyphen
      && buffer[end - 3] != ASCII.hyphen
  }

  /// Trims, upper-cases and validates `CALL[-N]`; returns the base bytes and the SSID if one was written.
  private static func split(_ bytes: [UInt8]) throws(CallsignError) -> (base: [UInt8], ssid: Int?) {
    var lower = 0
    var upper = bytes.count
    while lower < upper && ASCII.isWhitespace(bytes[lower]) { lower += 1 }
    while upper > lower && ASCII.isWhitespace(bytes[upper - 1]) { upper -= 1 }
    guard lower < upper else { throw .empty }

    var base: [UInt8] = []
    base.reserveCapacity(min(upper - lower, maximumBaseLength + 1))
    var index = lower
    while index < upper && bytes[index] != ASCII.hyphen {
      let byte = ASCII.upper(bytes[index])
      guard ASCII.isDigit(byte) || ASCII.isUpper(byte) else { throw .invalidCharacter }
      base.append(byte)
      index += 1
    }
    guard !base.isEmpty else { throw .empty }
    guard base.count <= maximumBaseLength else { throw .tooLong }
    guard index < upper else { return (base, nil) }

    // `-N`: one or two digits, no leading zero except `0` itself, at most 15.
    let digits = bytes[(index + 1)..<upper]
    guard (1...2).contains(digits.count), digits.allSatisfy(ASCII.isDigit) else { throw .badSSID }
    guard digits.count == 1 || digits.first != ASCII.zero else { throw .badSSID }
    let value = digits.reduce(0) { $0 * 10 + Int($1 - ASCII.zero) }
    guard value <= maximumSSID else { throw .badSSID }
    return (base, value)
  }
}
