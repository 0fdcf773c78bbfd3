import Testing

@testable import Push

/// Subscriptions refused the same way on every push (`WebPushRefusals`), driven by a clock the test moves.
@Suite struct WebPushRefusalsTests {
  static let t0: Int64 = 1_800_000_000_000
  static let hour: Int64 = 3_600_000
  static let token = "https://push.example.org/wpush/v2/abc"

  /// One push to `token` answered `status` (with a JSON `reason` when given) at `now`.
  static func answer(
    _ refusals: inout WebPushRefusals, _ status: Int, reason: String? = nil, token: String = token,
    at now: Int64
  ) -> PushDecision {
    let body = reason.map { Array(#"{"reason":"\#($0)"}"#.utf8) } ?? []
    let response = ProviderResponse(status: status, body: body)
    let decision = RetryPolicy.webPush(response, now: now, attempts: 0, jitter: 0)
    return refusals.decide(token: token, response: response, decision: decision, now: now)
  }

  static func isDelete(_ decision: PushDecision) -> Bool {
    if case .gone = decision { return true }
    return false
  }

  @Test(arguments: [400, 403, 405])
  func fiveRefusalsOverADayDeleteTheSubscriptionSayingWhy(status: Int) throws {
    var refusals = WebPushRefusals()
    for index in 0..<4 {
      let decision = Self.answer(&refusals, status, at: Self.t0 + Int64(index) * 6 * Self.hour)
      guard case .giveUp = decision else {
        Issue.record("push \(index + 1): \(decision)")
        return
      }
    }
    let last = Self.answer(&refusals, status, at: Self.t0 + 24 * Self.hour)
    guard case .gone(let reason, let refreshedBefore) = last else {
      Issue.record("\(last)")
      return
    }
    #expect(reason.hasPrefix("\(status) refused the same way on 5 pushes in a row over 24 h: "), "\(reason)")
    #expect(reason.contains(try #require(WebPushRefusals.refusals[status])))
    #expect(refreshedBefore == nil)
    #expect(refusals.trackedCount == 0)
  }

  @Test func fiveRefusalsWithinADayAreNotEnoughNorFourOverMore() {
    var refusals = WebPushRefusals()
    // Five within 4 h and a sixth just short of a day: kept; the next, a day after the first: deleted.
    for index in 0..<5 {
      #expect(!Self.isDelete(Self.answer(&refusals, 403, at: Self.t0 + Int64(index) * Self.hour)))
    }
    #expect(!Self.isDelete(Self.answer(&refusals, 403, at: Self.t0 + 24 * Self.hour - 1)))
    #expect(Self.isDelete(Self.answer(&refusals, 403, at: Self.t0 + 24 * Self.hour)))
    // Four over three days: kept.
    var other = WebPushRefusals()
    for day in 0..<4 {
      #expect(!Self.isDelete(Self.answer(&other, 403, at: Self.t0 + Int64(day) * 24 * Self.hour)))
    }
  }

  @Test func anAcceptedPushOrAnotherRefusalStartsTheRowAgain() {
    var refusals = WebPushRefusals()
    var now = Self.t0
    for _ in 0..<4 {
      _ = Self.answer(&refusals, 403, at: now)
      now += 8 * Self.hour
    }
    #expect(Self.answer(&refusals, 201, at: now) == .delivered)
    #expect(refusals.trackedCount == 0)
    for _ in 0..<4 {
      now += 8 * Self.hour
      #expect(!Self.isDelete(Self.answer(&refusals, 403, at: now)))
    }
    // A 400 now is a new row: the 403s before it do not count.
    now += 8 * Self.hour
    #expect(!Self.isDelete(Self.answer(&refusals, 400, at: now)))
    // Refusals that do not count (401, 413) break the row too.
    var broken = WebPushRefusals()
    for index in 0..<8 {
      let status = index == 4 ? 401 : 403
      #expect(!Self.isDelete(Self.answer(&broken, status, at: Self.t0 + Int64(index) * 6 * Self.hour)))
    }
  }

  @Test func retriedAnswersSayNothingAboutTheSubscription() {
    var refusals = WebPushRefusals()
    var now = Self.t0
    for _ in 0..<4 {
      _ = Self.answer(&refusals, 403, at: now)
      now += 3 * Self.hour
      // A 5xx or 429 between the refusals (retried) leaves the row as it is.
      guard case .retry = Self.answer(&refusals, 503, at: now) else {
        Issue.record("503 is retried")
        return
      }
      _ = Self.answer(&refusals, 429, at: now)
      now += 3 * Self.hour
    }
    #expect(Self.isDelete(Self.answer(&refusals, 403, at: now)))
  }

  /// Apple's `403 BadJwtToken` (a VAPID contact it does not take) and its other reasons about the request, not the
  /// subscription, refuse every subscription alike: the server's fault, never a reason to delete.
  @Test(
    arguments: [
      (403, "BadJwtToken"), (403, "InvalidProviderToken"), (403, "ExpiredProviderToken"), (403, "Forbidden"),
      (400, "BadExpirationDate"), (400, "BadTopic"), (400, "BadPriority"),
    ])
  func refusalsOfTheServersOwnRequestNeverCount(status: Int, reason: String) {
    var refusals = WebPushRefusals()
    for day in 0..<10 {
      let now = Self.t0 + Int64(day) * 24 * Self.hour
      #expect(!Self.isDelete(Self.answer(&refusals, status, reason: reason, at: now)))
    }
    #expect(refusals.trackedCount == 0)
  }

  /// A reason about the subscription, one Apple does not document (another push service's own) or none counts.
  @Test(arguments: [(400, "BadDeviceToken"), (403, "VapidPkHashMismatch"), (405, "MethodNotAllowed")])
  func refusalsAboutTheSubscriptionCount(status: Int, reason: String) {
    var refusals = WebPushRefusals()
    for index in 0..<5 {
      let now = Self.t0 + Int64(index) * 6 * Self.hour
      #expect(Self.isDelete(Self.answer(&refusals, status, reason: reason, at: now)) == (index == 4))
    }
  }

  @Test func eachSubscriptionHasItsOwnRowAndTheTrackedAreBounded() {
    var refusals = WebPushRefusals()
    for index in 0..<5 {
      let now = Self.t0 + Int64(index) * 6 * Self.hour
      #expect(!Self.isDelete(Self.answer(&refusals, 403, token: "https://a.example/\(index)", at: now)))
      #expect(Self.isDelete(Self.answer(&refusals, 403, at: now)) == (index == 4))
    }
    var many = WebPushRefusals()
    for index in 0...WebPushRefusals.maximumTracked {
      _ = Self.answer(&many, 403, token: "https://a.example/\(index)", at: Self.t0 + Int64(index))
    }
    #expect(many.trackedCount == WebPushRefusals.maximumTracked)
    // The one refused longest ago was forgotten: its row started again, so a day later it is kept (it would be
    // its fifth refusal over a day otherwise).
    for index in 1...4 {
      let now = Self.t0 + Int64(index) * 6 * Self.hour
      #expect(!Self.isDelete(Self.answer(&many, 403, token: "https://a.example/0", at: now)), "\(index)")
    }
  }
}
