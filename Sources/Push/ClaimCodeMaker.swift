/// Makes one claim code: six random digits, a random salt, and what is stored of them (docs/design.md "Who may
/// do what"): the lower-case hex HMAC-SHA256, keyed with the salt's text, of the digits. The responder checks a
/// code the same way (`ClaimCodeCheck` in the API module).
struct ClaimCodeMaker {
  /// The digits, for the push's banner only.
  var digits: String
  /// 32 lower-case hex characters.
  var salt: String
  /// HMAC-SHA256(salt, digits), lower-case hex.
  var hash: String

  /// A new code from OpenSSL's random generator.
  static func make() -> ClaimCodeMaker {
    // Rejection sampling: 2^32 is not a multiple of 10^6, so the top of the range would favour low codes.
    var number = UInt32.max
    while number >= 4_294_000_000 {
      number = ECECrypto.randomBytes(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }
    number %= 1_000_000
    let digits = String(number).leftPadded(to: 6)
    let salt = ForwardPayload.hex(ECECrypto.randomBytes(16))
    return ClaimCodeMaker(digits: digits, salt: salt, hash: hash(digits, salt: salt))
  }

  /// The stored form of `digits` under `salt`.
  static func hash(_ digits: String, salt: String) -> String {
    ForwardPayload.hex(ECECrypto.hmacSHA256(key: Array(salt.utf8), Array(digits.utf8)))
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}
