import Foundation
import JSON
import Push
import Store
import Testing

/// The push sender in process against the fake providers: real TLS, real HTTP/2, real SQLite.
/// Every wait is bounded (the fake's `/control/wait`, or a short poll of the database).
@Suite(.serialized) struct PushServiceTests {
  // MARK: Sending

  @Test func fcmExchangesTheServiceAccountForATokenAndSends() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.android, "fcm-token-1")])
    try registerStation(rig.database, "KJ7ABC-7", platform: nil, now: rig.clock.now())
    try rig.database.setAvatar(
      "KJ7ABC-7", icon: "radio", image: nil, hash: "icon:radio", now: rig.clock.now())
    try rig.start()
    try rig.store("N0CALL-7", ["Hello from the field"])
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    let oauth = try rig.fake.requests("oauth")
    #expect(oauth.count == 1)
    #expect(oauth.first?.value(at: ["authOk"]) == .bool(true))
    let request = try #require(try rig.fake.requests("fcm").first)
    #expect(request.value(at: ["authOk"]) == .bool(true))
    #expect(request.string(at: ["path"]) == "/v1/projects/aprs-cloud-test/messages:send")
    #expect(request.string(at: ["headers", ":scheme"]) == "https")
    let data = try object(request.value(at: ["body", "message", "data"]))
    #expect(data.keys == ["fromCall", "to", "seqId", "count", "fromAvatarIcon", "fromAvatarHash"])
    #expect(data.members.allSatisfy { if case .string = $0.value { true } else { false } })
    #expect(string(data["fromCall"]) == "KJ7ABC-7")
    #expect(string(data["to"]) == "N0CALL-7")
    #expect(string(data["seqId"]) == "1")
    #expect(string(data["count"]) == "1")
    #expect(request.string(at: ["body", "message", "notification", "body"]) == "Hello from the field")
    #expect(request.string(at: ["body", "message", "android", "collapse_key"]) == "aprs-N0CALL-7")
    #expect(try eventually { try rig.pending().isEmpty })
    #expect(rig.service?.providerStates[.android] == .ok)
    #expect(try rig.database.pushStatus().states[.android]?.description == "ok")
  }

  @Test func apnsReusesOneProviderTokenForAHundredSends() throws {
    let rig = try PushRig(android: false)
    defer { rig.close() }
    for number in 0..<100 { try rig.register("ST\(number)", [(.ios, apnsToken(number))]) }
    try rig.start()
    for number in 0..<100 { try rig.store("ST\(number)", ["message \(number)"]) }
    #expect(try rig.fake.wait("apns", count: 100, status: 200, timeoutMs: 20_000))
    let stats = try rig.fake.stats()
    #expect(stats.int(at: ["apnsJwts"]) == 1)
    #expect(stats.int(at: ["byRole", "apns", "total"]) == 100)
    #expect(stats.int(at: ["sessionsOpened"]) == 1)
    let request = try #require(try rig.fake.requests("apns").first)
    #expect(request.string(at: ["headers", "apns-topic"]) == "org.example.htcommander")
    #expect(request.string(at: ["headers", "apns-push-type"]) == "alert")
    #expect(request.string(at: ["headers", "apns-priority"]) == "10")
    #expect(request.string(at: ["headers", "apns-collapse-id"])?.hasPrefix("aprs-ST") == true)
    #expect(request.string(at: ["body", "aps", "alert", "title"]) == "KJ7ABC-7")
    #expect(try eventually { try rig.pending().isEmpty })
  }

  @Test func aBurstOfFiveIsOneRequestWithCountFive() throws {
    let rig = try PushRig(messaging: "coalesceWindow = 1s", ios: false)
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.android, "fcm-token-1")])
    try rig.start()
    for number in 1...5 {
      try rig.store("N0CALL-7", ["burst \(number)"], from: number == 5 ? "W5AGO" : "KJ7ABC-7")
    }
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    #expect(try !rig.fake.wait("fcm", count: 2, timeoutMs: 1500))
    let request = try #require(try rig.fake.requests("fcm").first)
    #expect(request.string(at: ["body", "message", "data", "count"]) == "5")
    #expect(request.string(at: ["body", "message", "data", "fromCall"]) == "W5AGO")
    #expect(request.string(at: ["body", "message", "notification", "title"]) == "5 new APRS messages")
    #expect(request.string(at: ["body", "message", "notification", "body"]) == "From W5AGO and KJ7ABC-7")
    #expect(try eventually { try rig.pending().isEmpty })
  }

  // MARK: Credentials

  @Test func theAccessTokenIsRefreshedBeforeItExpiresAndAfterAPlain401() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    try rig.fake.set(#"{"tokenLifetime":60}"#)
    try rig.register("N0CALL-7", [(.android, "fcm-token-1")])
    try rig.start()
    try rig.store("N0CALL-7", ["one"])
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    // 60 s tokens are refreshed a quarter before they expire: 50 s later a new one is bought
    // (the old one, still valid, carries the push meanwhile).
    rig.clock.advance(by: 50_000)
    try rig.store("N0CALL-7", ["two"])
    #expect(try rig.fake.wait("fcm", count: 2, status: 200))
    #expect(try rig.fake.wait("oauth", count: 2, status: 200))
    // A revoked token earns a plain 401: a new token, and the same push sent once more.
    try rig.fake.control("POST", "/control/revoke")
    try rig.store("N0CALL-7", ["three"])
    #expect(try rig.fake.wait("fcm", count: 4))
    let fcm = try rig.fake.requests("fcm")
    #expect(fcm.map { $0.int(at: ["status"]) } == [200, 200, 401, 200])
    #expect(
      fcm.map { $0.string(at: ["accessToken"]) } == [
        "ya29.fake-1", "ya29.fake-1", "ya29.fake-2", "ya29.fake-3",
      ])
    #expect(fcm[2].value(at: ["body"]) == fcm[3].value(at: ["body"]))
    #expect(fcm[3].string(at: ["body", "message", "data", "count"]) == "3")
    #expect(try rig.fake.requests("oauth").count == 3)
    #expect(try !rig.fake.wait("fcm", count: 5, timeoutMs: 500))
    #expect(try eventually { try rig.pending().isEmpty })
  }

  @Test func anExpiredProviderTokenIsReSignedAndThePushResentOnce() throws {
    let rig = try PushRig(android: false)
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.ios, apnsToken(1))])
    try rig.fake.script(#"{"role":"apns","status":403,"reason":"ExpiredProviderToken"}"#)
    try rig.start()
    try rig.store("N0CALL-7", ["hello"])
    #expect(try rig.fake.wait("apns", count: 2))
    let apns = try rig.fake.requests("apns")
    #expect(apns.map { $0.int(at: ["status"]) } == [403, 200])
    #expect(apns[0].string(at: ["jwt", "raw"]) != apns[1].string(at: ["jwt", "raw"]))
    #expect(try eventually { try rig.pending().isEmpty })
  }

  @Test func theAPNsProviderTokenSurvivesARestartAndAStaleOneIsReplaced() throws {
    let rig = try PushRig(android: false)
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.ios, apnsToken(1))])
    try rig.start()
    try rig.store("N0CALL-7", ["before the restart"])
    #expect(try rig.fake.wait("apns", count: 1, status: 200))
    try #require(try rig.eventuallyEmpty())
    rig.service?.stop()
    try rig.start()
    try rig.store("N0CALL-7", ["after the restart"])
    #expect(try rig.fake.wait("apns", count: 2, status: 200))
    #expect(try rig.fake.stats().int(at: ["apnsJwts"]) == 1)
    try rig.eventuallyEmpty()
    // A cached token APNs calls invalid (a replaced key) is re-signed once, not a stopped provider.
    rig.service?.stop()
    let issued = rig.clock.now()
    let forged =
      [#"{"alg":"ES256","kid":"TESTKEY123"}"#, #"{"iss":"TEAM123456","iat":\#(issued / 1000)}"#]
      .map { base64URL(Data($0.utf8)) }.joined(separator: ".") + "."
      + base64URL(Data(repeating: 7, count: 64))
    let stale = "TESTKEY123 TEAM123456 \(issued) \(forged)"
    try rig.writeAPNsTokenFile(stale)
    try rig.start()
    try rig.store("N0CALL-7", ["with a stale token"])
    #expect(try rig.fake.wait("apns", count: 4))
    let statuses = try rig.fake.requests("apns").map { $0.int(at: ["status"]) }
    #expect(statuses == [200, 200, 403, 200], "\(statuses)")
    #expect(try rig.database.pushStatus().states[.ios]?.description == "ok")
    try rig.eventuallyEmpty()
  }

  @Test func aRefusedServiceAccountStopsAndroidLoudly() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.android, "fcm-token-1")])
    try rig.fake.script(
      #"{"role":"oauth","status":400,"error":"invalid_grant","errorDescription":"Invalid JWT Signature."}"#)
    try rig.start()
    try rig.store("N0CALL-7", ["hello"])
    #expect(try rig.fake.wait("oauth", count: 1, status: 400))
    #expect(
      try eventually {
        try rig.database.pushStatus().states[.android]?.description.hasPrefix("stopped: token endpoint")
          == true
      })
    let state = try rig.database.pushStatus().states[.android]?.description ?? ""
    #expect(state.contains("invalid_grant") && state.contains("clock"), "\(state)")
    #expect(try rig.fake.requests("fcm").isEmpty)
    #expect(try rig.eventuallyEmpty())
  }

  // MARK: Connections

  @Test func aGoawayIsFollowedByANewConnection() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.android, "fcm-token-1")])
    try rig.fake.script(#"{"role":"fcm","goaway":true}"#)
    try rig.start()
    try rig.store("N0CALL-7", ["one"])
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    try rig.eventuallyEmpty()
    try rig.store("N0CALL-7", ["two"])
    #expect(try rig.fake.wait("fcm", count: 2, status: 200))
    #expect(try rig.fake.stats().int(at: ["goawaysSent"]) == 1)
    #expect(try rig.fake.stats().int(at: ["sessionsOpened"]) == 2)
    #expect(try rig.eventuallyEmpty())
  }

  @Test func manyPushesShareOneConnectionEvenWhenAPNsOpensWithOneStream() throws {
    let rig = try PushRig(android: false)
    defer { rig.close() }
    try rig.fake.set(#"{"apnsStreamGate":true}"#)
    for number in 0..<40 { try rig.register("ST\(number)", [(.ios, apnsToken(number))]) }
    try rig.start()
    for number in 0..<40 { try rig.store("ST\(number)", ["m"]) }
    #expect(try rig.fake.wait("apns", count: 40, status: 200))
    let stats = try rig.fake.stats()
    #expect(stats.int(at: ["sessionsOpened"]) == 1)
    #expect((stats.int(at: ["maxConcurrentStreams"]) ?? 0) > 1)
    #expect(try rig.eventuallyEmpty())
  }

  @Test func devicesNotRefreshedWithinTheExpiryGetNoPush() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    let now = rig.clock.now()
    try rig.register("N0CALL-7", [(.android, "stale-token")], at: now - 8 * 86_400_000)
    try rig.register("N0CALL-8", [(.android, "fresh-token")], at: now)
    try rig.start()
    try rig.store("N0CALL-7", ["to the stale device"])
    try rig.store("N0CALL-8", ["to the fresh device"])
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    #expect(try rig.eventuallyEmpty())
    #expect(try !rig.fake.wait("fcm", count: 2, timeoutMs: 500))
    #expect(try rig.fake.requests("fcm").first?.string(at: ["body", "message", "token"]) == "fresh-token")
  }

  // MARK: Errors

  @Test func unregisteredDeletesTheFCMToken() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.android, "dead-token"), (.android, "live-token")])
    try rig.fake.script(#"{"role":"fcm","token":"dead-token","status":404}"#)
    try rig.start()
    try rig.store("N0CALL-7", ["hello"])
    #expect(try rig.fake.wait("fcm", count: 2))
    #expect(try eventually { try rig.tokens("N0CALL-7") == ["live-token"] })
    #expect(try eventually { try rig.pending().isEmpty })
    #expect(rig.log().contains("push token is dead"))
  }

  @Test func apns410DeletesUnlessTheTokenWasRefreshedAfterIt() throws {
    let rig = try PushRig(android: false)
    defer { rig.close() }
    let now = rig.clock.now()
    try rig.register("N0CALL-7", [(.ios, apnsToken(1)), (.ios, apnsToken(2))], at: now - 60_000)
    // Token 2 was sent again (heartbeat) after APNs learned it was gone: keep it.
    try rig.register("N0CALL-7", [(.ios, apnsToken(2))], at: now)
    try rig.fake.script(
      #"{"role":"apns","token":"\#(apnsToken(1))","status":410,"timestamp":\#(now - 1000)}"#)
    try rig.fake.script(
      #"{"role":"apns","token":"\#(apnsToken(2))","status":410,"timestamp":\#(now - 30_000)}"#)
    try rig.start()
    try rig.store("N0CALL-7", ["hello"])
    #expect(try rig.fake.wait("apns", count: 2, status: 410))
    #expect(try eventually { try rig.tokens("N0CALL-7") == [apnsToken(2)] })
    #expect(try eventually { try rig.pending().isEmpty })
  }

  @Test func badDeviceTokenDeletesAndAMalformedTokenIsNeverSent() throws {
    let rig = try PushRig(android: false)
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.ios, apnsToken(1)), (.ios, "not-hex/../../x"), (.ios, apnsToken(3))])
    // Refused in both environments (the token is tried in the other one before it is called dead).
    try rig.fake.script(
      #"{"role":"apns","token":"\#(apnsToken(1))","times":2,"status":400,"reason":"BadDeviceToken"}"#)
    try rig.start()
    try rig.store("N0CALL-7", ["hello"])
    #expect(try rig.fake.wait("apns", count: 3))
    #expect(try eventually { try rig.tokens("N0CALL-7") == [apnsToken(3)] })
    #expect(try rig.fake.requests("unknown").isEmpty)
    #expect(try eventually { try rig.pending().isEmpty })
  }

  @Test func aTooManyRequestsAnswerIsRetriedAfterItsRetryAfter() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.android, "fcm-token-1")])
    try rig.fake.script(#"{"role":"fcm","status":429,"retryAfter":120}"#)
    try rig.start()
    let before = rig.clock.now()
    try rig.store("N0CALL-7", ["hello"])
    #expect(try rig.fake.wait("fcm", count: 1, status: 429))
    #expect(try eventually { try rig.pending().first?.attempts == 1 })
    let row = try #require(try rig.pending().first)
    #expect(row.nextAttemptAt >= before + 120_000)
    #expect(row.nextAttemptAt <= rig.clock.now() + 121_000)
    rig.clock.advance(by: 60_000)
    rig.service?.notify()
    #expect(try !rig.fake.wait("fcm", count: 2, timeoutMs: 700))
    rig.clock.advance(by: 61_000)
    rig.service?.notify()
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    #expect(try rig.fake.requests("fcm").count == 2)
    #expect(try eventually { try rig.pending().isEmpty })
  }

  @Test func serverErrorsAndHTMLPagesBackOffAtLeastTenSeconds() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.android, "fcm-token-1")])
    try rig.fake.script(#"{"role":"fcm","responses":[{"status":503},{"status":502,"html":"<h1>502</h1>"}]}"#)
    try rig.start()
    let before = rig.clock.now()
    try rig.store("N0CALL-7", ["hello"])
    #expect(try rig.fake.wait("fcm", count: 1, status: 503))
    #expect(try eventually { try rig.pending().first?.attempts == 1 })
    let first = try #require(try rig.pending().first)
    #expect(first.nextAttemptAt >= before + 10_000)
    #expect(first.nextAttemptAt <= rig.clock.now() + 15_000)
    rig.clock.advance(by: 15_001)
    rig.service?.notify()
    #expect(try rig.fake.wait("fcm", count: 1, status: 502))
    #expect(try eventually { try rig.pending().first?.attempts == 2 })
    let second = try #require(try rig.pending().first)
    #expect(second.nextAttemptAt >= first.nextAttemptAt + 20_000)
    rig.clock.advance(by: 31_000)
    rig.service?.notify()
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    #expect(try rig.fake.requests("fcm").count == 3)
    #expect(try eventually { try rig.pending().isEmpty })
  }

  @Test func invalidProviderTokenStopsIOSWhileAndroidKeepsSending() throws {
    let rig = try PushRig()
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.android, "fcm-token-1"), (.ios, apnsToken(1))])
    try rig.fake.script(#"{"role":"apns","persist":true,"status":403,"reason":"InvalidProviderToken"}"#)
    try rig.start()
    try rig.store("N0CALL-7", ["one"])
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    #expect(try rig.fake.wait("apns", count: 1, status: 403))
    #expect(
      try eventually {
        try rig.database.pushStatus().states[.ios]?.description.hasPrefix("stopped: 403 InvalidProviderToken")
          == true
      })
    #expect(rig.service?.providerStates[.ios] != .ok)
    #expect(rig.service?.providerStates[.android] == .ok)
    #expect(rig.log().contains("push provider stopped"))
    try rig.store("N0CALL-7", ["two"])
    #expect(try rig.fake.wait("fcm", count: 2, status: 200))
    #expect(try rig.fake.requests("apns").count == 1)
    #expect(try eventually { try rig.pending().isEmpty })
    #expect(try rig.database.pushStatus().states[.android]?.description == "ok")
  }

  @Test func anUnreadableKeyFileStopsThatProviderAtStart() throws {
    let rig = try PushRig(iosKeyFile: "missing.p8")
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.android, "fcm-token-1"), (.ios, apnsToken(1))])
    try rig.start()
    let state = try #require(try rig.database.pushStatus().states[.ios]?.description)
    #expect(state.hasPrefix("stopped: messaging.ios.apns.keyFile"))
    #expect(state.contains("missing.p8"))
    try rig.store("N0CALL-7", ["hello"])
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    #expect(try eventually { try rig.pending().isEmpty })
    #expect(try rig.fake.requests("apns").isEmpty)
  }

  /// Without any provider the rows wait (credentials added and a restart within maxAge still send
  /// them); only rows older than maxAge are dropped.
  @Test func withoutCredentialsPushIsOffAndMessagesStayStored() throws {
    let rig = try PushRig(messaging: "maxAge = 10m", android: false, ios: false)
    defer { rig.close() }
    let now = rig.clock.now()
    try rig.register("N0CALL-7", [(.android, "fcm-token-1")], at: now - 3_600_000)
    try rig.store("N0CALL-7", ["stale"], at: now - 11 * 60_000)
    try rig.store("N0CALL-7", ["hello"], at: now - 60_000)
    #expect(try rig.pending().count == 2)
    try rig.start()
    #expect(try rig.database.pushStatus().states[.android]?.description == "off")
    #expect(try rig.database.pushStatus().states[.ios]?.description == "off")
    // One poll decides both rows: the stale one is dropped, the fresh one stays pending.
    #expect(try eventually { try rig.pending().count == 1 })
    #expect(rig.log().contains("older than maxAge"))
    #expect(try rig.pending().count == 1)
    #expect(try rig.database.sync(station: "N0CALL-7", since: 0, now: rig.clock.now()).messages.count == 2)
    #expect(rig.log().contains("push is off for this platform"))
  }

  @Test func pushesOlderThanMaxAgeAreDroppedNotSent() throws {
    let rig = try PushRig(messaging: "coalesceWindow = 0\nmaxAge = 10m", ios: false)
    defer { rig.close() }
    let now = rig.clock.now()
    try rig.register("N0CALL-7", [(.android, "fcm-token-1")], at: now - 3_600_000)
    try rig.store("N0CALL-7", ["stale"], at: now - 11 * 60_000)
    try rig.store("N0CALL-7", ["fresh"], at: now - 9 * 60_000)
    try rig.start()
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    #expect(try eventually { try rig.pending().isEmpty })
    #expect(try !rig.fake.wait("fcm", count: 2, timeoutMs: 600))
    // The stale message is still unpulled, so it is counted; only its own push was dropped.
    #expect(try rig.fake.requests("fcm").first?.string(at: ["body", "message", "data", "count"]) == "2")
    #expect(rig.log().contains("older than maxAge"))
  }

  @Test func pushesQueuedBeforeStartGoOutOnceAndStopLeavesTheRestQueued() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    for number in 0..<3 { try rig.register("ST\(number)", [(.android, "token-\(number)")]) }
    for number in 0..<3 { try rig.store("ST\(number)", ["queued \(number)"]) }
    try rig.start()
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    #expect(try rig.fake.requests("fcm").count == 3)
    #expect(try eventually { try rig.pending().isEmpty })
    #expect(try !rig.fake.wait("fcm", count: 4, timeoutMs: 600))
  }
}

/// base64url without padding.
func base64URL(_ data: Data) -> String {
  data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    .replacingOccurrences(of: "=", with: "")
}
