import Config
import Foundation
import JSON
import Platform
import Store
import TestSupport
import Testing

@testable import Push

/// VAPID tokens, the Topic, the push service's answers and `[messaging.webpush]`: pure parts, no network.
@Suite struct WebPushUnitTests {
  static func vapid(subject: String = "mailto:ops@example.org") throws -> (VAPID, [UInt8]) {
    let pem = try P256Key.generate().privateKeyPEM()
    return (try VAPID(pem: pem, subject: subject), pem)
  }

  /// The parts of `vapid t=<JWT>, k=<key>`.
  static func parse(_ header: String) throws -> (
    header: JSONObject, claims: JSONObject, signature: [UInt8], k: String
  ) {
    guard header.hasPrefix("vapid t="), let comma = header.firstIndex(of: ",") else {
      throw TestFailure("not a vapid header: \(header)")
    }
    let token = String(header[header.index(header.startIndex, offsetBy: 8)..<comma])
    let k = String(header[comma...].dropFirst(2))
    guard k.hasPrefix("k=") else { throw TestFailure("no k: \(header)") }
    let parts = token.split(separator: ".").map(String.init)
    guard parts.count == 3, let head = Base64URL.decode(parts[0]), let body = Base64URL.decode(parts[1]),
      let signature = Base64URL.decode(parts[2])
    else { throw TestFailure("not a JWT: \(token)") }
    return (try parseObject(head), try parseObject(body), signature, String(k.dropFirst(2)))
  }

  @Test func theAuthorizationHeaderCarriesAnES256JWTForTheOrigin() throws {
    let (vapid, _) = try Self.vapid()
    let now: Int64 = 1_800_000_000_000
    let header = try vapid.authorization(origin: "https://fcm.googleapis.com", now: now)
    let parsed = try Self.parse(header)
    #expect(parsed.header.keys == ["typ", "alg"])
    #expect(string(parsed.header["alg"]) == "ES256")
    #expect(string(parsed.header["typ"]) == "JWT")
    #expect(parsed.claims.keys == ["aud", "exp", "sub"])
    #expect(string(parsed.claims["aud"]) == "https://fcm.googleapis.com")
    #expect(string(parsed.claims["sub"]) == "mailto:ops@example.org")
    let exp = try #require(parsed.claims.int(at: ["exp"]))
    #expect(exp == now / 1000 + VAPID.tokenLifetimeSeconds)
    #expect(exp - now / 1000 <= 86_400)
    #expect(parsed.signature.count == 64)
    #expect(parsed.k == vapid.publicKeyText)
    #expect(parsed.k.count == 87 && VAPIDPublicKeyFile.isPublicKey(parsed.k))
    #expect(Base64URL.decode(parsed.k) == vapid.publicKey)
  }

  @Test func oneTokenPerOriginUntilHalfItsLifetimeIsGone() throws {
    let (vapid, _) = try Self.vapid()
    let now: Int64 = 1_800_000_000_000
    let first = try vapid.authorization(origin: "https://a.example", now: now)
    #expect(try vapid.authorization(origin: "https://a.example", now: now + 3_600_000) == first)
    let other = try vapid.authorization(origin: "https://b.example", now: now)
    #expect(other != first)
    #expect(vapid.tokensSigned == 2)
    let later = now + (VAPID.tokenLifetimeSeconds - VAPID.refreshBeforeExpirySeconds) * 1000
    let renewed = try vapid.authorization(origin: "https://a.example", now: later)
    #expect(renewed != first)
    #expect(vapid.tokensSigned == 3)
    #expect(try Self.parse(renewed).claims.int(at: ["exp"]) == later / 1000 + VAPID.tokenLifetimeSeconds)
    // Many origins: the cache stays bounded.
    for number in 0..<(VAPID.maxCachedOrigins + 10) {
      _ = try vapid.authorization(origin: "https://host\(number).example", now: later)
    }
    #expect(
      try vapid.authorization(origin: "https://host\(VAPID.maxCachedOrigins + 9).example", now: later)
        .hasPrefix("vapid t="))
  }

  @Test func theTopicIsStablePerStationOpaqueAndURLSafe() throws {
    let (vapid, pem) = try Self.vapid()
    let topic = vapid.topic(station: "N0CALL-7")
    #expect(topic.count == 22)
    #expect(
      topic.utf8.allSatisfy { byte in
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
          || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
      })
    #expect(vapid.topic(station: "N0CALL-7") == topic)
    #expect(vapid.topic(station: "N0CALL-8") != topic)
    // The same key after a restart: the same topic; another server's key: another.
    #expect(try VAPID(pem: pem, subject: "mailto:x@y.z").topic(station: "N0CALL-7") == topic)
    #expect(try Self.vapid().0.topic(station: "N0CALL-7") != topic)
  }

  @Test func theMessageIsTheFCMDataWithTitleAndBody() throws {
    let content = PushContent(
      station: "N0CALL-7", fromCall: "KJ7ABC-7", seqId: "42", text: "Hello", count: 1,
      avatar: .stored(Avatar(icon: "radio", image: nil, hash: "icon:radio")))
    let built = try WebPushPayload.body(content, preview: true, encrypted: true).get()
    let object = try parseObject(built.bytes)
    #expect(
      object.keys == [
        "title", "body", "fromCall", "to", "seqId", "count", "fromAvatarIcon", "fromAvatarHash",
      ])
    #expect(object.members.allSatisfy { if case .string = $0.value { true } else { false } })
    #expect(string(object["body"]) == "Hello")
    let hidden = try parseObject(
      try WebPushPayload.body(content, preview: false, encrypted: false).get().bytes)
    #expect(string(hidden["body"]) == "New APRS message")
    // A long text is shortened to the limit of one encrypted record.
    let long = PushContent(
      station: "N0CALL-7", fromCall: "KJ7ABC-7", seqId: nil, text: String(repeating: "é", count: 3000),
      count: 1)
    let fitted = try WebPushPayload.body(long, preview: true, encrypted: true).get()
    #expect(fitted.bytes.count <= WebPushEncryption.maxPlaintextBytes)
    #expect(fitted.bodyShortened)
    let plain = try WebPushPayload.body(long, preview: true, encrypted: false).get()
    #expect(plain.bytes.count <= 4096 && plain.bytes.count > fitted.bytes.count)
    #expect(
      WebPushPayload.headers(ttlSeconds: 3599).map { "\($0.0): \($0.1)" } == ["ttl: 3599", "urgency: high"])
  }

  @Test func pushServiceAnswers() {
    let now: Int64 = 1_000_000
    func decide(_ status: Int, retryAfter: Int64? = nil, attempts: Int = 0) -> PushDecision {
      RetryPolicy.webPush(
        ProviderResponse(status: status, retryAfterSeconds: retryAfter), now: now, attempts: attempts,
        jitter: 0)
    }
    for status in [200, 201, 202] { #expect(decide(status) == .delivered) }
    for status in [404, 410] {
      guard case .gone(_, nil) = decide(status) else {
        Issue.record("\(status): \(decide(status))")
        continue
      }
    }
    #expect(decide(429, retryAfter: 30) == .retry(at: now + 30_000, reason: "429 rate limited"))
    #expect(decide(429) == .retry(at: now + RetryPolicy.defaultRetryAfterMs, reason: "429 rate limited"))
    #expect(decide(503) == .retry(at: now + RetryPolicy.minimumBackoffMs, reason: "503"))
    #expect(
      decide(500, attempts: 3)
        == .retry(at: now + RetryPolicy.backoffMs(attempts: 3, jitter: 0), reason: "500"))
    for status in [400, 401, 403, 413, 301, 418] {
      guard case .giveUp = decide(status) else {
        Issue.record("\(status): \(decide(status))")
        continue
      }
    }
    let lost = RetryPolicy.webPush(
      ProviderResponse(status: 0, transportError: "timeout"), now: now, attempts: 2, jitter: 0)
    #expect(
      lost == .retry(at: now + RetryPolicy.backoffMs(attempts: 2, jitter: 0), reason: "no answer: timeout"))
  }

  /// A request refused before it left (the host is at a private address) deletes the subscription at once,
  /// however many attempts came before; the reason names the address and its range.
  @Test func anEndpointAtAPrivateAddressIsDeletedWithoutARetry() throws {
    for attempts in [0, 3] {
      let address = try #require(IPAddress("169.254.169.254"))
      let refused = ProviderResponse(
        status: 0, transportError: "Failed to connect", refusedAddress: address)
      let decision = RetryPolicy.webPush(refused, now: 1_000_000, attempts: attempts, jitter: 0)
      #expect(
        decision
          == .gone(
            reason:
              "the endpoint's host is at 169.254.169.254 (link-local 169.254.0.0/16), a loopback or private address",
            refreshedBefore: nil))
    }
  }

  // MARK: Configuration

  func parse(_ text: String) throws(ConfigError) -> PushConfig {
    try PushConfig(try ConfigFile(parsing: text, name: "test.ini", directory: "/etc/aprs"))
  }

  func error(_ text: String) -> String {
    do {
      _ = try parse(text)
      return "(accepted)"
    } catch {
      return error.description
    }
  }

  @Test func webPushIsOnByDefaultWithItsSubject() throws {
    // On by default: a file without the section (an upgrade's) has no subject, so Web Push starts off, warned
    // (ConfigTests/WebPushConfigTests).
    let upgraded = try parse("[server]\nworkers = 2\n")
    #expect(upgraded.webPush == nil && upgraded.webPushOff == PushConfig.noSubjectOff)
    #expect(upgraded.webPushWarning?.contains("messaging.webpush.subject is not set") == true)
    let on = try parse("[messaging.webpush]\nsubject = mailto:ops@example.org\n")
    #expect(on.webPushOff == nil)
    let settings = try #require(on.webPush)
    #expect(settings.subject == "mailto:ops@example.org")
    #expect(settings.vapidKeyFile == nil && settings.caFile == nil && !settings.allowPrivateEndpoints)
    #expect(
      settings.keyFile(database: "/var/lib/aprs-cloud/aprs-cloud.sqlite") == "/var/lib/aprs-cloud/vapid.pem")
    #expect(settings.keyFile(database: "db.sqlite") == "vapid.pem")
    let https = try parse(
      "[messaging.webpush]\nsubject = https://aprs.example.org/contact\nvapidKeyFile = keys/vapid.pem\n"
        + "caFile = /etc/hostname\nallowPrivateEndpoints = true\n")
    #expect(https.webPush?.vapidKeyFile == "/etc/aprs/keys/vapid.pem")
    #expect(https.webPush?.keyFile(database: "/x/db") == "/etc/aprs/keys/vapid.pem")
    #expect(https.webPush?.caFile == "/etc/hostname")
    #expect(https.webPush?.allowPrivateEndpoints == true)
    let disabled = try parse("[messaging.webpush]\nenabled = false\nsubject = mailto:ops@example.org\n")
    #expect(disabled.webPush == nil && disabled.webPushOff == "disabled")
    // The schema knows the keys (no "unknown key" warning).
    #expect(ConfigSchema.all.knows(section: "messaging.webpush", key: "subject"))
    #expect(ConfigSchema.all.knows(section: "messaging.webpush", key: "vapidKeyFile"))
  }

  @Test func onByHandWithoutASubjectIsAStartupErrorNamingTheKey() throws {
    let missing = error("[messaging.webpush]\nenabled = true\n")
    #expect(missing.contains("messaging.webpush.subject"), "\(missing)")
    #expect(missing.contains("mailto:"), "\(missing)")
    // Other keys without `enabled`: off, with the warning naming the key.
    let keyOnly = try parse("[messaging.webpush]\nvapidKeyFile = /tmp/k.pem\n")
    #expect(keyOnly.webPush == nil)
    #expect(keyOnly.webPushWarning?.contains("messaging.webpush.subject") == true)
    for bad in [
      "ops@example.org", "mailto:", "mailto:nobody", "http://example.org", "https://", "mailto:a b@c",
    ] {
      let text = error("[messaging.webpush]\nsubject = \(bad)\n")
      #expect(
        text.contains("messaging.webpush.subject") && text.contains("expected mailto:"), "\(bad): \(text)")
    }
    let ca = error("[messaging.webpush]\nsubject = mailto:a@b.c\ncaFile = /nonexistent/ca.pem\n")
    #expect(ca.contains("messaging.webpush.caFile") && ca.contains("cannot read"), "\(ca)")
    #expect(error("[messaging.webpush]\nsubject = mailto:a@b.c\nenabled = maybe\n").contains("enabled"))
  }

  @Test func thePublicKeyFileHoldsOneKey() throws {
    let directory = try makeTemporaryDirectory("vapid-pub")
    defer { removeDirectory(directory) }
    let (vapid, _) = try Self.vapid()
    let path = directory + "/vapid.pem.pub"
    #expect(VAPIDPublicKeyFile.read(path) == nil)
    #expect(VAPIDPublicKeyFile.write(vapid.publicKeyText, to: path) == nil)
    #expect(VAPIDPublicKeyFile.read(path) == vapid.publicKeyText)
    #expect(try String(contentsOfFile: path, encoding: .utf8) == vapid.publicKeyText + "\n")
    #expect(VAPIDPublicKeyFile.write("not a key", to: path) != nil)
    try "garbage\n".write(toFile: path, atomically: true, encoding: .utf8)
    #expect(VAPIDPublicKeyFile.read(path) == nil)
    #expect(!VAPIDPublicKeyFile.isPublicKey(String(vapid.publicKeyText.dropLast()) + "B"))
    #expect(!VAPIDPublicKeyFile.isPublicKey("C" + vapid.publicKeyText.dropFirst()))
  }
}
