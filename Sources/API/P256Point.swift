import COpenSSL

/// Whether 65 bytes are an uncompressed point on P-256 (a Web Push subscription's `p256dh`), by OpenSSL's
/// decoder of a `SubjectPublicKeyInfo`, which refuses a point off the curve. The API module's only other
/// OpenSSL use is `SHA256`.
enum P256Point {
  /// The DER of `SubjectPublicKeyInfo { id-ecPublicKey, prime256v1 }` before the point.
  static let prefix: [UInt8] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, 0x86,
    0x48,
    0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
  ]

  static func isValid(_ point: [UInt8]) -> Bool {
    guard point.count == 65, point[0] == 0x04 else { return false }
    let der = prefix + point
    let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
      var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
      return d2i_PUBKEY(nil, &cursor, buffer.count)
    }
    guard let key else {
      ERR_clear_error()
      return false
    }
    EVP_PKEY_free(key)
    return true
  }
}
