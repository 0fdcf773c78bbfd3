import Foundation
import JSON
import Platform
import Store
import TestSupport
import Testing

@testable import Push

/// RFC 8291 encryption: RFC 8291's own example (Appendix A) byte for byte both ways, every intermediate value of
/// its key schedule, and an independent implementation (http_ece on PyCA cryptography, through
/// `Tests/fakes/webpush_fake.py`) both ways: what we encrypt it decrypts, what it encrypts we decrypt.
@Suite struct WebPushEncryptionTests {
  /// RFC 8291 Appendix A.
  enum RFC {
    static let plaintext = Array("When I grow up, I want to be a watermelon".utf8)
    static let asPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
    static let asPublic =
      "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
    static let uaPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
    static let uaPublic =
      "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let ecdhSecret = "kyrL1jIIOHEzg3sM2ZWRHDRB62YACZhhSlknJ672kSs"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
    static let prkKey = "Snr3JMxaHVDXHWJn5wdC52WjpCtd2EIEGBykDcZW32k"
    static let ikm = "S4lYMb_L0FxCeq0WhDx813KgSYqU26kOyzWUdsXYyrg"
    static let prk = "09_eUZGrsvxChDCGRCdkLiDXrReGOEVeSCdCcPBSJSc"
    static let cek = "oIhVW04MRdy2XN9CiKLxTg"
    static let nonce = "4h_95klXJ5E_qnoN"
    static let body =
      "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8w"
      + "EqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
  }

  static func bytes(_ text: String) -> [UInt8] { Base64URL.decode(text)! }

  static var rfcKeys: WebPushKeys { WebPushKeys(p256dh: bytes(RFC.uaPublic), auth: bytes(RFC.auth))! }

  @Test func reproducesTheRFCExampleByteForByte() throws {
    let sender = try P256Key.privateKey(scalar: Self.bytes(RFC.asPrivate))
    #expect(Base64URL.encode(try sender.publicKey()) == RFC.asPublic)
    let body = try WebPushEncryption.encrypt(
      RFC.plaintext, for: Self.rfcKeys, salt: Self.bytes(RFC.salt), sender: sender)
    #expect(Base64URL.encode(body) == RFC.body)
  }

  @Test func decryptsTheRFCExample() throws {
    let receiver = try P256Key.privateKey(scalar: Self.bytes(RFC.uaPrivate))
    #expect(Base64URL.encode(try receiver.publicKey()) == RFC.uaPublic)
    let plaintext = try WebPushEncryption.decrypt(
      Self.bytes(RFC.body), receiver: receiver, auth: Self.bytes(RFC.auth))
    #expect(plaintext == RFC.plaintext)
  }

  @Test func everyIntermediateValueOfTheKeySchedule() throws {
    let sender = try P256Key.privateKey(scalar: Self.bytes(RFC.asPrivate))
    let receiver = try P256Key.publicKey(Self.bytes(RFC.uaPublic))
    let secret = try sender.sharedSecret(with: receiver)
    #expect(Base64URL.encode(secret) == RFC.ecdhSecret)
    // And the other side agrees.
    let ua = try P256Key.privateKey(scalar: Self.bytes(RFC.uaPrivate))
    #expect(try ua.sharedSecret(with: try P256Key.publicKey(Self.bytes(RFC.asPublic))) == secret)
    let prkKey = HKDF.extract(salt: Self.bytes(RFC.auth), ikm: secret)
    #expect(Base64URL.encode(prkKey) == RFC.prkKey)
    let keyInfo = Array("WebPush: info".utf8) + [0] + Self.bytes(RFC.uaPublic) + Self.bytes(RFC.asPublic)
    let ikm = HKDF.expand(prk: prkKey, info: keyInfo, count: 32)
    #expect(Base64URL.encode(ikm) == RFC.ikm)
    #expect(Base64URL.encode(HKDF.extract(salt: Self.bytes(RFC.salt), ikm: ikm)) == RFC.prk)
    let (key, nonce) = WebPushEncryption.contentKeys(
      secret: secret, auth: Self.bytes(RFC.auth), receiverPublic: Self.bytes(RFC.uaPublic),
      senderPublic: Self.bytes(RFC.asPublic), salt: Self.bytes(RFC.salt))
    #expect(Base64URL.encode(key) == RFC.cek)
    #expect(Base64URL.encode(nonce) == RFC.nonce)
  }

  @Test func roundTripsWithFreshKeysAndRefusesTampering() throws {
    let receiver = try P256Key.generate()
    let auth = ECECrypto.randomBytes(16)
    let keys = try #require(WebPushKeys(p256dh: try receiver.publicKey(), auth: auth))
    for size in [0, 1, 15, 16, 17, 1000, WebPushEncryption.maxPlaintextBytes] {
      let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7) }
      let body = try WebPushEncryption.encrypt(plaintext, for: keys)
      #expect(body.count == WebPushEncryption.headerBytes + size + 1 + 16)
      #expect(body.count <= 4096)
      #expect(Array(body[16..<21]) == [0, 0, 0x10, 0, 65])
      #expect(try WebPushEncryption.decrypt(body, receiver: receiver, auth: auth) == plaintext)
      var tampered = body
      tampered[tampered.count - 1] ^= 1
      #expect(throws: PushError.self) {
        try WebPushEncryption.decrypt(tampered, receiver: receiver, auth: auth)
      }
      #expect(throws: PushError.self) {
        try WebPushEncryption.decrypt(body, receiver: receiver, auth: ECECrypto.randomBytes(16))
      }
    }
    // A fresh salt and sender key for every message.
    let one = try WebPushEncryption.encrypt([1, 2, 3], for: keys)
    let two = try WebPushEncryption.encrypt([1, 2, 3], for: keys)
    #expect(one[0..<16] != two[0..<16])
    #expect(one[21..<86] != two[21..<86])
    #expect(throws: PushError.self) {
      try WebPushEncryption.encrypt(
        [UInt8](repeating: 0, count: WebPushEncryption.maxPlaintextBytes + 1), for: keys)
    }
    #expect(WebPushEncryption.maxPlaintextBytes == 3993)
  }

  @Test func onlyPointsOnTheCurveAreKeys() throws {
    #expect(P256Key.isValidPoint(Self.bytes(RFC.uaPublic)))
    var offCurve = Self.bytes(RFC.uaPublic)
    offCurve[64] ^= 1
    #expect(!P256Key.isValidPoint(offCurve))
    var compressedTag = Self.bytes(RFC.uaPublic)
    compressedTag[0] = 0x02
    #expect(!P256Key.isValidPoint(compressedTag))
    #expect(!P256Key.isValidPoint([0x04] + [UInt8](repeating: 0, count: 64)))
    #expect(!P256Key.isValidPoint(Array(Self.bytes(RFC.uaPublic).prefix(64))))
    // ECDH with an off-curve point is refused, not computed.
    let keys = try #require(WebPushKeys(p256dh: offCurve, auth: Self.bytes(RFC.auth)))
    #expect(throws: PushError.self) { try WebPushEncryption.encrypt([1], for: keys) }
  }

  @Test func generatedKeysSurviveAPEMRoundTrip() throws {
    let key = try P256Key.generate()
    let pem = try key.privateKeyPEM()
    #expect(String(decoding: pem, as: UTF8.self).hasPrefix("-----BEGIN PRIVATE KEY-----"))
    let loaded = try P256Key.privateKey(pem: pem)
    #expect(try loaded.publicKey() == (try key.publicKey()))
    _ = try SigningKey(pem: pem, algorithm: .es256)
    #expect(throws: PushError.self) { try P256Key.privateKey(pem: Array("not a key".utf8)) }
  }

  // MARK: An independent implementation, both ways

  @Test func httpECEDecryptsWhatWeEncrypt() throws {
    let keys = try PythonECE.keypair()
    let subscription = try #require(WebPushKeys(p256dh: keys.p256dh, auth: keys.auth))
    for size in [0, 1, 41, 1000, WebPushEncryption.maxPlaintextBytes] {
      let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }
      let body = try WebPushEncryption.encrypt(plaintext, for: subscription)
      #expect(
        try PythonECE.decrypt(body, privateKey: keys.privateKey, auth: keys.auth) == plaintext, "\(size)")
    }
  }

  @Test func weDecryptWhatHTTPECEEncrypts() throws {
    let receiver = try P256Key.generate()
    let auth = ECECrypto.randomBytes(16)
    // (Not 0: http_ece writes no record at all for empty content.)
    for size in [1, 41, 1000, WebPushEncryption.maxPlaintextBytes] {
      let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
      let body = try PythonECE.encrypt(plaintext, p256dh: try receiver.publicKey(), auth: auth)
      #expect(try WebPushEncryption.decrypt(body, receiver: receiver, auth: auth) == plaintext, "\(size)")
    }
  }

  @Test func httpECEReproducesTheRFCExampleToo() throws {
    let body = try PythonECE.encrypt(
      RFC.plaintext, p256dh: Self.bytes(RFC.uaPublic), auth: Self.bytes(RFC.auth), salt: Self.bytes(RFC.salt),
      senderPrivate: Self.bytes(RFC.asPrivate))
    #expect(Base64URL.encode(body) == RFC.body)
  }
}

/// `Tests/fakes/webpush_fake.py`'s command line: http_ece (PyCA cryptography) from the test venv.
enum PythonECE {
  /// The test venv's python (`make deps-test`).
  static func python() throws -> String {
    let path = packageRoot + "/.build/pyenv-test/bin/python"
    guard FileManager.default.isExecutableFile(atPath: path) else {
      throw TestFailure("\(path) is missing: run `make deps-test` (cryptography and http_ece for the tests)")
    }
    return path
  }

  static let tool = packageRoot + "/Tests/fakes/webpush_fake.py"

  static func run(_ arguments: [String], input: [UInt8] = []) throws -> String {
    let result = try runProgram(try python(), [tool] + arguments, input: Data(input))
    guard result.status == 0 else {
      throw TestFailure("webpush_fake.py \(arguments.first ?? ""): \(result.stderr)")
    }
    return result.stdout
  }

  /// A subscription's key pair and auth secret, made by PyCA cryptography.
  static func keypair() throws -> (privateKey: [UInt8], p256dh: [UInt8], auth: [UInt8]) {
    let object = try parseObject(Array(try run(["keypair"]).utf8))
    guard let key = string(object["private"]).flatMap(Base64URL.decode),
      let p256dh = string(object["p256dh"]).flatMap(Base64URL.decode),
      let auth = string(object["auth"]).flatMap(Base64URL.decode)
    else { throw TestFailure("keypair: \(object)") }
    return (key, p256dh, auth)
  }

  // Values go as `--name=value`: a base64url key may start with `-`, which argparse would take for an option.
  static func decrypt(_ body: [UInt8], privateKey: [UInt8], auth: [UInt8]) throws -> [UInt8] {
    let output = try runProgram(
      try python(),
      [tool, "decrypt", "--private=" + Base64URL.encode(privateKey), "--auth=" + Base64URL.encode(auth)],
      input: Data(Base64URL.encode(body).utf8))
    guard output.status == 0 else { throw TestFailure("decrypt: \(output.stderr)") }
    let text = output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    guard let plaintext = Base64URL.decode(text) else { throw TestFailure("decrypt gave \(text)") }
    return plaintext
  }

  static func encrypt(
    _ plaintext: [UInt8], p256dh: [UInt8], auth: [UInt8], salt: [UInt8]? = nil, senderPrivate: [UInt8]? = nil
  ) throws -> [UInt8] {
    var arguments = ["encrypt", "--p256dh=" + Base64URL.encode(p256dh), "--auth=" + Base64URL.encode(auth)]
    if let salt { arguments.append("--salt=" + Base64URL.encode(salt)) }
    if let senderPrivate { arguments.append("--sender-private=" + Base64URL.encode(senderPrivate)) }
    let text = try run(arguments, input: plaintext).trimmingCharacters(in: .whitespacesAndNewlines)
    guard let body = Base64URL.decode(text) else { throw TestFailure("encrypt gave \(text)") }
    return body
  }
}
