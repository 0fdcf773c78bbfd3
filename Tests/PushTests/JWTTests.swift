import Foundation
import JSON
import Platform
import TestSupport
import Testing

@testable import Push

/// Keys made with the `openssl` command line, and verification by it: the signer is checked by an
/// independent implementation, not by itself.
@Suite(.serialized) struct JWTTests {
  static let openssl = "/usr/bin/openssl"

  /// A temp dir with rsa.pem / rsa-public.pem (2048) and ec.pem / ec-public.pem (P-256), PKCS#8.
  static let keys: String = {
    let directory = makeSharedDirectory("jwt-keys")
    try! runProgram(
      openssl,
      ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", directory + "/rsa.pem"])
    try! runProgram(
      openssl, ["pkey", "-in", directory + "/rsa.pem", "-pubout", "-out", directory + "/rsa-public.pem"])
    try! runProgram(
      openssl,
      ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", directory + "/ec.pem"])
    try! runProgram(
      openssl, ["pkey", "-in", directory + "/ec.pem", "-pubout", "-out", directory + "/ec-public.pem"])
    try! runProgram(
      openssl,
      [
        "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:secp384r1", "-out",
        directory + "/ec384.pem",
      ])
    return directory
  }()

  static func pem(_ name: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: keys + "/" + name)))
  }

  /// `openssl dgst -sha256 -verify` on the signing input and a DER/PKCS#1 signature.
  static func opensslVerifies(publicKey: String, signingInput: String, signature: [UInt8]) throws -> Bool {
    let directory = try makeTemporaryDirectory("push-verify")
    defer { removeDirectory(directory) }
    try Data(signingInput.utf8).write(to: URL(fileURLWithPath: directory + "/input"))
    try Data(signature).write(to: URL(fileURLWithPath: directory + "/signature"))
    let result = try runProgram(
      openssl,
      [
        "dgst", "-sha256", "-verify", keys + "/" + publicKey, "-signature", directory + "/signature",
        directory + "/input",
      ])
    return result.status == 0 && result.stdout.contains("Verified OK")
  }

  /// JOSE raw r‖s → DER `ECDSA-Sig-Value`, written here independently of the code under test.
  static func der(raw: [UInt8]) -> [UInt8] {
    func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
      var value = Array(bytes.drop { $0 == 0 })
      if value.isEmpty { value = [0] }
      if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
      return [0x02, UInt8(value.count)] + value
    }
    let body = integer(raw[0..<32]) + integer(raw[32..<64])
    return [0x30, UInt8(body.count)] + body
  }

  static func parts(_ jwt: String) throws -> (
    header: JSONObject, claims: JSONObject, input: String, signature: [UInt8]
  ) {
    let pieces = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    try #require(pieces.count == 3)
    #expect(!jwt.contains("=") && !jwt.contains("+") && !jwt.contains("/"))
    let header = try parseObject(try #require(Base64URL.decode(pieces[0])))
    let claims = try parseObject(try #require(Base64URL.decode(pieces[1])))
    return (header, claims, pieces[0] + "." + pieces[1], try #require(Base64URL.decode(pieces[2])))
  }

  @Test func base64URLRoundTripsWithoutPadding() {
    for length in 0..<40 {
      let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) }
      let text = Base64URL.encode(bytes)
      #expect(!text.contains("="))
      #expect(Base64URL.decode(text) == bytes)
    }
    #expect(Base64URL.encode(Array("any carnal pleas".utf8)) == "YW55IGNhcm5hbCBwbGVhcw")
    #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
  }

  @Test func serviceAccountAssertionIsRS256AndOpenSSLVerifiesIt() throws {
    let pemText = String(decoding: try Self.pem("rsa.pem"), as: UTF8.self)
    let json = JSONWriterHelper.serviceAccount(pem: pemText, tokenURI: "https://127.0.0.1:9/token")
    let account = try ServiceAccount(json: Array(json.utf8))
    let key = try SigningKey(pem: Array(account.privateKeyPEM.utf8), algorithm: .rs256)
    let jwt = try JWT.serviceAccountAssertion(account: account, key: key, issuedAt: 1_700_000_000)
    let (header, claims, input, signature) = try Self.parts(jwt)
    #expect(string(header["alg"]) == "RS256")
    #expect(string(header["typ"]) == "JWT")
    #expect(string(header["kid"]) == "0123456789abcdef0123456789abcdef01234567")
    #expect(string(claims["iss"]) == "push@example.iam.gserviceaccount.com")
    #expect(string(claims["scope"]) == "https://www.googleapis.com/auth/firebase.messaging")
    #expect(string(claims["aud"]) == "https://127.0.0.1:9/token")
    guard case .number(let iat)? = claims["iat"], case .number(let exp)? = claims["exp"] else {
      throw TestFailure("iat/exp are not numbers")
    }
    #expect(iat.int64 == 1_700_000_000)
    #expect(exp.int64 == 1_700_003_600)
    #expect(signature.count == 256)
    #expect(try Self.opensslVerifies(publicKey: "rsa-public.pem", signingInput: input, signature: signature))
    var tampered = signature
    tampered[10] ^= 1
    #expect(try !Self.opensslVerifies(publicKey: "rsa-public.pem", signingInput: input, signature: tampered))
  }

  @Test func apnsTokenIsES256WithA64ByteRawSignatureOpenSSLVerifies() throws {
    let key = try SigningKey(pem: try Self.pem("ec.pem"), algorithm: .es256)
    let jwt = try JWT.apnsProviderToken(
      keyID: "TESTKEY123", teamID: "TEAM123456", key: key, issuedAt: 1_700_000_000)
    let (header, claims, input, signature) = try Self.parts(jwt)
    #expect(header.keys.sorted() == ["alg", "kid"])
    #expect(string(header["alg"]) == "ES256")
    #expect(string(header["kid"]) == "TESTKEY123")
    #expect(claims.keys.sorted() == ["iat", "iss"])
    #expect(string(claims["iss"]) == "TEAM123456")
    #expect(signature.count == 64)
    #expect(
      try Self.opensslVerifies(
        publicKey: "ec-public.pem", signingInput: input, signature: Self.der(raw: signature)))
    // Randomised signatures: two signings differ, both verify.
    let again = try Self.parts(
      try JWT.apnsProviderToken(keyID: "TESTKEY123", teamID: "TEAM123456", key: key, issuedAt: 1_700_000_000))
    #expect(again.signature != signature)
    #expect(
      try Self.opensslVerifies(
        publicKey: "ec-public.pem", signingInput: again.input, signature: Self.der(raw: again.signature)))
  }

  @Test func derSignaturesConvertToPaddedRawComponents() throws {
    // r = 0x01 (short), s = 0x80 followed by 31 bytes of 0x11 (needs a leading zero in DER).
    let s: [UInt8] = [0x80] + Array(repeating: 0x11, count: 31)
    let der: [UInt8] = [0x30, 0x26, 0x02, 0x01, 0x01, 0x02, 0x21, 0x00] + s
    let raw = try SigningKey.rawECDSASignature(der: der)
    #expect(raw == Array(repeating: 0, count: 31) + [0x01] + s)
    #expect(throws: PushError.self) { try SigningKey.rawECDSASignature(der: [0x30, 0x02, 0x05, 0x00]) }
  }

  @Test func keysOfTheWrongKindAreRefused() throws {
    #expect(throws: PushError.self) { try SigningKey(pem: try Self.pem("ec.pem"), algorithm: .rs256) }
    #expect(throws: PushError.self) { try SigningKey(pem: try Self.pem("rsa.pem"), algorithm: .es256) }
    #expect(throws: PushError.self) { try SigningKey(pem: try Self.pem("ec384.pem"), algorithm: .es256) }
    #expect(throws: PushError.self) {
      try SigningKey(pem: Array("-----BEGIN PRIVATE KEY-----\nAAAA\n".utf8), algorithm: .es256)
    }
    #expect(throws: PushError.self) { try SigningKey(pem: [], algorithm: .rs256) }
  }

  @Test func serviceAccountFieldsAreCheckedByName() throws {
    let good = JWTWriterHelperInputs.minimal
    let account = try ServiceAccount(json: Array(good.utf8))
    #expect(account.tokenURI == "https://oauth2.googleapis.com/token")
    #expect(account.projectID == "p")
    for (broken, mentions) in [
      (good.replacingOccurrences(of: #""client_email":"e","#, with: ""), "client_email"),
      (
        good.replacingOccurrences(of: #""type":"service_account""#, with: #""type":"authorized_user""#),
        "type"
      ),
      (good.replacingOccurrences(of: #""project_id":"p""#, with: #""project_id":7"#), "project_id"),
      ("[1]", "object"), ("{", "JSON"),
    ] {
      do {
        _ = try ServiceAccount(json: Array(broken.utf8))
        Issue.record("accepted: \(broken)")
      } catch {
        #expect(error.description.contains(mentions), "\(error)")
      }
    }
  }
}

enum JWTWriterHelperInputs {
  static let minimal =
    #"{"type":"service_account","project_id":"p","private_key_id":"k","private_key":"x","client_email":"e","client_id":"1"}"#
}

enum JSONWriterHelper {
  /// A service-account file as Google writes them (the PEM with `\n` escapes).
  static func serviceAccount(pem: String, tokenURI: String) -> String {
    var writer = JSONWriter()
    writer.beginObject()
    for (key, value) in [
      ("type", "service_account"), ("project_id", "aprs-cloud-test"),
      ("private_key_id", "0123456789abcdef0123456789abcdef01234567"), ("private_key", pem),
      ("client_email", "push@example.iam.gserviceaccount.com"), ("token_uri", tokenURI),
    ] {
      writer.key(key)
      writer.string(value)
    }
    writer.endObject()
    return writer.string
  }
}
