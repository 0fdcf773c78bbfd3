import Foundation
import JSON
import Push
import Testing

@testable import Store

#if canImport(Glibc)
  import Glibc
#endif

/// The push issue's faults, each through the real sender against the fake providers (TLS, HTTP/2, both APNs
/// environments): pushes iPhones act on, one device per APNs token, provider answers that never cost a good
/// token, misconfigurations that delete nothing and say so, credentials kept out of the database, and answers
/// with absurd numbers or garbage bodies that crash nothing.
@Suite(.serialized) struct PushFaultTests {
  // MARK: gcm.message_id

  @Test func anIOSBurstIsOneAPNsRequestWithAGcmMessageId() throws {
    let rig = try PushRig(messaging: "coalesceWindow = 1s")
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.ios, apnsToken(1)), (.android, "fcm-token-1")])
    try rig.start()
    for number in 1...3 { try rig.store("N0CALL-7", ["burst \(number)"]) }
    #expect(try rig.fake.wait("apns", count: 1, status: 200))
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    #expect(try !rig.fake.wait("apns", count: 2, timeoutMs: 1500))
    let first = try #require(try rig.fake.requests("apns").first)
    let id = try #require(first.string(at: ["body", "gcm.message_id"]), "no gcm.message_id: \(first)")
    #expect(!id.isEmpty)
    #expect(first.string(at: ["body", "count"]) == "3")
    // FCM never carries it (a reserved key there).
    let fcm = try #require(try rig.fake.requests("fcm").first)
    #expect(fcm.int(at: ["status"]) == 200)
    #expect(fcm.value(at: ["body", "message", "data", "gcm.message_id"]) == nil)
    #expect(fcm.value(at: ["body", "message", "gcm.message_id"]) == nil)
    try rig.eventuallyEmpty()
    // The next push has its own.
    try rig.store("N0CALL-7", ["later"])
    #expect(try rig.fake.wait("apns", count: 2, status: 200))
    let second = try rig.fake.requests("apns").last?.string(at: ["body", "gcm.message_id"])
    #expect(second != nil && second != id)
  }

  // MARK: One device per APNs token

  @Test func anUpperAndALowerCaseRegistrationOfOneTokenAreOneDeviceAndOnePush() throws {
    let rig = try PushRig(android: false)
    defer { rig.close() }
    let token = apnsToken(0xBEEF)
    try rig.register("N0CALL-7", [(.ios, token.uppercased())], at: rig.clock.now() - 1000)
    try rig.register("N0CALL-7", [(.ios, token)])
    #expect(try rig.tokens("N0CALL-7") == [token])
    try rig.start()
    try rig.store("N0CALL-7", ["once"])
    #expect(try rig.fake.wait("apns", count: 1, status: 200))
    #expect(try rig.eventuallyEmpty())
    #expect(try !rig.fake.wait("apns", count: 2, timeoutMs: 700))
    #expect(try rig.fake.requests("apns").map { $0.string(at: ["deviceToken"]) } == [token])
  }

  // MARK: APNs environments

  @Test func aSandboxTokenUnderProductionIsDeliveredThroughTheSandboxAndKept() throws {
    let rig = try PushRig(android: false, production: true)
    defer { rig.close() }
    let token = apnsToken(7)
    try rig.fake.tokens(sandbox: [token])
    try rig.register("N0CALL-7", [(.ios, token)])
    try rig.start()
    try rig.store("N0CALL-7", ["first"])
    #expect(try rig.fake.wait("apns", count: 2))
    let tried = try rig.fake.requests("apns")
    #expect(tried.map { $0.string(at: ["environment"]) } == ["production", "sandbox"])
    #expect(tried.map { $0.int(at: ["status"]) } == [400, 200])
    #expect(tried.first?.string(at: ["response", "reason"]) == "BadDeviceToken")
    #expect(tried[0].value(at: ["body"]) == tried[1].value(at: ["body"]), "the same push, resent")
    #expect(try rig.eventuallyEmpty())
    #expect(try rig.tokens("N0CALL-7") == [token])
    #expect(try eventually { try rig.database.devices(of: "N0CALL-7").first?.apnsEnvironment == .sandbox })
    #expect(try rig.database.pushStatus().counters[.ios].tokensDeleted == 0)
    // Remembered: the next push goes straight to the sandbox, also after a restart.
    rig.service?.stop()
    try rig.start()
    try rig.store("N0CALL-7", ["second"])
    #expect(try rig.fake.wait("apns", count: 3))
    #expect(try rig.fake.requests("apns").last?.int(at: ["status"]) == 200)
    #expect(try rig.fake.requests("apns").last?.string(at: ["environment"]) == "sandbox")
    #expect(try rig.fake.requests("apns", environment: "production").count == 1)
    #expect(try rig.eventuallyEmpty())
  }

  @Test func aMisconfiguredProviderDeletesNothingAndSaysWhy() throws {
    let rig = try PushRig(android: false, production: true)
    defer { rig.close() }
    let tokens = (1...3).map { apnsToken(0x100 + $0) }
    try rig.fake.tokens(sandbox: tokens)
    for (index, token) in tokens.enumerated() { try rig.register("ST\(index)", [(.ios, token)]) }
    try rig.start()
    for index in tokens.indices { try rig.store("ST\(index)", ["hello"]) }
    #expect(try rig.fake.wait("apns", count: 6))
    #expect(
      try rig.fake.requests("apns", environment: "sandbox").allSatisfy { $0.int(at: ["status"]) == 200 })
    #expect(try rig.eventuallyEmpty())
    for (index, token) in tokens.enumerated() { #expect(try rig.tokens("ST\(index)") == [token]) }
    #expect(try rig.database.pushStatus().counters[.ios].tokensDeleted == 0)
    let status = try rig.database.pushStatus()
    let published = try #require(status.warnings[.ios], "no warning: \(status)")
    #expect(published.contains("production") && published.contains("sandbox"), "\(published)")
    #expect(try rig.database.pushStatus().state(of: .ios) == .ok)
    #expect(rig.log().contains("the production setting contradicts the devices"))
  }

  @Test func aTokenBothEnvironmentsRefuseIsDeleted() throws {
    let rig = try PushRig(android: false, production: false)
    defer { rig.close() }
    let (dead, live) = (apnsToken(0xDEAD), apnsToken(0x11FE))
    try rig.fake.set(#"{"apnsStrictTokens":true}"#)
    try rig.fake.tokens(production: [live])
    try rig.register("N0CALL-7", [(.ios, dead), (.ios, live)])
    try rig.start()
    try rig.store("N0CALL-7", ["hello"])
    #expect(try rig.fake.wait("apns", count: 4))
    #expect(
      try rig.fake.requests("apns", token: dead).map { $0.string(at: ["environment"]) } == [
        "sandbox", "production",
      ])
    #expect(try eventually { try rig.tokens("N0CALL-7") == [live] })
    #expect(try rig.database.devices(of: "N0CALL-7").first?.apnsEnvironment == .production)
    #expect(try rig.eventuallyEmpty())
    // One device in each environment is a valid fleet: no warning.
    #expect(try rig.database.pushStatus().warnings[.ios] == nil)
  }

  // MARK: FCM answers about the token

  @Test func fcmTokenErrorsDeleteOnlyTheTokensTheyName() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    // One accepted push first: it proves the service account's project, so SENDER_ID_MISMATCH may delete.
    try rig.register("N0CALL-7", [(.android, "token-live")])
    try rig.start()
    try rig.store("N0CALL-7", ["first"])
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    #expect(try rig.eventuallyEmpty())
    let answers = [
      "UNREGISTERED", "SENDER_ID_MISMATCH", "INVALID_TOKEN_FIELD", "INVALID_TOKEN_MESSAGE",
      "INVALID_ARGUMENT",
    ]
    for answer in answers {
      try rig.register("N0CALL-7", [(.android, "token-" + answer)])
      try rig.fake.script("fcm", token: "token-" + answer, answer: answer)
    }
    try rig.store("N0CALL-7", ["hello"])
    #expect(try rig.fake.wait("fcm", count: answers.count + 2))
    #expect(try eventually { try rig.tokens("N0CALL-7") == ["token-INVALID_ARGUMENT", "token-live"] })
    #expect(try rig.eventuallyEmpty())
    let log = rig.log()
    #expect(log.contains("push refused; not retrying"), "\(log)")
    #expect(log.contains("body=") && log.contains("Request contains an invalid argument."), "\(log)")
    #expect(try rig.database.pushStatus().state(of: .android) == .ok)
  }

  @Test func aServiceAccountOfAnotherProjectDeletesNoAndroidDevice() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    // FCM answers SENDER_ID_MISMATCH for every token when the account is for another Firebase project.
    try rig.fake.script("fcm", answer: "SENDER_ID_MISMATCH", #""persist":true"#)
    let stations = (1...4).map { "ST\($0)" }
    for (index, station) in stations.enumerated() {
      try rig.register(station, [(.android, "token-\(index)")])
    }
    try rig.start()
    for station in stations.prefix(2) { try rig.store(station, ["hello"]) }
    #expect(try rig.fake.wait("fcm", count: 2))
    #expect(try rig.eventuallyEmpty())
    // Two devices refused, none accepted: kept, and FCM still on.
    #expect(try rig.database.pushStatus().state(of: .android) == .ok)
    try rig.store(stations[2], ["hello"])
    #expect(
      try eventually {
        if case .stopped = try rig.database.pushStatus().state(of: .android) { true } else { false }
      })
    let state = try rig.database.pushStatus().state(of: .android).description
    #expect(
      state.contains("SENDER_ID_MISMATCH for 3 different devices") && state.contains("no token was deleted"),
      "\(state)")
    for (index, station) in stations.enumerated() { #expect(try rig.tokens(station) == ["token-\(index)"]) }
    #expect(try rig.database.pushStatus().counters[.android].tokensDeleted == 0)
    #expect(rig.log().contains("token kept"))
  }

  @Test func everyFCMPushFailingTheSameNonTokenWayStopsFCMAndDeletesNothing() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.android, "token-a"), (.android, "token-b")])
    try rig.fake.script("fcm", answer: "INVALID_ARGUMENT", #""persist":true"#)
    try rig.start()
    for (round, advance) in [(1, 0), (2, 4), (3, 4), (4, 3)] {
      rig.clock.advance(by: Int64(advance) * 60_000)
      try rig.store("N0CALL-7", ["round \(round)"])
      #expect(try rig.fake.wait("fcm", count: 2 * round))
      try #require(try rig.eventuallyEmpty(), "round \(round)")
      if round < 4 { #expect(try rig.database.pushStatus().state(of: .android) == .ok, "round \(round)") }
    }
    #expect(
      try eventually {
        if case .stopped = try rig.database.pushStatus().state(of: .android) { true } else { false }
      })
    let state = try rig.database.pushStatus().state(of: .android).description
    #expect(state.contains("400 INVALID_ARGUMENT") && state.contains("every push failed"), "\(state)")
    #expect(try rig.tokens("N0CALL-7") == ["token-a", "token-b"])
    #expect(try rig.database.pushStatus().counters[.android].tokensDeleted == 0)
    #expect(rig.log().contains("push provider stopped"))
    try rig.store("N0CALL-7", ["after the stop"])
    #expect(try !rig.fake.wait("fcm", count: 9, timeoutMs: 700))
  }

  // MARK: Credentials out of the database

  @Test func theAPNsProviderTokenIsInAnOwnerOnlyFileNeverInTheDatabase() throws {
    let rig = try PushRig()
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.ios, apnsToken(1)), (.android, "fcm-token-1")])
    try rig.start()
    try rig.store("N0CALL-7", ["hello"])
    #expect(try rig.fake.wait("apns", count: 1, status: 200))
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    try rig.eventuallyEmpty()
    let jwt = try #require(try rig.fake.requests("apns").first?.string(at: ["jwt", "raw"]))
    let accessToken = try #require(try rig.fake.requests("fcm").first?.string(at: ["accessToken"]))
    let meta = try rig.database.metaValues(prefix: "")
    #expect(meta["push.ios.providerToken"] == nil)
    #expect(!meta.values.contains { $0.contains(jwt) || $0.contains(accessToken) || $0.contains("eyJ") })
    let path = PushServiceOptions.apnsTokenFile(database: rig.databasePath)
    var info = stat()
    #expect(stat(path, &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600)
    #expect(info.st_uid == geteuid())
    let saved = try String(contentsOfFile: path, encoding: .utf8)
    #expect(saved.contains(jwt))
    #expect(!saved.contains(accessToken), "the FCM access token stays in memory")
  }

  // MARK: Absurd numbers and garbage

  @Test func absurd410TimestampsDeleteOrKeepWithoutACrash() throws {
    let rig = try PushRig(android: false)
    defer { rig.close() }
    let cases = [("1e300", true), ("1e400", true), ("123456789012345678901234567890", true), ("-5", false)]
    let now = rig.clock.now()
    for (index, (raw, _)) in cases.enumerated() {
      let token = apnsToken(0x410 + index)
      try rig.register("N0CALL-7", [(.ios, token)], at: now - 60_000)
      try rig.fake.script("apns", token: token, answer: "Unregistered", #""timestampRaw":"\#(raw)""#)
    }
    try rig.start()
    try rig.store("N0CALL-7", ["hello"])
    #expect(try rig.fake.wait("apns", count: cases.count, status: 410))
    #expect(try rig.eventuallyEmpty())
    let kept = Set(cases.enumerated().filter { !$0.element.1 }.map { apnsToken(0x410 + $0.offset) })
    #expect(try eventually { try rig.tokens("N0CALL-7") == kept })
    #expect(try rig.database.pushStatus().state(of: .ios) == .ok)
  }

  @Test func absurdAccessTokenLifetimesNeitherCrashNorStopFCM() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.android, "fcm-token-1")])
    try rig.fake.script(#"{"role":"oauth","responses":[{"expiresIn":1e300}]}"#)
    try rig.start()
    try rig.store("N0CALL-7", ["one"])
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    for (round, entry) in [
      #"{"expiresInRaw":"1e400"}"#, #"{"expiresIn":-5}"#, #"{"expiresInRaw":"9223372036854775807"}"#,
    ]
    .enumerated() {
      // Past the longest lifetime taken (an hour): a new token is bought, with the next absurd answer
      // (the fake's clock moves along, or it would call the new assertion's iat skewed).
      rig.clock.advance(by: 3_601_000)
      try rig.fake.set(#"{"clockOffsetMs":\#(Int64(round + 1) * 3_601_000)}"#)
      try rig.fake.script(#"{"role":"oauth","responses":[\#(entry)]}"#)
      try rig.store("N0CALL-7", ["round \(round)"])
      #expect(try rig.fake.wait("fcm", count: round + 2, status: 200), "\(entry)")
      #expect(try rig.fake.wait("oauth", count: round + 2, status: 200), "\(entry)")
    }
    #expect(try rig.eventuallyEmpty())
    #expect(try rig.database.pushStatus().state(of: .android) == .ok)
  }

  @Test func garbageAnswersFromEveryProviderCrashNothing() throws {
    let rig = try PushRig()
    defer { rig.close() }
    let stations = (0..<12).map { "ST\($0)" }
    for (index, station) in stations.enumerated() {
      try rig.register(station, [(.android, "fcm-\(index)"), (.ios, apnsToken(0x900 + index))])
    }
    // Every answer of every kind with a garbage body (seeded, so a failure replays), then normal ones.
    try rig.fake.script(#"{"role":"oauth","fuzz":11,"status":200}"#)
    for (index, answer) in ["UNREGISTERED", "INVALID_ARGUMENT", "QUOTA_EXCEEDED", "UNAVAILABLE"].enumerated()
    {
      try rig.fake.script("fcm", token: "fcm-\(index)", answer: answer, #""fuzz":\#(100 + index)"#)
    }
    for (index, answer) in [
      "Unregistered", "BadDeviceToken", "TooManyRequests", "BadTopic", "ExpiredProviderToken",
    ]
    .enumerated() {
      try rig.fake.script("apns", token: apnsToken(0x900 + index), answer: answer, #""fuzz":\#(200 + index)"#)
    }
    try rig.fake.script(#"{"role":"fcm","times":4,"fuzz":300,"status":200}"#)
    try rig.fake.script(#"{"role":"apns","times":4,"fuzz":400,"status":200}"#)
    try rig.start()
    for station in stations { try rig.store(station, ["hello"]) }
    #expect(try rig.fake.wait("apns", count: stations.count, timeoutMs: 20_000))
    // A garbage token answer is retried after the backoff (no waiting for it: the clock moves on).
    #expect(try rig.fake.wait("oauth", count: 1))
    rig.clock.advance(by: 15_000)
    rig.service?.notify()
    #expect(try rig.fake.wait("fcm", count: stations.count, timeoutMs: 20_000))
    // Still sending normally afterwards.
    let before = try rig.fake.requests("fcm").count
    try rig.register("LATE", [(.android, "fcm-late")])
    try rig.store("LATE", ["after the garbage"])
    #expect(try rig.fake.wait("fcm", count: before + 1, timeoutMs: 20_000))
    #expect(
      try eventually(timeout: 20) {
        try rig.fake.requests("fcm", token: "fcm-late").last?.int(at: ["status"]) == 200
      })
    let states = try rig.database.pushStatus()
    #expect(states.state(of: .android) == .ok && states.state(of: .ios) == .ok, "\(states)")
  }
}
