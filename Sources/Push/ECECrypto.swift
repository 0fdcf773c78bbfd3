import COpenSSL

/// P-256 keys for Web Push (RFC 8291's ECDH, RFC 8292's VAPID identity) through OpenSSL's EVP interface.
///
/// With `ECECrypto`, this file holds all the pointer work of the Web Push encryption (besides `Curl.swift` and
/// `SigningKey.swift`); everything built on it (`WebPushEncryption`, `VAPID`) is plain Swift over byte arrays.
/// Points cross the boundary as 65-byte uncompressed encodings (0x04, x, y), wrapped in the fixed DER
/// `SubjectPublicKeyInfo` prefix of P-256 so that OpenSSL's decoder checks them (a point off the curve is
/// refused there).
final class P256Key {
  /// The DER of `SubjectPublicKeyInfo { id-ecPublicKey, prime256v1 }` up to the point's BIT STRING contents.
  static let publicKeyPrefix: [UInt8] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, 0x86,
    0x48,
    0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
  ]

  private let key: OpaquePointer
  /// Whether the key has its private half.
  let isPrivate: Bool

  private init(key: OpaquePointer, isPrivate: Bool) {
    self.key = key
    self.isPrivate = isPrivate
  }

  deinit {
    EVP_PKEY_free(key)
  }

  /// A fresh key pair from OpenSSL's random generator.
  static func generate() throws(PushError) -> P256Key {
    guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw PushError("out of memory") }
    defer { EVP_PKEY_CTX_free(context) }
    var generated: OpaquePointer?
    guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
      EVP_PKEY_keygen(context, &generated) == 1, let generated
    else {
      throw PushError("cannot generate a P-256 key (\(OpenSSLError.last()))")
    }
    return P256Key(key: generated, isPrivate: true)
  }

  /// The public key of a 65-byte uncompressed point; throws when it is not a point on P-256.
  static func publicKey(_ point: [UInt8]) throws(PushError) -> P256Key {
    guard point.count == 65, point[0] == 0x04 else {
      throw PushError("not a 65-byte uncompressed P-256 point")
    }
    let der = publicKeyPrefix + point
    let decoded: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
      var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
      return d2i_PUBKEY(nil, &cursor, buffer.count)
    }
    guard let decoded else {
      ERR_clear_error()
      throw PushError("not a point on P-256")
    }
    return P256Key(key: decoded, isPrivate: false)
  }

  /// Whether `point` is a 65-byte uncompressed point on P-256.
  static func isValidPoint(_ point: [UInt8]) -> Bool {
    (try? publicKey(point)) != nil
  }

  /// The key pair of a raw 32-byte private scalar (test vectors); the public key is computed from it.
  static func privateKey(scalar: [UInt8]) throws(PushError) -> P256Key {
    guard scalar.count == 32 else { throw PushError("a P-256 private key is 32 bytes") }
    // RFC 5915 ECPrivateKey { version 1, privateKey, parameters [0] prime256v1 } without the public key.
    let der: [UInt8] =
      [0x30, 0x31, 0x02, 0x01, 0x01, 0x04, 0x20] + scalar
      + [0xA0, 0x0A, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
    let decoded: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
      var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
      return d2i_PrivateKey(EVP_PKEY_EC, nil, &cursor, buffer.count)
    }
    guard let decoded else { throw PushError("not a P-256 private key (\(OpenSSLError.last()))") }
    return P256Key(key: decoded, isPrivate: true)
  }

  /// A PEM private key (PKCS#8 or SEC 1) that must be on P-256.
  static func privateKey(pem: [UInt8]) throws(PushError) -> P256Key {
    guard !pem.isEmpty, pem.count < Int(Int32.max) else { throw PushError("the key is empty") }
    let loaded: OpaquePointer? = pem.withUnsafeBytes { buffer in
      guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
      defer { BIO_free(bio) }
      return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
    }
    guard let loaded else { throw PushError("not a PEM private key (\(OpenSSLError.last()))") }
    let key = P256Key(key: loaded, isPrivate: true)
    guard EVP_PKEY_get_base_id(loaded) == EVP_PKEY_EC, (try? key.publicKey()) != nil else {
      throw PushError("expected an EC P-256 private key")
    }
    return key
  }

  /// The public key as a 65-byte uncompressed point.
  func publicKey() throws(PushError) -> [UInt8] {
    let length = i2d_PUBKEY(key, nil)
    guard length == Int32(P256Key.publicKeyPrefix.count + 65) else {
      throw PushError("not a P-256 key with an uncompressed point")
    }
    var der = [UInt8](repeating: 0, count: Int(length))
    let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
      var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
      return i2d_PUBKEY(key, &cursor)
    }
    guard written == length, der.starts(with: P256Key.publicKeyPrefix) else {
      throw PushError("not a P-256 key with an uncompressed point")
    }
    return Array(der.suffix(65))
  }

  /// The private key as PEM PKCS#8 (`-----BEGIN PRIVATE KEY-----`).
  func privateKeyPEM() throws(PushError) -> [UInt8] {
    guard isPrivate, let bio = BIO_new(BIO_s_mem()) else { throw PushError("no private key to write") }
    defer { BIO_free(bio) }
    guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else {
      throw PushError("cannot write the key as PEM (\(OpenSSLError.last()))")
    }
    let pending = Int(BIO_ctrl_pending(bio))
    var pem = [UInt8](repeating: 0, count: pending)
    let read = pem.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32($0.count)) }
    guard read == Int32(pending) else { throw PushError("cannot read the PEM back") }
    return pem
  }

  /// The ECDH shared secret (32 bytes: the x coordinate) of this private key and `peer`'s public key.
  func sharedSecret(with peer: P256Key) throws(PushError) -> [UInt8] {
    guard isPrivate, let context = EVP_PKEY_CTX_new(key, nil) else {
      throw PushError("no private key for ECDH")
    }
    defer { EVP_PKEY_CTX_free(context) }
    var length = 0
    guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, peer.key) == 1,
      EVP_PKEY_derive(context, nil, &length) == 1, length == 32
    else {
      throw PushError("ECDH failed (\(OpenSSLError.last()))")
    }
    var secret = [UInt8](repeating: 0, count: length)
    guard EVP_PKEY_derive(context, &secret, &length) == 1, length == 32 else {
      throw PushError("ECDH failed (\(OpenSSLError.last()))")
    }
    return secret
  }
}

/// HMAC-SHA-256, AES-128-GCM and random bytes from OpenSSL, over byte arrays.
enum ECECrypto {
  /// Bytes of an AES-128-GCM tag.
  static let tagBytes = 16

  /// HMAC-SHA-256 of `data` under `key` (32 bytes).
  static func hmacSHA256(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
    var mac = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    let done = mac.withUnsafeMutableBufferPointer { output in
      HMAC(EVP_sha256(), key, Int32(key.count), data, data.count, output.baseAddress, &length) != nil
    }
    precondition(done && length == 32, "HMAC-SHA-256 failed")
    return mac
  }

  /// AES-128-GCM of `plaintext` under a 16-byte key and a 12-byte nonce: the ciphertext followed by the 16-byte tag.
  static func seal(key: [UInt8], nonce: [UInt8], _ plaintext: [UInt8]) throws(PushError) -> [UInt8] {
    guard key.count == 16, nonce.count == 12 else {
      throw PushError("AES-128-GCM needs a 16-byte key, 12-byte nonce")
    }
    guard let context = EVP_CIPHER_CTX_new() else { throw PushError("out of memory") }
    defer { EVP_CIPHER_CTX_free(context) }
    var output = [UInt8](repeating: 0, count: plaintext.count + tagBytes)
    var written: Int32 = 0
    var final: Int32 = 0
    let ok = output.withUnsafeMutableBufferPointer { buffer -> Bool in
      guard let base = buffer.baseAddress,
        EVP_EncryptInit_ex(context, EVP_aes_128_gcm(), nil, key, nonce) == 1,
        EVP_EncryptUpdate(context, base, &written, plaintext, Int32(plaintext.count)) == 1,
        EVP_EncryptFinal_ex(context, base + Int(written), &final) == 1,
        Int(written + final) == plaintext.count
      else { return false }
      return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(tagBytes), base + plaintext.count) == 1
    }
    guard ok else { throw PushError("AES-128-GCM encryption failed (\(OpenSSLError.last()))") }
    return output
  }

  /// The plaintext of `sealed` (ciphertext and tag) under a 16-byte key and 12-byte nonce; nil when the tag does
  /// not verify.
  static func open(key: [UInt8], nonce: [UInt8], _ sealed: [UInt8]) -> [UInt8]? {
    guard key.count == 16, nonce.count == 12, sealed.count >= tagBytes,
      let context = EVP_CIPHER_CTX_new()
    else { return nil }
    defer { EVP_CIPHER_CTX_free(context) }
    let cipherCount = sealed.count - tagBytes
    var tag = Array(sealed[cipherCount...])
    var output = [UInt8](repeating: 0, count: max(1, cipherCount))
    var written: Int32 = 0
    var final: Int32 = 0
    let ok = output.withUnsafeMutableBufferPointer { buffer -> Bool in
      guard let base = buffer.baseAddress,
        EVP_DecryptInit_ex(context, EVP_aes_128_gcm(), nil, key, nonce) == 1,
        EVP_DecryptUpdate(context, base, &written, sealed, Int32(cipherCount)) == 1,
        EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagBytes), &tag) == 1
      else { return false }
      return EVP_DecryptFinal_ex(context, base + Int(written), &final) == 1
    }
    ERR_clear_error()
    guard ok, Int(written + final) == cipherCount else { return nil }
    return Array(output.prefix(cipherCount))
  }

  /// `count` bytes from OpenSSL's CSPRNG.
  static func randomBytes(_ count: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    let ok = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
    precondition(ok == 1, "RAND_bytes failed")
    return bytes
  }
}
