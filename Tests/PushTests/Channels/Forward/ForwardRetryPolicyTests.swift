import Platform
import Testing

@testable import Push

/// `RetryPolicy.forward`: what each answer of an ntfy topic, a webhook or the SMTP server does to a forward.
@Suite struct ForwardRetryPolicyTests {
  let now: Int64 = 1_000_000

  func http(_ response: ProviderResponse, attempts: Int = 0, throttles: Int = 0) -> PushDecision {
    RetryPolicy.forward(
      response, kind: .webhook, now: now, attempts: attempts, jitter: 0, throttles: throttles
    ).decision
  }

  func mail(_ response: ProviderResponse, attempts: Int = 0) -> PushDecision {
    RetryPolicy.forward(response, kind: .email, now: now, attempts: attempts, jitter: 0).decision
  }

  @Test func successIsDelivered() {
    for status in [200, 201, 202, 204] { #expect(http(ProviderResponse(status: status)) == .delivered) }
    #expect(mail(ProviderResponse(status: 250)) == .delivered)
  }

  @Test func goneDisablesTheTarget() {
    #expect(
      http(ProviderResponse(status: 404))
        == .gone(reason: "404 the endpoint is gone", refreshedBefore: nil))
    #expect(
      http(ProviderResponse(status: 410))
        == .gone(reason: "410 the endpoint is gone", refreshedBefore: nil))
    let refused = mail(ProviderResponse(status: 550, transportError: "RCPT failed: 550"))
    #expect(
      refused
        == .gone(reason: "the mail server refused the address: RCPT failed: 550", refreshedBefore: nil)
    )
    // The operator's own server refusing the login, the sender or TLS is no fault of the owner's address.
    for failure in [
      "Login denied", "MAIL failed: 550", "STARTTLS not supported.", "Failure sending data: 554",
    ] {
      guard case .retry = mail(ProviderResponse(status: 535, transportError: failure)) else {
        Issue.record("\(failure) disabled the owner's address")
        continue
      }
    }
    let address = IPAddress("10.0.0.1")
    guard
      case .gone(let reason, _) = http(
        ProviderResponse(status: 0, transportError: "x", refusedAddress: address))
    else {
      Issue.record("a private address is not a dead target")
      return
    }
    #expect(reason.contains("10.0.0.1") && reason.contains("loopback or private address"))
  }

  @Test func serverErrorsAndNoAnswerBackOffGrowing() {
    #expect(http(ProviderResponse(status: 503), attempts: 0) == .retry(at: now + 10_000, reason: "503"))
    #expect(http(ProviderResponse(status: 500), attempts: 1) == .retry(at: now + 20_000, reason: "500"))
    #expect(http(ProviderResponse(status: 502), attempts: 2) == .retry(at: now + 40_000, reason: "502"))
    #expect(
      http(ProviderResponse(status: 0, transportError: "timeout"), attempts: 3)
        == .retry(at: now + 80_000, reason: "no answer: timeout"))
    // An SMTP 4xx (or no answer from the mail server) is passing.
    #expect(
      mail(ProviderResponse(status: 451, transportError: "try later"), attempts: 1)
        == .retry(at: now + 20_000, reason: "mail not sent: try later"))
    #expect(
      mail(ProviderResponse(status: 0, transportError: "connect"))
        == .retry(at: now + 10_000, reason: "mail not sent: connect"))
  }

  @Test func retryAfterIsHonoured() {
    #expect(
      http(ProviderResponse(status: 503, retryAfterSeconds: 120))
        == .retry(at: now + 120_000, reason: "503"))
    #expect(
      http(ProviderResponse(status: 429, retryAfterSeconds: 5))
        == .retry(at: now + 10_000, reason: "429 rate limited"))
    // Without Retry-After a 429 waits 60 s, doubling with each one in a row.
    #expect(http(ProviderResponse(status: 429)) == .retry(at: now + 60_000, reason: "429 rate limited"))
    #expect(
      http(ProviderResponse(status: 429), throttles: 2)
        == .retry(at: now + 240_000, reason: "429 rate limited"))
  }

  @Test func aRedirectIsRetriedWithTheBackoffAndClassed() {
    let made = RetryPolicy.forward(
      ProviderResponse(status: 308, location: "https://new.example/hook"), kind: .webhook, now: now,
      attempts: 1, jitter: 0)
    #expect(
      made
        == ForwardDecision(
          decision: .retry(
            at: now + 20_000,
            reason: "308 redirect to https://new.example/hook, not followed: save the target's new URL"),
          problem: .redirect))
  }

  @Test func ntfysAuthFailureLimitWaitsForTheWholeServiceWithoutRetryAfter() {
    let body = Array(#"{"code":42909,"http":429,"error":"limit reached: too many auth failures"}"#.utf8)
    let made = RetryPolicy.forward(
      ProviderResponse(status: 429, body: body), kind: .ntfy, hasToken: true, now: now, attempts: 0,
      jitter: 0,
      throttles: 1)
    #expect(made.wholeService && made.problem == .throttled)
    #expect(
      made.decision
        == .retry(
          at: now + 120_000,
          reason: "429 ntfy rate limited this server (42909 limit reached: too many auth failures)"))
    let revoked = RetryPolicy.forward(
      ProviderResponse(status: 401), kind: .ntfy, hasToken: true, now: now, attempts: 0, jitter: 0)
    #expect(revoked.problem == .authRefused)
    guard case .gone = revoked.decision else {
      Issue.record("a refused token is not disabled: \(revoked)")
      return
    }
  }

  @Test func otherRefusalsGiveThatMessageUp() {
    for status in [400, 401, 403, 413] {
      guard case .giveUp = http(ProviderResponse(status: status)) else {
        Issue.record("\(status) is not given up")
        continue
      }
    }
  }
}
