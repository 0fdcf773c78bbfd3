/// The APRS-IS passcode: the weak hash of a base callsign that APRS-IS (and the /v1 API's `auth`) accepts as
/// proof of a licensed login. docs/protocol.md "Passcode".
public enum Passcode {
  /// The hash's starting value.
  static let seed = 0x73E2

  /// The passcode of `callsign`: upper-cased and trimmed, cut at the first `-`, never truncated.
  ///
  /// Walks the bytes two at a time from `0x73E2`, XORing the first shifted left 8 and then the second (a
  /// missing second counts as 0), and masks with `0x7FFF`. `N0CALL`, `n0call` and `N0CALL-10` all give 13023.
  public static func compute(_ callsign: some StringProtocol) -> Int {
    let bytes = Array(callsign.utf8)
    var lower = 0
    var upper = bytes.count
    while lower < upper && ASCII.isWhitespace(bytes[lower]) { lower += 1 }
    while upper > lower && ASCII.isWhitespace(bytes[upper - 1]) { upper -= 1 }
    if let hyphen = bytes[lower..<upper].firstIndex(of: ASCII.hyphen) { upper = hyphen }

    var hash = seed
    var index = lower
    while index < upper {
      hash ^= Int(ASCII.upper(bytes[index])) << 8
      if index + 1 < upper { hash ^= Int(ASCII.upper(bytes[index + 1])) }
      index += 2
    }
    return hash & 0x7FFF
  }
}
