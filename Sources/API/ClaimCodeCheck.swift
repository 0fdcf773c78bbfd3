import COpenSSL
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
    let computed = Array(hmacHex(key: code.salt, digits).utf8)
    let stored = Array(code.codeHash.utf8)
    guard computed.count == stored.count else { return false }
    var difference: UInt8 = 0
    for index in computed.indices { difference |= computed[index] ^ stored[index] }
    return difference == 0
  }

  /// The lower-case hex HMAC-SHA256 of `message` under `key` (both as UTF-8).
  static func hmacHex(key: String, _ message: String) -> String {
    let keyBytes = Array(key.utf8)
    let data = Array(message.utf8)
    var digest = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    let ok = digest.withUnsafeMutableBufferPointer { output in
      HMAC(EVP_sha256(), keyBytes, Int32(keyBytes.count), data, data.count, output.baseAddress, &length)
        != nil
    }
    precondition(ok && length == 32, "HMAC(SHA-256) failed")
    return digest.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}
