import COpenSSL

/// A private key that signs JWTs: RS256 (the FCM service account) or ES256 (the APNs `.p8`).
///
/// This file and `Curl.swift` are the only places in the module that touch C pointers. The key
/// is an OpenSSL `EVP_PKEY` loaded from PEM (PKCS#8, as Google and Apple ship them); signing
/// goes through the EVP digest-sign API with SHA-256. ES256 signatures come out of OpenSSL as
/// DER (about 70 bytes) and are converted to JOSE's raw `r‖s` (64 bytes).
final class SigningKey {
  /// The JWS algorithm the key signs with.
  enum Algorithm: String, Sendable {
    case rs256 = "RS256"
    case es256 = "ES256"
  }

  let algorithm: Algorithm
  private let key: OpaquePointer

  /// Loads a PEM private key that must suit `algorithm` (an RSA key for RS256, a P-256 EC key
  /// for ES256).
  init(pem: [UInt8], algorithm: Algorithm) throws(PushError) {
    self.algorithm = algorithm
    guard !pem.isEmpty, pem.count < Int(Int32.max) else { throw PushError("the key is empty") }
    let loaded: OpaquePointer? = pem.withUnsafeBytes { buffer in
      guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
      defer { BIO_free(bio) }
      return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
    }
    guard let loaded else {
      throw PushError("not a PEM private key (\(OpenSSLError.last()))")
    }
    switch algorithm {
    case .rs256:
      guard EVP_PKEY_get_base_id(loaded) == EVP_PKEY_RSA else {
        EVP_PKEY_free(loaded)
        throw PushError("expected an RSA private key")
      }
      guard EVP_PKEY_get_bits(loaded) >= 2048 else {
        EVP_PKEY_free(loaded)
        throw PushError("the RSA key is shorter than 2048 bits")
      }
    case .es256:
      var name = [CChar](repeating: 0, count: 64)
      var length = 0
      let hasGroup = EVP_PKEY_get_group_name(loaded, &name, name.count, &length) == 1
      let group =
        hasGroup ? String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
      guard EVP_PKEY_get_base_id(loaded) == EVP_PKEY_EC, group == "prime256v1" || group == "P-256" else {
        EVP_PKEY_free(loaded)
        throw PushError("expected an EC P-256 private key (an APNs .p8 auth key)")
      }
    }
    key = loaded
  }

  deinit {
    EVP_PKEY_free(key)
  }

  /// The JWS signature of `message`: PKCS#1 v1.5 for RS256, raw `r‖s` (64 bytes) for ES256.
  func sign(_ message: [UInt8]) throws(PushError) -> [UInt8] {
    guard let context = EVP_MD_CTX_new() else { throw PushError("out of memory") }
    defer { EVP_MD_CTX_free(context) }
    guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else {
      throw PushError("cannot start signing (\(OpenSSLError.last()))")
    }
    var length = 0
    guard EVP_DigestSign(context, nil, &length, message, message.count) == 1, length > 0 else {
      throw PushError("cannot size the signature (\(OpenSSLError.last()))")
    }
    var signature = [UInt8](repeating: 0, count: length)
    guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
      throw PushError("cannot sign (\(OpenSSLError.last()))")
    }
    signature.removeSubrange(length...)
    switch algorithm {
    case .rs256: return signature
    case .es256: return try SigningKey.rawECDSASignature(der: signature)
    }
  }

  /// DER `ECDSA-Sig-Value` → `r‖s`, each left-padded to 32 bytes.
  static func rawECDSASignature(der: [UInt8]) throws(PushError) -> [UInt8] {
    let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
      var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
      return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
    }
    guard let parsed else { throw PushError("OpenSSL returned a malformed ECDSA signature") }
    defer { ECDSA_SIG_free(parsed) }
    var r: OpaquePointer?
    var s: OpaquePointer?
    ECDSA_SIG_get0(parsed, &r, &s)
    var raw = [UInt8](repeating: 0, count: 64)
    let written = raw.withUnsafeMutableBufferPointer { buffer -> Bool in
      guard let base = buffer.baseAddress, let r, let s else { return false }
      return BN_bn2binpad(r, base, 32) == 32 && BN_bn2binpad(s, base + 32, 32) == 32
    }
    guard written else { throw PushError("an ECDSA signature component does not fit 32 bytes") }
    return raw
  }
}
