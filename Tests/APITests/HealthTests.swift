import API
import JSON
import Store
import Testing

/// `/health` under an injected clock: 200 while the listener's lease is fresh, 503 once it lapsed,
/// and `degraded` naming what is wrong.
@Suite struct HealthTests {
  private func health(_ api: APIFixture) -> Reply {
    Reply(api.handler.handle(APIRequest(method: "GET", path: "/health")))
  }

  private func degraded(_ reply: Reply) -> [String] {
    guard case .array(let items)? = reply["degraded"] else { return ["<no degraded array>"] }
    return items.compactMap(\.stringValue)
  }

  @Test func noListenerEverIsNotHeldAgainstTheResponder() throws {
    let api = try APIFixture()
    let reply = health(api)
    #expect(reply.status == 200)
    #expect(reply["status"] == .string("ok"))
    #expect(degraded(reply).isEmpty)
    #expect(reply.error == nil)
  }

  @Test func runningAndConnectedIsOkAndALapsedLeaseIs503() throws {
    let api = try APIFixture()
    #expect(try api.database.acquireLease(holder: "test", now: api.clock.now, ttlMs: 30_000))
    try api.database.publishListenerStatus(
      ListenerStatus(state: "online", connected: true, receiveOnly: false))
    let fresh = health(api)
    #expect(fresh.status == 200, "\(fresh.text)")
    #expect(fresh["status"] == .string("ok"))
    #expect(degraded(fresh).isEmpty)

    api.clock.advance(ms: 29_000)
    #expect(health(api).status == 200)
    api.clock.advance(ms: 2_000)
    let lapsed = health(api)
    #expect(lapsed.status == 503)
    #expect(lapsed.error == "the listener is not running")
    #expect(lapsed["status"] == .string("degraded"))
    #expect(degraded(lapsed).first?.contains("not running") == true)
    #expect(lapsed.header("Retry-After") != nil)
    // The database answered, so the rest of the report is there.
    #expect(lapsed["database"] == .string("ok"))

    // A listener that stopped cleanly (state published, lease released) is still expected back.
    try api.database.releaseLease(holder: "test")
    #expect(health(api).status == 503)
  }

  @Test func degradedReasonsWhileRunning() throws {
    let api = try APIFixture()
    #expect(try api.database.acquireLease(holder: "test", now: api.clock.now, ttlMs: 30_000))
    try api.database.publishListenerStatus(
      ListenerStatus(
        state: "backingOff", connected: false, receiveOnly: true,
        lastError: "cannot connect to rotate.aprs2.net:14580: Name or service not known"))
    try api.database.publishPushState(.stopped(reason: "InvalidProviderToken"), for: .ios)
    let reply = health(api)
    if case .object(let listener)? = reply["listener"] {
      #expect(
        listener["lastError"]
          == .string("cannot connect to rotate.aprs2.net:14580: Name or service not known"))
    } else {
      Issue.record("no listener object: \(reply.text)")
    }
    #expect(reply.status == 200)
    #expect(reply.error == nil)
    #expect(reply["status"] == .string("degraded"))
    let reasons = degraded(reply)
    #expect(reasons.count == 3, "\(reasons)")
    #expect(
      reasons.contains {
        $0
          == "the listener is not connected to APRS-IS (last error: cannot connect to rotate.aprs2.net:14580: "
          + "Name or service not known)"
      }, "\(reasons)")
    #expect(reasons.contains { $0.contains("receive-only") })
    #expect(reasons.contains { $0.contains("push for ios is stopped: InvalidProviderToken") })
  }

  @Test func theListenersFilterIsShownAsItsLineEntriesAndExactStations() throws {
    let api = try APIFixture()
    #expect(try api.database.acquireLease(holder: "test", now: api.clock.now, ttlMs: 30_000))
    var counts = ListenerCounts()
    counts[.notForUs] = 6
    try api.database.publishListenerStatus(
      ListenerStatus(
        state: "online", connected: true, receiveOnly: false, filterSize: 2_000, filterBytes: 509,
        filterEntries: 71, filterExactStations: 12, counts: counts))
    let reply = health(api)
    guard case .object(let listener)? = reply["listener"] else {
      Issue.record("no listener object: \(reply.text)")
      return
    }
    #expect(listener["filterSize"] == .number(JSONNumber(literal: "2000")))
    #expect(listener["filterBytes"] == .number(JSONNumber(literal: "509")))
    #expect(listener["filterEntries"] == .number(JSONNumber(literal: "71")))
    #expect(listener["filterExactStations"] == .number(JSONNumber(literal: "12")))
    #expect(listener["filterMode"] == nil)
    guard case .object(let counters)? = listener["counters"] else {
      Issue.record("no counters")
      return
    }
    #expect(counters["notForUs"] == .number(JSONNumber(literal: "6")))
  }

  @Test func aPushProviderThatSendsDespiteAWrongSettingIsDegradedWithItsWarning() throws {
    let api = try APIFixture()
    try api.database.publishPushState(.ok, for: .ios)
    try api.database.publishPushState(.ok, for: .android)
    let warning =
      "production = true in [messaging.ios.apns], but APNs production refuses every device token and sandbox "
      + "accepts them (2 devices so far): set production = false (pushes go through sandbox meanwhile)"
    try api.database.publishPushWarning(warning, for: .ios)
    let reply = health(api)
    #expect(reply.status == 200)
    #expect(reply["status"] == .string("degraded"))
    #expect(degraded(reply) == ["push for ios: " + warning])
    // Cleared: healthy again. A stopped provider's warning is not shown twice.
    try api.database.publishPushWarning(nil, for: .ios)
    #expect(health(api)["status"] == .string("ok"))
    try api.database.publishPushWarning(warning, for: .ios)
    try api.database.publishPushState(.stopped(reason: "InvalidProviderToken"), for: .ios)
    #expect(degraded(health(api)) == ["push for ios is stopped: InvalidProviderToken"])
  }

  /// An upgrade's config without `[messaging.webpush] subject`: Web Push is off, and `/health` says so with the
  /// key and the fix (200, degraded), until the warning is cleared by a restart with the fix.
  @Test func webPushLeftOffByAMissingSettingIsDegradedWithTheKeyAndTheFix() throws {
    let api = try APIFixture()
    try api.database.publishPushState(.off, for: .webpush)
    let warning =
      "/etc/aprs-cloud/aprs-cloud.ini: Web Push and UnifiedPush are off: messaging.webpush.subject is not set. "
      + "To turn them on, set `subject = mailto:you@example.org` (or https://…) in [messaging.webpush]; "
      + "`enabled = false` there silences this"
    try api.database.publishPushWarning(warning, for: .webpush)
    let reply = health(api)
    #expect(reply.status == 200)
    #expect(reply["status"] == .string("degraded"))
    #expect(degraded(reply) == ["push for webpush: " + warning])
    try api.database.publishPushWarning(nil, for: .webpush)
    #expect(health(api)["status"] == .string("ok"))
  }
}
