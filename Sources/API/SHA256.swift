import COpenSSL

/// SHA-256 and HMAC-SHA256 through OpenSSL; the only pointer work in the API module.
enum SHA256 {
  /// The lowercase hex digest of `text`'s UTF-8 bytes.
  static func hex(_ text: String) -> String {
    var digest = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    var bytes = Array(text.utf8)
    let ok = bytes.withUnsafeMutableBytes { input in
      digest.withUnsafeMutableBufferPointer { output in
        EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, EVP_sha256(), nil)
      }
    }
    precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed")
    return hex(digest)
  }

  /// The lowercase hex HMAC-SHA256 of `message` under `key`, both as UTF-8 (a claim code's stored form:
  /// `ClaimCodeCheck`).
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
    return hex(digest)
  }

  /// Whether two hex digests are the same, compared in constant time (OpenSSL's `CRYPTO_memcmp`): a stored hash
  /// and one computed from what a client presented (a station key, a claim code).
  static func sameDigest(_ computed: String, _ stored: String) -> Bool {
    let mine = Array(computed.utf8)
    let theirs = Array(stored.utf8)
    guard mine.count == theirs.count else { return false }
    return mine.withUnsafeBytes { a in
      theirs.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0 }
    }
  }

  private static func hex(_ digest: [UInt8]) -> String {
    let hexDigits = Array("0123456789abcdef".utf8)
    var hex = [UInt8]()
    hex.reserveCapacity(digest.count * 2)
    for byte in digest {
      hex.append(hexDigits[Int(byte >> 4)])
      hex.append(hexDigits[Int(byte & 0xF)])
    }
    return String(decoding: hex, as: UTF8.self)
  }
}
