import COpenSSL
import Platform

/// A station key (docs/protocol.md "Owned stations"): 32 random bytes from OpenSSL's CSPRNG (`RAND_bytes`), as unpadded
/// base64url text (43 characters). The store keeps only the SHA-256 of the text (``hash``); a presented key is
/// compared with it in constant time (`CRYPTO_memcmp`), so timing says nothing about how much of a guess matched.
struct StationKey: Sendable, Equatable {
  /// Random bytes in a key: 256 bits.
  static let byteCount = 32
  /// The length of a key's text (base64url of 32 bytes, unpadded).
  static let textLength = 43

  /// The key as clients send it.
  let text: String

  /// A new random key.
  static func generate() -> StationKey {
    var bytes = [UInt8](repeating: 0, count: byteCount)
    let ok = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(byteCount)) }
    precondition(ok == 1, "RAND_bytes failed: no secure randomness for a station key")
    return StationKey(text: Base64URL.encode(bytes))
  }

  /// The presented `text` as a key, or nil when it cannot be one (wrong length or alphabet): such a key is
  /// wrong without looking anything up.
  init?(presented text: String) {
    guard text.utf8.count == Self.textLength, let bytes = Base64URL.decode(text),
      bytes.count == Self.byteCount
    else { return nil }
    self.text = text
  }

  private init(text: String) { self.text = text }

  /// The lower-case hex SHA-256 of the key's text: what the store keeps (`stations.claim_key_hash`).
  var hash: String { SHA256.hex(text) }

  /// Whether this key's hash is `storedHash`, compared in constant time.
  func matches(_ storedHash: String) -> Bool { SHA256.sameDigest(hash, storedHash) }
}
