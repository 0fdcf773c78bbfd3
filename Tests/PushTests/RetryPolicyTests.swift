import Testing

@testable import Push

@Suite struct RetryPolicyTests {
  let now: Int64 = 1_000_000

  func fcmError(_ status: Int, _ code: String?, field: String? = nil, grpc: String = "X") -> ProviderResponse
  {
    var details: [String] = []
    if let code {
      details.append(
        #"{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#(code)"}"#)
    }
    if let field {
      details.append(
        #"{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"\#(field)","description":"d"}]}"#
      )
    }
    let body =
      #"{"error":{"code":\#(status),"message":"m","status":"\#(grpc)","details":[\#(details.joined(separator: ","))]}}"#
    return ProviderResponse(status: status, body: Array(body.utf8))
  }

  func fcm(_ response: ProviderResponse, attempts: Int = 0, reauthenticated: Bool = false) -> PushDecision {
    RetryPolicy.fcm(response, now: now, attempts: attempts, reauthenticated: reauthenticated, jitter: 0)
  }

  func apns(
    _ status: Int, _ reason: String, timestamp: Int64? = nil, retryAfter: Int64? = nil,
    reauthenticated: Bool = false
  )
    -> PushDecision
  {
    let body = #"{"reason":"\#(reason)""# + (timestamp.map { #","timestamp":\#($0)"# } ?? "") + "}"
    return RetryPolicy.apns(
      ProviderResponse(status: status, body: Array(body.utf8), retryAfterSeconds: retryAfter), now: now,
      attempts: 0,
      reauthenticated: reauthenticated, jitter: 0)
  }

  // MARK: Backoff

  @Test func backoffStartsAt10SecondsDoublesAndIsCapped() {
    #expect(RetryPolicy.backoffMs(attempts: 0, jitter: 0) == 10_000)
    #expect(RetryPolicy.backoffMs(attempts: 1, jitter: 0) == 20_000)
    #expect(RetryPolicy.backoffMs(attempts: 3, jitter: 0) == 80_000)
    #expect(RetryPolicy.backoffMs(attempts: 0, jitter: 0.999) < 15_000)
    #expect(RetryPolicy.backoffMs(attempts: 0, jitter: 0.5) == 12_500)
    #expect(RetryPolicy.backoffMs(attempts: 50, jitter: 0) == RetryPolicy.maximumBackoffMs)
    #expect(RetryPolicy.backoffMs(attempts: -3, jitter: -1) == 10_000)
  }

  // MARK: FCM

  @Test func fcmSuccessIsDelivered() {
    #expect(fcm(ProviderResponse(status: 200, body: Array(#"{"name":"x"}"#.utf8))) == .delivered)
  }

  @Test func fcmUnregisteredDeletesTheToken() {
    guard case .gone(_, nil) = fcm(fcmError(404, "UNREGISTERED", grpc: "NOT_FOUND")) else {
      Issue.record("not deleted")
      return
    }
  }

  @Test func fcmInvalidArgumentDeletesOnlyForTheTokenField() {
    guard case .gone = fcm(fcmError(400, "INVALID_ARGUMENT", field: "message.token")) else {
      Issue.record("token violation should delete")
      return
    }
    guard case .giveUp = fcm(fcmError(400, "INVALID_ARGUMENT", field: "message.data")) else {
      Issue.record("other violation should give up")
      return
    }
    guard case .giveUp = fcm(fcmError(400, "INVALID_ARGUMENT")) else {
      Issue.record("no violation should give up")
      return
    }
  }

  @Test func fcmSenderIdMismatchMakesTheTokenUnusable() {
    guard case .gone = fcm(fcmError(403, "SENDER_ID_MISMATCH", grpc: "PERMISSION_DENIED")) else {
      Issue.record("not deleted")
      return
    }
  }

  @Test func fcm429HonoursRetryAfterElse60Seconds() {
    var response = fcmError(429, "QUOTA_EXCEEDED")
    response.retryAfter = .seconds(30)
    #expect(fcm(response) == .retry(at: now + 30_000, reason: "429 QUOTA_EXCEEDED"))
    response.retryAfter = nil
    #expect(fcm(response) == .retry(at: now + 60_000, reason: "429 QUOTA_EXCEEDED"))
    let bare = ProviderResponse(status: 429, body: [])
    guard case .retry(let at, _) = fcm(bare) else { Issue.record("429 without body"); return }
    #expect(at == now + 60_000)
  }

  @Test func fcmServerErrorsBackOffAtLeast10Seconds() {
    for response in [
      fcmError(500, "INTERNAL"), fcmError(503, "UNAVAILABLE"),
      ProviderResponse(status: 502, body: Array("<html><body>Bad Gateway</body></html>".utf8)),
    ] {
      guard case .retry(let at, _) = fcm(response) else {
        Issue.record("\(response.status) not retried")
        continue
      }
      #expect(at >= now + 10_000)
    }
    guard case .retry(let at, _) = fcm(fcmError(503, "UNAVAILABLE"), attempts: 2) else { return }
    #expect(at == now + 40_000)
  }

  @Test func fcmTimeoutsBackOff() {
    let decision = fcm(ProviderResponse(status: 0, transportError: "Operation timed out"))
    guard case .retry(let at, let reason) = decision else { Issue.record("not retried"); return }
    #expect(at >= now + 10_000)
    #expect(reason.contains("timed out"))
  }

  @Test func aLostConnectionIsRetriedSoonOnceThenBacksOff() {
    let lost = ProviderResponse(status: 0, transportError: "GOAWAY", connectionLost: true)
    #expect(fcm(lost) == .retry(at: now + 1000, reason: "no answer: GOAWAY"))
    #expect(fcm(lost, attempts: 1) == .retry(at: now + 20_000, reason: "no answer: GOAWAY"))
    let apnsLost = RetryPolicy.apns(lost, now: now, attempts: 0, reauthenticated: false, jitter: 0)
    #expect(apnsLost == .retry(at: now + 1000, reason: "no answer: GOAWAY"))
  }

  @Test func fcmPlain401ReauthenticatesOnceThenBacksOff() {
    let plain = ProviderResponse(
      status: 401, body: Array(#"{"error":{"code":401,"message":"m","status":"UNAUTHENTICATED"}}"#.utf8))
    guard case .reauthenticate = fcm(plain) else { Issue.record("first 401 should refresh"); return }
    guard case .retry = fcm(plain, reauthenticated: true) else {
      Issue.record("second 401 should back off"); return
    }
    // A 401 with an FcmError (THIRD_PARTY_AUTH_ERROR) is not a stale access token.
    guard case .giveUp = fcm(fcmError(401, "THIRD_PARTY_AUTH_ERROR")) else {
      Issue.record("third party"); return
    }
  }

  @Test func fcmPermissionDeniedWithoutFcmErrorIsAConfigurationFault() {
    guard case .stopProvider = fcm(fcmError(403, nil, grpc: "PERMISSION_DENIED")) else {
      Issue.record("should stop"); return
    }
  }

  // MARK: APNs

  @Test func apns410DeletesUnlessRefreshedAfterItsTimestamp() {
    #expect(
      apns(410, "Unregistered", timestamp: 5000)
        == .gone(reason: "410 Unregistered", refreshedBefore: 5000))
    #expect(apns(410, "ExpiredToken") == .gone(reason: "410 ExpiredToken", refreshedBefore: nil))
  }

  @Test func apnsBadDeviceTokenDeletes() {
    guard case .gone(_, nil) = apns(400, "BadDeviceToken") else { Issue.record("not deleted"); return }
  }

  @Test func apnsNeverRetriesPayloadTooLargeOrTopicMismatch() {
    guard case .giveUp = apns(413, "PayloadTooLarge") else { Issue.record("PayloadTooLarge"); return }
    guard case .giveUp = apns(400, "DeviceTokenNotForTopic") else {
      Issue.record("DeviceTokenNotForTopic"); return
    }
    guard case .giveUp = apns(400, "BadCollapseId") else { Issue.record("BadCollapseId"); return }
  }

  @Test func apnsExpiredProviderTokenReSignsOnce() {
    guard case .reauthenticate = apns(403, "ExpiredProviderToken") else { Issue.record("first"); return }
    guard case .retry = apns(403, "ExpiredProviderToken", reauthenticated: true) else {
      Issue.record("again"); return
    }
  }

  @Test func apnsInvalidProviderTokenStopsTheProvider() {
    guard case .stopProvider(let reason) = apns(403, "InvalidProviderToken") else {
      Issue.record("not stopped"); return
    }
    #expect(reason.contains("InvalidProviderToken"))
  }

  @Test func apnsTooManyRequestsWaitsAndServerErrorsBackOff() {
    // The later of Retry-After and the backoff (10 s at the first attempt).
    #expect(
      apns(429, "TooManyRequests", retryAfter: 7) == .retry(at: now + 10_000, reason: "429 TooManyRequests"))
    #expect(
      apns(429, "TooManyRequests", retryAfter: 70) == .retry(at: now + 70_000, reason: "429 TooManyRequests"))
    #expect(apns(429, "TooManyRequests") == .retry(at: now + 60_000, reason: "429 TooManyRequests"))
    guard case .retry(let at, _) = apns(429, "TooManyProviderTokenUpdates") else {
      Issue.record("updates"); return
    }
    #expect(at >= now + 10_000)
    for status in [500, 503] {
      guard case .retry(let at, _) = apns(status, "ServiceUnavailable") else {
        Issue.record("\(status)"); return
      }
      #expect(at >= now + 10_000)
    }
  }

  // MARK: OAuth

  @Test func oauthSuccessGivesTheTokenAndLifetime() {
    let body = #"{"access_token":"ya29.x","expires_in":3599,"token_type":"Bearer"}"#
    #expect(
      RetryPolicy.oauth(
        ProviderResponse(status: 200, body: Array(body.utf8)), now: now, attempts: 0, jitter: 0)
        == .token("ya29.x", expiresIn: 3599))
  }

  @Test func oauthRefusalStopsAndOutageRetries() {
    let refused = #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#
    guard
      case .stopProvider(let reason) = RetryPolicy.oauth(
        ProviderResponse(status: 400, body: Array(refused.utf8)), now: now, attempts: 0, jitter: 0)
    else { Issue.record("not stopped"); return }
    #expect(reason.contains("invalid_grant") && reason.contains("clock"))
    guard
      case .retry(let at, _) = RetryPolicy.oauth(
        ProviderResponse(status: 503, body: []), now: now, attempts: 0, jitter: 0)
    else { Issue.record("not retried"); return }
    #expect(at >= now + 10_000)
  }
}
