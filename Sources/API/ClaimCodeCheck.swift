import Store

/// Checks a claim code as entered against a stored round (``Store/ClaimCode``): the push sender made each code
/// and stored only the lower-case hex HMAC-SHA256, keyed with the salt's text, of its digits.
enum ClaimCodeCheck {
  /// The digits a claim code is.
  static let length = 6

  /// The code's digits as entered, spaces and dashes dropped (`123 456`, `123-456`); nil when they are not
  /// ``length`` ASCII digits.
  static func digits(of entered: String) -> String? {
    let kept = entered.unicodeScalars.filter { $0 != " " && $0 != "-" }
    guard kept.count == length, kept.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
    return String(String.UnicodeScalarView(kept))
  }

  /// Whether `digits` is `code`'s code (compared in constant time).
  static func matches(_ digits: String, _ code: ClaimCode) -> Bool {
    SHA256.sameDigest(SHA256.hmacHex(key: code.salt, digits), code.codeHash)
  }
}
