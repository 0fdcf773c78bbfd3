import JSON
import Store
import TestSupport
import Testing

@testable import Push

/// What the providers' answers mean when FCM words a dead token only in its message, and when an answer
/// holds absurd numbers or is not what it should be at all: every parser survives, every number is clamped.
@Suite struct ProviderAnswerTests {
  let now: Int64 = 1_700_000_000_000

  func answer(_ status: Int, _ body: String, retryAfter: Int64? = nil) -> ProviderResponse {
    ProviderResponse(status: status, body: Array(body.utf8), retryAfterSeconds: retryAfter)
  }

  func fcm(_ response: ProviderResponse) -> PushDecision {
    RetryPolicy.fcm(response, now: now, attempts: 0, reauthenticated: false, jitter: 0)
  }

  func apns(_ response: ProviderResponse) -> PushDecision {
    RetryPolicy.apns(response, now: now, attempts: 0, reauthenticated: false, jitter: 0)
  }

  func oauth(_ response: ProviderResponse) -> RetryPolicy.TokenDecision {
    RetryPolicy.oauth(response, now: now, attempts: 0, jitter: 0)
  }

  // MARK: FCM: the registration token named without a field

  /// What FCM answers today for a malformed or stale token: INVALID_ARGUMENT, no `message.token` violation.
  static let invalidTokenByMessage = """
    {"error":{"code":400,"message":"The registration token is not a valid FCM registration token",\
    "status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError",\
    "errorCode":"INVALID_ARGUMENT"}]}}
    """

  @Test func anInvalidArgumentWhoseMessageNamesTheRegistrationTokenDeletesIt() {
    guard case .gone(let reason, nil) = fcm(answer(400, Self.invalidTokenByMessage)) else {
      Issue.record("the dead token would be kept forever")
      return
    }
    #expect(reason.contains("INVALID_ARGUMENT") && reason.contains("registration token"), "\(reason)")
    // Without the FcmError detail, and in other words, too.
    let bare =
      #"{"error":{"code":400,"message":"Invalid registration token provided","status":"INVALID_ARGUMENT"}}"#
    guard case .gone = fcm(answer(400, bare)) else { Issue.record("bare"); return }
  }

  @Test func aViolationDescriptionNamingTheRegistrationTokenDeletesIt() {
    let body = """
      {"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT",\
      "details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[\
      {"field":"message","description":"Invalid registration token"}]}]}}
      """
    guard case .gone = fcm(answer(400, body)) else { Issue.record("not deleted"); return }
  }

  @Test func anyOtherInvalidArgumentGivesUpThatPushAndKeepsTheToken() {
    let body = """
      {"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT",\
      "details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"INVALID_ARGUMENT"},\
      {"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[\
      {"field":"message.android.ttl","description":"Invalid duration"}]}]}}
      """
    #expect(
      fcm(answer(400, body)) == .giveUp(reason: "400 INVALID_ARGUMENT: Request contains an invalid argument.")
    )
    #expect(RetryPolicy.failureKind(answer(400, body), platform: .android) == "400 INVALID_ARGUMENT")
    // The engine logs the body with it.
    #expect(answer(400, body).bodyForLog.contains("message.android.ttl"))
    #expect(answer(400, "").bodyForLog == "(empty)")
    #expect(answer(400, String(repeating: "x", count: 5000)).bodyForLog.utf8.count < 2100)
  }

  @Test func unregisteredAndSenderIdMismatchStillDelete() {
    for (status, code) in [(404, "UNREGISTERED"), (403, "SENDER_ID_MISMATCH")] {
      let body = """
        {"error":{"code":\(status),"message":"m","status":"X","details":[\
        {"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\(code)"}]}}
        """
      guard case .gone = fcm(answer(status, body)) else { Issue.record("\(code)"); continue }
    }
  }

  // MARK: APNs

  @Test func badDeviceTokenIsRecognisedForTheOtherEnvironment() {
    #expect(RetryPolicy.isBadDeviceToken(answer(400, #"{"reason":"BadDeviceToken"}"#)))
    #expect(!RetryPolicy.isBadDeviceToken(answer(400, #"{"reason":"BadTopic"}"#)))
    #expect(!RetryPolicy.isBadDeviceToken(answer(410, #"{"reason":"BadDeviceToken"}"#)))
    #expect(!RetryPolicy.isBadDeviceToken(ProviderResponse(status: 0, transportError: "timed out")))
    #expect(RetryPolicy.failureKind(answer(400, #"{"reason":"BadTopic"}"#), platform: .ios) == "400 BadTopic")
  }

  @Test func absurd410TimestampsAreClampedNeverTrapped() {
    let cases: [(String, Int64?)] = [
      ("1e300", now), ("1e400", now), ("-1e400", 0), ("123456789012345678901234567890", now),
      ("9223372036854775807", now), ("-9223372036854775808", 0), ("-5", 0),
      ("1700000000000.9", 1_700_000_000_000),
      ("-0", 0), ("0.5e1", 5), (#""soon""#, nil), ("null", nil), ("[1]", nil), (#"{"ms":1}"#, nil),
      ("1699999999000", 1_699_999_999_000),
    ]
    for (literal, expected) in cases {
      let decision = apns(answer(410, #"{"reason":"Unregistered","timestamp":\#(literal)}"#))
      #expect(
        decision == .gone(reason: "410 Unregistered", refreshedBefore: expected),
        "timestamp \(literal)")
    }
  }

  // MARK: OAuth

  @Test func absurdAccessTokenLifetimesAreClampedNeverOverflow() {
    let cases: [(String, Int64)] = [
      ("3599", 3599), ("1e300", 3600), ("1e400", 3600), ("9223372036854775807", 3600),
      ("123456789012345678901234567890", 3600), ("-5", 60), ("0", 60), ("3599.5", 3599), (#""3599""#, 3600),
      ("null", 3600), ("true", 3600), ("-1e400", 60),
    ]
    for (literal, expected) in cases {
      let body = #"{"access_token":"ya29.x","expires_in":\#(literal),"token_type":"Bearer"}"#
      #expect(oauth(answer(200, body)) == .token("ya29.x", expiresIn: expected), "expires_in \(literal)")
    }
    #expect(oauth(answer(200, #"{"access_token":"ya29.x"}"#)) == .token("ya29.x", expiresIn: 3600))
  }

  // MARK: Numbers

  @Test func providerNumbersAreFailableAndClamped() {
    func number(_ literal: String) -> JSONValue { .number(JSONNumber(literal: literal)) }
    #expect(ProviderNumber.int64(number("42"), clampedTo: 0...100) == 42)
    #expect(ProviderNumber.int64(number("420"), clampedTo: 0...100) == 100)
    #expect(ProviderNumber.int64(number("-1"), clampedTo: 0...100) == 0)
    #expect(ProviderNumber.int64(number("1e300"), clampedTo: .min ... .max) == .max)
    #expect(ProviderNumber.int64(number("-1e300"), clampedTo: .min ... .max) == .min)
    #expect(ProviderNumber.int64(number("9.2233720368547758e18"), clampedTo: .min ... .max) == .max)
    #expect(ProviderNumber.int64(number("99.9"), clampedTo: 0...100) == 99)
    #expect(ProviderNumber.int64(.string("42"), clampedTo: 0...100) == nil)
    #expect(ProviderNumber.int64(nil, clampedTo: 0...100) == nil)
    #expect(ProviderNumber.clamp(.nan, to: 0...1) == nil)
    #expect(ProviderNumber.clamp(.infinity, to: 0...1) == 1)
    #expect(ProviderNumber.adding(.max, 1) == .max && ProviderNumber.adding(.min, -1) == .min)
    #expect(ProviderNumber.multiplying(.max, 1000) == .max && ProviderNumber.multiplying(.min, 1000) == .min)
    #expect(ProviderNumber.multiplying(-3, 4) == -12)
  }

  // MARK: Fuzz

  /// Random bodies (bytes, broken JSON, wrong types, huge and negative numbers, deep nesting) under every
  /// status a provider may answer: every parser and decision returns, and what it returns is in range.
  @Test func theAnswerParsersSurviveAnyBody() {
    var random = SplitMix64(seed: 0x5EED_F00D)
    let statuses = [0, 200, 400, 401, 403, 404, 410, 413, 429, 500, 502, 503]
    for _ in 0..<4000 {
      let body = Self.randomBody(&random)
      let status = statuses[Int(random.next() % UInt64(statuses.count))]
      let response = ProviderResponse(
        status: status, body: body, retryAfterSeconds: Self.randomRetryAfter(&random),
        transportError: status == 0 ? "no answer" : nil)
      let attempts = Int(truncatingIfNeeded: random.next() % 40) - 5
      for decision in [
        RetryPolicy.fcm(response, now: now, attempts: attempts, reauthenticated: false, jitter: 0.5),
        RetryPolicy.apns(response, now: now, attempts: attempts, reauthenticated: true, jitter: 0.99),
      ] {
        switch decision {
        case .retry(let at, _): #expect(at > now && at <= now + 86_400_000 * 2)
        case .gone(_, let before?): #expect((0...now).contains(before))
        default: break
        }
      }
      switch RetryPolicy.oauth(response, now: now, attempts: attempts, jitter: 0.3) {
      case .token(_, let expiresIn): #expect(RetryPolicy.accessTokenLifetime.contains(expiresIn))
      case .retry(let at, _): #expect(at > now)
      case .stopProvider: break
      }
      _ = RetryPolicy.FCMError(body: body)?.namesTheRegistrationToken
      _ = RetryPolicy.APNsError(body: body)
      _ = RetryPolicy.isBadDeviceToken(response)
      _ = RetryPolicy.failureKind(response, platform: .android)
      _ = RetryPolicy.failureKind(response, platform: .ios)
      _ = response.bodyForLog
      _ = response.bodySummary
    }
  }

  static func randomRetryAfter(_ random: inout SplitMix64) -> Int64? {
    switch random.next() % 4 {
    case 0: nil
    case 1: Int64(bitPattern: random.next())
    case 2: .max
    default: Int64(random.next() % 1000)
    }
  }

  static let absurdNumbers = [
    "1e300", "-1e300", "1e400", "-1e400", "9223372036854775807", "9223372036854775808",
    "-9223372036854775809",
    "123456789012345678901234567890", "-5", "0", "-0", "3599.5", "1E-400", "0.0000001",
  ]

  static let keys = [
    "reason", "timestamp", "access_token", "expires_in", "error", "error_description", "code", "message",
    "status", "details", "@type", "errorCode", "fieldViolations", "field", "description",
  ]

  /// A random body: raw bytes, truncated or valid JSON made of the providers' own keys with any value.
  static func randomBody(_ random: inout SplitMix64) -> [UInt8] {
    switch random.next() % 6 {
    case 0:
      return (0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    case 1:
      let text = Array(randomJSON(&random, depth: 0).utf8)
      return Array(text.prefix(Int(random.next() % UInt64(text.count + 1))))
    case 2:
      return Array(String(repeating: "[", count: Int(random.next() % 5000)).utf8)
    default:
      return Array(randomJSON(&random, depth: 0).utf8)
    }
  }

  static func randomJSON(_ random: inout SplitMix64, depth: Int) -> String {
    let choice = depth > 4 ? random.next() % 5 : random.next() % 8
    switch choice {
    case 0: return absurdNumbers[Int(random.next() % UInt64(absurdNumbers.count))]
    case 1:
      return "\""
        + ["Unregistered", "BadDeviceToken", "INVALID_ARGUMENT", "registration token", "\\ud800", "x"][
          Int(random.next() % 6)] + "\""
    case 2: return ["true", "false", "null"][Int(random.next() % 3)]
    case 3: return String(Int64(bitPattern: random.next()))
    case 4: return "\"type.googleapis.com/google.firebase.fcm.v1.FcmError\""
    case 5:
      let items = (0..<Int(random.next() % 4)).map { _ in randomJSON(&random, depth: depth + 1) }
      return "[" + items.joined(separator: ",") + "]"
    default:
      var members: [String] = []
      for _ in 0..<Int(random.next() % 5) {
        let key = keys[Int(random.next() % UInt64(keys.count))]
        members.append("\"\(key)\":" + randomJSON(&random, depth: depth + 1))
      }
      return "{" + members.joined(separator: ",") + "}"
    }
  }
}
