import Testing

@testable import Push

/// `Retry-After` in both of its forms, and when every provider's 429 and 5xx come back: the later of
/// `Retry-After` and the backoff, repeated 429s doubling from 60 s to an hour, never past the push's lifetime.
@Suite struct RetryAfterTests {
  /// 2026-10-21 07:28:00 UTC, epoch ms.
  static let t0: Int64 = 1_792_567_680_000
  let now = RetryAfterTests.t0

  @Test(
    "delta-seconds and the three HTTP date forms",
    arguments: [
      ("120", RetryAfter.seconds(120)), (" 0 ", .seconds(0)), ("86400", .seconds(86_400)),
      ("99999999999999999999", .seconds(86_400)),
      ("Wed, 21 Oct 2026 07:28:00 GMT", .date(epochMs: RetryAfterTests.t0)),
      ("Wed, 21 Oct 2026 07:30:05 GMT", .date(epochMs: RetryAfterTests.t0 + 125_000)),
      ("Wednesday, 21-Oct-26 07:28:00 GMT", .date(epochMs: RetryAfterTests.t0)),
      ("Wed Oct 21 07:28:00 2026", .date(epochMs: RetryAfterTests.t0)),
      ("Sun Nov  6 08:49:37 1994", .date(epochMs: 784_111_777_000)),
      ("Sun, 06 Nov 1994 08:49:37 GMT", .date(epochMs: 784_111_777_000)),
      ("Thu, 01 Jan 1970 00:00:00 GMT", .date(epochMs: 0)),
      ("Sat, 29 Feb 2028 23:59:59 GMT", .date(epochMs: 1_835_481_599_000)),
    ] as [(String, RetryAfter)])
  func parses(header: String, expected: RetryAfter) {
    #expect(RetryAfter(header: header) == expected)
  }

  @Test(
    "anything else is no Retry-After",
    arguments: [
      "", "soon", "-5", "1.5", "12s", "Wed, 21 Oct 2026 25:00:00 GMT", "Wed, 32 Oct 2026 07:28:00 GMT",
      "Wed, 21 Foo 2026 07:28:00 GMT", "Wed, 21 Oct 2026 07:28 GMT", "Wed, 21 Oct 2026 07:28:00 PST",
      "21 Oct", "Wed, 21 Oct 226 07:28:00 GMT",
    ])
  func refuses(header: String) {
    #expect(RetryAfter(header: header) == nil)
  }

  @Test("the wait from now: a past date is none, everything at most a day")
  func delay() {
    #expect(RetryAfter.seconds(30).delayMs(now: now) == 30_000)
    #expect(RetryAfter.date(epochMs: now + 45_500).delayMs(now: now) == 45_500)
    #expect(RetryAfter.date(epochMs: now - 1000).delayMs(now: now) == 0)
    #expect(RetryAfter.date(epochMs: now + 3 * 86_400_000).delayMs(now: now) == 86_400_000)
  }

  @Test("repeated 429s without Retry-After: 60 s, 120, 240, … capped at an hour")
  func throttle() {
    let waits = (0..<9).map { RetryPolicy.throttleMs(throttles: $0) }
    #expect(
      waits == [60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000, 3_600_000, 3_600_000, 3_600_000])
  }

  /// Each provider's decision for one answer, the same clock and jitter 0 (backoff 10 s × 2^attempts).
  enum Provider: CaseIterable { case fcm, apns, webPush }

  func decide(
    _ provider: Provider, status: Int, retryAfter: RetryAfter? = nil, attempts: Int = 0, throttles: Int = 0,
    expiresAt: Int64? = nil
  ) -> Int64? {
    let body: String =
      switch (provider, status) {
      case (.fcm, 503):
        #"{"error":{"code":503,"status":"UNAVAILABLE","message":"The service is unavailable."}}"#
      case (.fcm, 429): #"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"quota"}}"#
      case (.apns, 429): #"{"reason":"TooManyRequests"}"#
      case (.apns, _): #"{"reason":"ServiceUnavailable"}"#
      default: ""
      }
    let response = ProviderResponse(status: status, body: Array(body.utf8), retryAfter: retryAfter)
    let decision: PushDecision =
      switch provider {
      case .fcm:
        RetryPolicy.fcm(
          response, now: now, attempts: attempts, reauthenticated: false, jitter: 0, throttles: throttles,
          expiresAt: expiresAt)
      case .apns:
        RetryPolicy.apns(
          response, now: now, attempts: attempts, reauthenticated: false, jitter: 0, throttles: throttles,
          expiresAt: expiresAt)
      case .webPush:
        RetryPolicy.webPush(
          response, now: now, attempts: attempts, jitter: 0, throttles: throttles, expiresAt: expiresAt)
      }
    guard case .retry(let at, _) = decision else { return nil }
    return at - now
  }

  @Test("5xx: the later of Retry-After (seconds or a date) and the backoff", arguments: Provider.allCases)
  func serverErrors(provider: Provider) {
    for status in [500, 502, 503] {
      #expect(decide(provider, status: status) == 10_000)
      #expect(decide(provider, status: status, attempts: 3) == 80_000)
      // Retry-After later than the backoff wins; earlier, the backoff does.
      #expect(decide(provider, status: status, retryAfter: .seconds(120)) == 120_000)
      #expect(decide(provider, status: status, retryAfter: .seconds(5)) == 10_000)
      #expect(decide(provider, status: status, retryAfter: .seconds(30), attempts: 3) == 80_000)
      #expect(decide(provider, status: status, retryAfter: .date(epochMs: now + 300_000)) == 300_000)
      #expect(decide(provider, status: status, retryAfter: .date(epochMs: now - 60_000)) == 10_000)
    }
  }

  @Test(
    "429: Retry-After against the backoff; without it 60 s doubling per 429 in a row",
    arguments: Provider.allCases)
  func tooManyRequests(provider: Provider) {
    #expect(decide(provider, status: 429, retryAfter: .seconds(30)) == 30_000)
    #expect(decide(provider, status: 429, retryAfter: .seconds(3)) == 10_000)
    #expect(decide(provider, status: 429, retryAfter: .date(epochMs: now + 90_000)) == 90_000)
    let waits = (0..<8).map { decide(provider, status: 429, throttles: $0) }
    #expect(waits == [60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000, 3_600_000, 3_600_000])
  }

  @Test(
    "the sender's own wait never runs past the push's lifetime; Retry-After is obeyed",
    arguments: Provider.allCases)
  func lifetime(provider: Provider) {
    let expiresAt = now + 500_000
    #expect(decide(provider, status: 429, throttles: 3, expiresAt: expiresAt) == 480_000)
    #expect(decide(provider, status: 429, throttles: 4, expiresAt: expiresAt) == 500_000)
    #expect(decide(provider, status: 503, attempts: 8, expiresAt: expiresAt) == 500_000)
    #expect(decide(provider, status: 503, attempts: 8, expiresAt: now - 1) == 0)
    // A provider that asks for longer than the push lives: the engine drops the push rather than send it late.
    #expect(decide(provider, status: 429, retryAfter: .seconds(900), expiresAt: expiresAt) == 900_000)
  }
}
