import Store

/// RFC 8291 message encryption for Web Push: the `aes128gcm` content coding of RFC 8188 with a key from ECDH
/// between a fresh sender key pair and the subscription's `p256dh`, mixed with its `auth` secret. Pure Swift
/// over `P256Key` and `ECECrypto`.
///
/// One record only (RFC 8291 §4): header `salt(16) ‖ rs(4, big-endian) ‖ idlen(1) = 65 ‖ keyid = as_public(65)`,
/// then `AES-128-GCM(CEK, NONCE, plaintext ‖ 0x02)` with its 16-byte tag. The key schedule:
///
///     ecdh_secret = ECDH(as_private, ua_public)
///     IKM   = HKDF(salt: auth_secret, ikm: ecdh_secret, info: "WebPush: info" 0x00 ua_public as_public, L: 32)
///     PRK   = HMAC-SHA-256(salt, IKM)
///     CEK   = HKDF-Expand(PRK, "Content-Encoding: aes128gcm" 0x00, 16)
///     NONCE = HKDF-Expand(PRK, "Content-Encoding: nonce" 0x00, 12)
enum WebPushEncryption {
  /// Bytes of the header: salt, record size, key id length, the sender's public key.
  static let headerBytes = 16 + 4 + 1 + 65
  /// The record size written in the header: RFC 8291's 4096.
  static let recordSize = 4096
  /// The longest plaintext that keeps the whole body within 4096 bytes (RFC 8291 §4: 3993).
  static let maxPlaintextBytes = recordSize - headerBytes - ECECrypto.tagBytes - 1

  /// The encrypted body for a subscription's `keys`. `salt` and `sender` are fresh random values unless given
  /// (tests reproduce RFC 8291's example with its own).
  static func encrypt(
    _ plaintext: [UInt8], for keys: WebPushKeys, salt: [UInt8]? = nil, sender: P256Key? = nil
  ) throws(PushError) -> [UInt8] {
    guard plaintext.count <= maxPlaintextBytes else {
      throw PushError("the push is \(plaintext.count) bytes; at most \(maxPlaintextBytes) fit one record")
    }
    let salt = salt ?? ECECrypto.randomBytes(16)
    guard salt.count == 16 else { throw PushError("the salt must be 16 bytes") }
    let senderKey: P256Key
    if let sender { senderKey = sender } else { senderKey = try P256Key.generate() }
    let senderPublic = try senderKey.publicKey()
    let receiver = try P256Key.publicKey(keys.p256dh)
    let secret = try senderKey.sharedSecret(with: receiver)
    let (key, nonce) = contentKeys(
      secret: secret, auth: keys.auth, receiverPublic: keys.p256dh, senderPublic: senderPublic, salt: salt)
    let sealed = try ECECrypto.seal(key: key, nonce: nonce, plaintext + [0x02])
    var body = salt
    body.reserveCapacity(headerBytes + sealed.count)
    let size = UInt32(recordSize)
    body += [UInt8(size >> 24), UInt8((size >> 16) & 0xFF), UInt8((size >> 8) & 0xFF), UInt8(size & 0xFF)]
    body.append(UInt8(senderPublic.count))
    body += senderPublic
    body += sealed
    return body
  }

  /// The plaintext of a one-record `aes128gcm` body for the subscription whose private key is `receiver` (the
  /// user agent's side: the tests' and the fake's check of what `encrypt` wrote). Throws when the header, the
  /// tag or the padding is wrong.
  static func decrypt(_ body: [UInt8], receiver: P256Key, auth: [UInt8]) throws(PushError) -> [UInt8] {
    guard body.count >= headerBytes + ECECrypto.tagBytes + 1, body[20] == 65 else {
      throw PushError("not an aes128gcm body with a 65-byte key id")
    }
    let salt = Array(body[0..<16])
    let size = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
    let senderPublic = Array(body[21..<86])
    let sealed = Array(body[86...])
    guard sealed.count <= size else { throw PushError("more than one record") }
    let secret = try receiver.sharedSecret(with: try P256Key.publicKey(senderPublic))
    let (key, nonce) = contentKeys(
      secret: secret, auth: auth, receiverPublic: try receiver.publicKey(), senderPublic: senderPublic,
      salt: salt)
    guard var padded = ECECrypto.open(key: key, nonce: nonce, sealed) else {
      throw PushError("the tag does not verify")
    }
    while padded.last == 0 { padded.removeLast() }
    guard padded.last == 0x02 else { throw PushError("no last-record delimiter") }
    padded.removeLast()
    return padded
  }

  /// CEK (16 bytes) and NONCE (12 bytes) of RFC 8291 §3.4 and RFC 8188 §2.2.
  static func contentKeys(
    secret: [UInt8], auth: [UInt8], receiverPublic: [UInt8], senderPublic: [UInt8], salt: [UInt8]
  ) -> (key: [UInt8], nonce: [UInt8]) {
    let keyInfo = Array("WebPush: info".utf8) + [0] + receiverPublic + senderPublic
    let ikm = HKDF.derive(salt: auth, ikm: secret, info: keyInfo, count: 32)
    let prk = HKDF.extract(salt: salt, ikm: ikm)
    let key = HKDF.expand(prk: prk, info: Array("Content-Encoding: aes128gcm".utf8) + [0], count: 16)
    let nonce = HKDF.expand(prk: prk, info: Array("Content-Encoding: nonce".utf8) + [0], count: 12)
    return (key, nonce)
  }
}

/// HKDF with SHA-256 (RFC 5869), for outputs of at most 32 bytes (all RFC 8291 needs).
enum HKDF {
  /// `PRK = HMAC-SHA-256(salt, IKM)`.
  static func extract(salt: [UInt8], ikm: [UInt8]) -> [UInt8] {
    ECECrypto.hmacSHA256(key: salt, ikm)
  }

  /// The first `count` (≤ 32) bytes of `T(1) = HMAC-SHA-256(PRK, info ‖ 0x01)`.
  static func expand(prk: [UInt8], info: [UInt8], count: Int) -> [UInt8] {
    precondition(count <= 32, "HKDF.expand is for one block")
    return Array(ECECrypto.hmacSHA256(key: prk, info + [0x01]).prefix(count))
  }

  /// Extract then expand.
  static func derive(salt: [UInt8], ikm: [UInt8], info: [UInt8], count: Int) -> [UInt8] {
    expand(prk: extract(salt: salt, ikm: ikm), info: info, count: count)
  }
}
