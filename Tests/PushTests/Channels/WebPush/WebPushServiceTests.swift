import Config
import Foundation
import JSON
import Logging
import Platform
import Push
import Store
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// An in-process `PushService` with Web Push on, against a `WebPushFake`, with its own database and log.
final class WebPushRig: PushServiceRig {
  let fake: WebPushFake

  init(messaging: String = "coalesceWindow = 0", webpush: String = "", allowPrivate: Bool = true) throws {
    fake = try WebPushFake()
    try super.init(
      directory: fake.directory,
      configText: """
        [messaging]
        \(messaging)
        [messaging.webpush]
        subject = mailto:ops@example.org
        caFile = ca.pem
        allowPrivateEndpoints = \(allowPrivate)
        \(webpush)

        """)
  }

  override func close() {
    super.close()
    fake.stop()
    fake.removeFiles()
  }

  /// The VAPID key files (beside the database unless the config names one).
  var keyFile: String { directory + "/vapid.pem" }
  var publicKeyFile: String { VAPIDPublicKeyFile.path(forKeyFile: keyFile) }

  /// Registers `station` with the subscription, as /v1/register stores it.
  func register(
    _ station: String, _ subscription: WebPushFake.Subscription, platform: DevicePlatform = .webpush
  )
    throws
  {
    let keys = subscription.p256dh.flatMap { p256dh in
      subscription.auth.flatMap { WebPushKeys(p256dh: p256dh, auth: $0) }
    }
    let parts = station.split(separator: "-", maxSplits: 1)
    _ = try database.upsertStation(
      StationUpsert(
        address: station, base: String(parts[0]), ssid: parts.count > 1 ? Int(parts[1]) ?? 0 : 0,
        platform: platform, pushToken: subscription.endpoint, ackMessages: false, isRegistration: true,
        webPushKeys: keys),
      now: clock.now())
  }
}

/// The Web Push sender in process against the fake push service: real TLS, real SQLite, every body decrypted by
/// http_ece with the subscription's private key, every VAPID JWT verified. Waits are bounded.
@Suite(.serialized) struct WebPushServiceTests {
  @Test func anEncryptedPushArrivesWithVAPIDAndTheHeaders() throws {
    let rig = try WebPushRig()
    defer { rig.close() }
    let subscription = try rig.fake.subscribe()
    try rig.register("N0CALL-7", subscription)
    try registerStation(rig.database, "KJ7ABC-7", platform: nil, now: rig.clock.now())
    try rig.database.setAvatar(
      "KJ7ABC-7", icon: "radio", image: nil, hash: "icon:radio", now: rig.clock.now())
    try rig.start()
    try rig.store("N0CALL-7", ["Hello over Web Push"])
    #expect(try rig.fake.wait(subscription, count: 1, status: 201), "\((try? rig.fake.requests()) ?? [])")
    let request = try #require(try rig.fake.requests(subscription).first)
    // Decrypted by http_ece: the data keys of the FCM push plus title and body.
    let json = try object(request.value(at: ["json"]))
    #expect(
      json.keys == ["title", "body", "fromCall", "to", "seqId", "count", "fromAvatarIcon", "fromAvatarHash"])
    #expect(string(json["title"]) == "KJ7ABC-7")
    #expect(string(json["body"]) == "Hello over Web Push")
    #expect(string(json["fromCall"]) == "KJ7ABC-7")
    #expect(string(json["to"]) == "N0CALL-7")
    #expect(string(json["count"]) == "1")
    #expect(request.string(at: ["headers", "content-encoding"]) == "aes128gcm")
    #expect(request.string(at: ["headers", "urgency"]) == "high")
    let ttl = try #require(request.string(at: ["headers", "ttl"]).flatMap { Int($0) })
    #expect((3500...3600).contains(ttl))
    let topic = try #require(request.string(at: ["headers", "topic"]))
    #expect(topic.count == 22)
    #expect(!topic.contains("N0CALL"))
    // VAPID: verified by the fake; aud the endpoint's origin; k the key the responder publishes.
    #expect(request.string(at: ["vapid", "aud"]) == "https://127.0.0.1:\(rig.fake.port)")
    #expect(request.string(at: ["vapid", "sub"]) == "mailto:ops@example.org")
    let exp = try #require(request.int(at: ["vapid", "exp"]))
    #expect(exp > rig.clock.now() / 1000 && exp <= rig.clock.now() / 1000 + 86_400)
    let published = try #require(VAPIDPublicKeyFile.read(rig.publicKeyFile))
    #expect(request.string(at: ["vapid", "k"]) == published)
    #expect(try eventually { try rig.pending().isEmpty })
    #expect(rig.service?.providerStates[.webpush] == .ok)
    #expect(rig.service?.providerStates[.unifiedpush] == .ok)
    #expect(try rig.database.pushStatus().states[.webpush]?.description == "ok")
  }

  @Test func unifiedPushWithoutKeysGoesUnencryptedWithVAPID() throws {
    let rig = try WebPushRig()
    defer { rig.close() }
    let subscription = try rig.fake.subscribe(keys: false)
    try rig.register("N0CALL-7", subscription, platform: .unifiedpush)
    try rig.start()
    try rig.store("N0CALL-7", ["Plain for the distributor"])
    #expect(try rig.fake.wait(subscription, count: 1, status: 201), "\((try? rig.fake.requests()) ?? [])")
    let request = try #require(try rig.fake.requests(subscription).first)
    #expect(request.string(at: ["json", "body"]) == "Plain for the distributor")
    #expect(request.value(at: ["headers", "content-encoding"]) == nil)
    #expect(request.string(at: ["headers", "content-type"]) == "application/json")
    #expect(request.string(at: ["vapid", "aud"]) == "https://127.0.0.1:\(rig.fake.port)")
  }

  @Test func theTopicIsPerStationAndAPushToAnotherOriginHasItsOwnAudience() throws {
    let rig = try WebPushRig()
    defer { rig.close() }
    let first = try rig.fake.subscribe()
    let second = try rig.fake.subscribe(host: "localhost")
    try rig.register("N0CALL-7", first)
    try rig.register("N0CALL-7", second)
    try rig.register("N0CALL-8", try rig.fake.subscribe())
    try rig.start()
    try rig.store("N0CALL-7", ["one"])
    #expect(try rig.fake.wait(count: 2, status: 201))
    try rig.store("N0CALL-7", ["two"])
    try rig.store("N0CALL-8", ["three"])
    #expect(try rig.fake.wait(count: 5, status: 201))
    let firstRequests = try rig.fake.requests(first)
    let secondRequests = try rig.fake.requests(second)
    #expect(firstRequests.count == 2 && secondRequests.count == 2)
    let topics = Set((firstRequests + secondRequests).compactMap { $0.string(at: ["headers", "topic"]) })
    #expect(topics.count == 1, "one topic for every push of N0CALL-7")
    let other = try rig.fake.requests().filter { $0.string(at: ["json", "to"]) == "N0CALL-8" }
    #expect(other.count == 1)
    #expect(other.first?.string(at: ["headers", "topic"]).map { !topics.contains($0) } == true)
    #expect(secondRequests.first?.string(at: ["vapid", "aud"]) == "https://localhost:\(rig.fake.port)")
    #expect(firstRequests.first?.string(at: ["vapid", "aud"]) == "https://127.0.0.1:\(rig.fake.port)")
    // One token per origin, reused for the second push.
    #expect(
      firstRequests[0].string(at: ["headers", "authorization"])
        == firstRequests[1].string(at: ["headers", "authorization"]))
  }

  @Test func pushesToOneOriginShareOneConnection() throws {
    let rig = try WebPushRig()
    defer { rig.close() }
    var subscriptions: [WebPushFake.Subscription] = []
    for number in 0..<30 {
      let subscription = try rig.fake.subscribe()
      subscriptions.append(subscription)
      try rig.register("ST\(number)", subscription)
    }
    try rig.start()
    for number in 0..<30 { try rig.store("ST\(number)", ["message \(number)"]) }
    #expect(try rig.fake.wait(count: 30, status: 201, timeoutMs: 20_000))
    #expect(try rig.fake.connections() == 1)
    let decrypted = try rig.fake.requests().compactMap { $0.string(at: ["json", "body"]) }
    #expect(Set(decrypted) == Set((0..<30).map { "message \($0)" }))
    #expect(try eventually { try rig.pending().isEmpty })
  }

  @Test func goneSubscriptionsAreDeleted() throws {
    let rig = try WebPushRig()
    defer { rig.close() }
    let gone = try rig.fake.subscribe()
    let unknown = try rig.fake.subscribe(keys: false)
    let alive = try rig.fake.subscribe()
    try rig.register("N0CALL-7", gone)
    try rig.register("N0CALL-7", unknown, platform: .unifiedpush)
    try rig.register("N0CALL-7", alive)
    try rig.fake.unsubscribe(gone, gone: true)
    try rig.fake.unsubscribe(unknown)
    try rig.start()
    try rig.store("N0CALL-7", ["hello"])
    #expect(try rig.fake.wait(count: 3))
    #expect(try eventually { try rig.tokens("N0CALL-7") == [alive.endpoint] })
    #expect(try rig.fake.requests(gone).first?.int(at: ["status"]) == 410)
    #expect(try rig.fake.requests(unknown).first?.int(at: ["status"]) == 404)
    #expect(try eventually { try rig.pending().isEmpty })
    #expect(rig.log().contains("410 the subscription is gone"))
  }

  @Test func rateLimitedPushesWaitRetryAfterAndServerErrorsBackOff() throws {
    let rig = try WebPushRig()
    defer { rig.close() }
    let limited = try rig.fake.subscribe()
    let failing = try rig.fake.subscribe()
    try rig.register("LIMITED", limited)
    try rig.register("FAILING", failing)
    try rig.fake.script(limited, status: 429, retryAfter: 120)
    try rig.fake.script(failing, status: 503)
    try rig.start()
    let start = rig.clock.now()
    try rig.store("LIMITED", ["later"])
    try rig.store("FAILING", ["later too"])
    #expect(try rig.fake.wait(limited, count: 1, status: 429))
    #expect(try rig.fake.wait(failing, count: 1, status: 503))
    // Both rows wait: the 429 for its Retry-After, the 503 for at least the minimum backoff.
    #expect(
      try eventually {
        let rows = try rig.pending()
        return rows.count == 2 && rows.allSatisfy { $0.attempts == 1 }
      })
    let rows = Dictionary(uniqueKeysWithValues: try rig.pending().map { ($0.station, $0.nextAttemptAt) })
    let limitedAt = try #require(rows["LIMITED"])
    let failingAt = try #require(rows["FAILING"])
    #expect(limitedAt >= start + 120_000 && limitedAt <= rig.clock.now() + 121_000)
    #expect(failingAt >= start + RetryPolicy.minimumBackoffMs)
    // Nothing goes out before its time; then both are delivered.
    rig.clock.advance(by: 60_000)
    rig.service?.notify()
    usleep(300_000)
    #expect(try rig.fake.requests(limited).count == 1)
    rig.clock.advance(by: 70_000)
    rig.service?.notify()
    #expect(try rig.fake.wait(limited, count: 2, timeoutMs: 5000))
    #expect(try rig.fake.wait(failing, count: 2, timeoutMs: 5000))
    #expect(try rig.fake.requests(limited).last?.int(at: ["status"]) == 201)
    #expect(try rig.fake.requests(failing).last?.int(at: ["status"]) == 201)
    #expect(try eventually { try rig.pending().isEmpty })
    #expect(try rig.tokens("LIMITED") == [limited.endpoint])
  }

  @Test func aRefusalIsGivenUpAndTheSubscriptionKept() throws {
    let rig = try WebPushRig()
    defer { rig.close() }
    let vapidMismatch = try rig.fake.subscribe(vapidKey: WebPushEncryptionTests.RFC.asPublic)
    let tooLarge = try rig.fake.subscribe()
    try rig.register("N0CALL-7", vapidMismatch)
    try rig.register("N0CALL-8", tooLarge)
    try rig.fake.script(tooLarge, status: 413)
    try rig.start()
    try rig.store("N0CALL-7", ["a"])
    try rig.store("N0CALL-8", ["b"])
    #expect(try rig.fake.wait(count: 2))
    #expect(try rig.fake.requests(vapidMismatch).first?.int(at: ["status"]) == 403)
    #expect(try eventually { try rig.pending().isEmpty })
    #expect(try rig.tokens("N0CALL-7") == [vapidMismatch.endpoint])
    #expect(try rig.tokens("N0CALL-8") == [tooLarge.endpoint])
    #expect(rig.log().contains("refused the VAPID authorization"))
    // Scattered refusals by push services never stop Web Push.
    #expect(rig.service?.providerStates[.webpush] == .ok)
  }

  /// Apple's push service refuses every push of a server whose VAPID contact is a local name with
  /// `403 {"reason":"BadJwtToken"}`: Web Push goes on, but the warning (for `/health`) names the refusal and the
  /// contact, until a push to that service is accepted again.
  @Test func aServiceRefusingEveryPushTheSameWayIsAWarningNamingTheContact() throws {
    let rig = try WebPushRig()
    defer { rig.close() }
    let subscription = try rig.fake.subscribe()
    try rig.register("N0CALL-7", subscription)
    try rig.fake.control(
      "POST", "/control/script",
      #"{"id":"\#(subscription.id)","status":403,"times":3,"body":"{\"reason\":\"BadJwtToken\"}"}"#)
    try rig.start()
    for (index, text) in ["a", "b"].enumerated() {
      try rig.store("N0CALL-7", [text])
      #expect(try rig.fake.wait(count: index + 1))
      #expect(try eventually { try rig.pending().isEmpty })
    }
    // Two refusals: no warning yet.
    #expect(try rig.database.pushStatus().warnings[.webpush] == nil)
    try rig.store("N0CALL-7", ["c"])
    #expect(try rig.fake.wait(count: 3))
    #expect(
      try eventually {
        let warning = try rig.database.pushStatus().warnings[.webpush] ?? ""
        return warning.contains("403 BadJwtToken (3 in a row)")
          && warning.contains("[messaging.webpush] subject = mailto:ops@example.org")
      })
    #expect(rig.service?.providerStates[.webpush] == .ok)
    #expect(rig.log().contains("a web push service refuses every push"))
    // An accepted push clears it.
    try rig.store("N0CALL-7", ["d"])
    #expect(try rig.fake.wait(count: 1, status: 201))
    #expect(try eventually { try rig.database.pushStatus().warnings[.webpush] == nil })
  }

  /// `/health` is public and a push service is whatever host a subscriber names: its answer (here HTML, a script
  /// and 3000 bytes in a JSON `reason`) reaches the log only; the warning names the status and the host.
  @Test func aHostilePushServiceAnswerIsLoggedButNeverInTheWarning() throws {
    let rig = try WebPushRig()
    defer { rig.close() }
    let subscription = try rig.fake.subscribe()
    try rig.register("N0CALL-7", subscription)
    let hostile = "<script>alert(document.cookie)</script>" + String(repeating: "X", count: 3000)
    let answer = String(
      decoding: try JSONSerialization.data(withJSONObject: ["reason": hostile]), as: UTF8.self)
    let script = try JSONSerialization.data(withJSONObject: [
      "id": subscription.id, "status": 403, "times": 3, "body": answer,
    ])
    try rig.fake.control("POST", "/control/script", String(decoding: script, as: UTF8.self))
    try rig.start()
    for (index, text) in ["a", "b", "c"].enumerated() {
      try rig.store("N0CALL-7", [text])
      #expect(try rig.fake.wait(count: index + 1))
      #expect(try eventually { try rig.pending().isEmpty })
    }
    #expect(try eventually { try rig.database.pushStatus().warnings[.webpush] != nil })
    let warning = try rig.database.pushStatus().warnings[.webpush] ?? ""
    #expect(warning.hasPrefix("127.0.0.1 refuses every push with 403 (3 in a row)"), "\(warning)")
    #expect(!warning.contains("<") && !warning.contains("script") && !warning.contains("XXXX"), "\(warning)")
    #expect(warning.utf8.count < 300)
    #expect(rig.log().contains("<script>alert(document.cookie)"), "the raw answer is in the log")
  }

  /// A subscription made with another VAPID key (`applicationServerKey`) is refused 403 on every push, forever:
  /// after 5 such refusals in a row over at least a day it is deleted as a dead subscription, saying why.
  @Test func aSubscriptionRefusedTheSameWayForADayIsDeleted() throws {
    let rig = try WebPushRig()
    defer { rig.close() }
    let mismatch = try rig.fake.subscribe(vapidKey: WebPushEncryptionTests.RFC.asPublic)
    try rig.register("N0CALL-7", mismatch)
    try rig.start()
    let stepMs: Int64 = 6 * 3_600_000
    for index in 0..<5 {
      if index > 0 {
        rig.clock.advance(by: stepMs)
        // The push service judges VAPID `exp` at the moved clock too.
        try rig.fake.control("POST", "/control/clock", #"{"offsetSeconds":\#(Int64(index) * stepMs / 1000)}"#)
        // The station stays heard: a heartbeat at the moved clock.
        try rig.register("N0CALL-7", mismatch)
      }
      try rig.store("N0CALL-7", ["m\(index)"])
      #expect(try rig.fake.wait(mismatch, count: index + 1, status: 403))
      #expect(try eventually { try rig.pending().isEmpty })
      if index < 4 { #expect(try rig.tokens("N0CALL-7") == [mismatch.endpoint], "after \(index + 1)") }
    }
    #expect(try eventually { try rig.tokens("N0CALL-7").isEmpty })
    #expect(rig.log().contains("refused the same way on 5 pushes in a row"), "\(rig.log())")
  }

  @Test func theKeyPairIsMadeOnceKeptPrivateAndTheSameAfterARestart() throws {
    let rig = try WebPushRig()
    defer { rig.close() }
    #expect(!FileManager.default.fileExists(atPath: rig.keyFile))
    try rig.start()
    var info = stat()
    #expect(stat(rig.keyFile, &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600)
    let published = try #require(VAPIDPublicKeyFile.read(rig.publicKeyFile))
    #expect(VAPIDPublicKeyFile.isPublicKey(published))
    #expect(rig.log().contains("made a new VAPID key pair"))
    let pem = try String(contentsOfFile: rig.keyFile, encoding: .utf8)
    rig.stop()
    // The public file went missing: the restart writes it again, from the same key.
    try FileManager.default.removeItem(atPath: rig.publicKeyFile)
    try rig.start()
    #expect(try String(contentsOfFile: rig.keyFile, encoding: .utf8) == pem)
    #expect(VAPIDPublicKeyFile.read(rig.publicKeyFile) == published)
    let subscription = try rig.fake.subscribe(vapidKey: published)
    try rig.register("N0CALL-7", subscription)
    try rig.store("N0CALL-7", ["after a restart"])
    #expect(try rig.fake.wait(subscription, count: 1, status: 201))
  }

  @Test func anUnreadableKeyStopsWebPushLoudlyAndNothingElse() throws {
    let rig = try WebPushRig(webpush: "vapidKeyFile = broken.pem")
    defer { rig.close() }
    try "not a key\n".write(toFile: rig.directory + "/broken.pem", atomically: true, encoding: .utf8)
    try rig.start()
    guard case .stopped(let reason)? = rig.service?.providerStates[.webpush] else {
      Issue.record("webpush is \(String(describing: rig.service?.providerStates[.webpush]))")
      return
    }
    #expect(reason.contains("broken.pem"))
    #expect(rig.service?.providerStates[.unifiedpush] == .stopped(reason))
    #expect(rig.service?.providerStates[.android]?.description == "off")
  }

  @Test func anAvatarImageRidesAlongWithinOneEncryptedRecord() throws {
    let rig = try WebPushRig()
    defer { rig.close() }
    let subscription = try rig.fake.subscribe()
    try rig.register("N0CALL-7", subscription)
    try registerStation(rig.database, "KJ7ABC-7", platform: nil, now: rig.clock.now())
    let image = String(repeating: "A", count: 2996) + "AA=="
    try rig.database.setAvatar("KJ7ABC-7", icon: nil, image: image, hash: "h", now: rig.clock.now())
    try rig.start()
    try rig.store("N0CALL-7", [String(repeating: "x", count: 67)])
    #expect(try rig.fake.wait(subscription, count: 1, status: 201))
    let request = try #require(try rig.fake.requests(subscription).first)
    #expect(try #require(request.int(at: ["bodyBytes"])) <= 4096)
    #expect(try #require(request.int(at: ["plaintextBytes"])) <= 3993)
    #expect(request.string(at: ["json", "fromAvatarHash"]) == "h")
    #expect(request.string(at: ["json", "fromAvatarImage"]) == image)
  }

  @Test func aPublicServerDeletesSubscriptionsOnPrivateAddressesWithoutSending() throws {
    let rig = try WebPushRig(allowPrivate: false)
    defer { rig.close() }
    let local = try rig.fake.subscribe()
    try rig.register("N0CALL-7", local)
    try rig.start()
    try rig.store("N0CALL-7", ["never sent"])
    #expect(try eventually { try rig.tokens("N0CALL-7").isEmpty })
    #expect(try eventually { try rig.pending().isEmpty })
    #expect(try rig.fake.requests().isEmpty)
    #expect(rig.log().contains("loopback or private address"))
  }

  /// A host name is judged where it resolves, when the connection would open: `localhost` and `127.1` (the
  /// API refuses both at registration, so the rows are written here as a hand-edited database or an older
  /// server could have left them; the resolver reads `127.1` as 127.0.0.1) both land on loopback. Nothing reaches the fake, not even a TCP connection; both
  /// subscriptions are deleted without a retry; a warning names the host and the refused address; the
  /// counters show it.
  @Test func aHostNameThatResolvesToLoopbackIsRefusedAtSendTime() throws {
    let rig = try WebPushRig(allowPrivate: false)
    defer { rig.close() }
    let named = try rig.fake.subscribe(host: "localhost")
    var shorthand = try rig.fake.subscribe()
    shorthand.endpoint = shorthand.endpoint.replacingOccurrences(of: "//127.0.0.1:", with: "//127.1:")
    #expect(WebPushEndpoint(named.endpoint)?.isPrivateHost == true)
    #expect(WebPushEndpoint(shorthand.endpoint)?.isPrivateHost == true)
    try rig.register("N0CALL-7", named)
    try rig.register("N0CALL-8", shorthand)
    try rig.start()
    try rig.store("N0CALL-7", ["never sent"])
    try rig.store("N0CALL-8", ["never sent either"])
    #expect(try eventually { try rig.tokens("N0CALL-7").isEmpty && rig.tokens("N0CALL-8").isEmpty })
    #expect(try eventually { try rig.pending().isEmpty })
    #expect(try rig.fake.requests().isEmpty)
    #expect(try rig.fake.connections() == 0)
    let refusals = rig.log().split(separator: "\n").filter { $0.contains("push endpoint refused") }
    #expect(refusals.count == 2, "\(rig.log())")
    #expect(refusals.allSatisfy { $0.contains("level=warn") && $0.contains("loopback or private address") })
    #expect(
      refusals.contains {
        $0.contains("host=localhost") && ($0.contains("address=127.0.0.1") || $0.contains("address=::1"))
      }, "\(refusals)")
    #expect(
      refusals.contains { $0.contains("host=127.1") && $0.contains("address=127.0.0.1") }, "\(refusals)")
    #expect(!rig.log().contains("will retry"))
    let counters = try rig.database.pushStatus().counters[.webpush]
    #expect(counters[.privateAddress] == 2 && counters.tokensDeleted == 2, "\(counters)")
    #expect(rig.service?.providerStates[.webpush] == .ok)
  }

  @Test func pushTestSendsToWebPushAndUnifiedPushDevices() throws {
    let rig = try WebPushRig()
    defer { rig.close() }
    let browser = try rig.fake.subscribe()
    let distributor = try rig.fake.subscribe(keys: false)
    try rig.register("N0CALL-7", browser)
    try rig.register("N0CALL-7", distributor, platform: .unifiedpush)
    let outcome = try PushTester.run(station: "N0CALL-7", options: try rig.options(), timeoutMs: 20_000)
    #expect(outcome.states[.webpush] == .ok)
    #expect(outcome.results.count == 2)
    #expect(outcome.results.allSatisfy { $0.accepted && $0.status == 201 }, "\(outcome.results)")
    #expect(Set(outcome.results.map(\.platform)) == [.webpush, .unifiedpush])
    #expect(
      try rig.fake.requests(browser).first?.string(at: ["json", "body"])
        == "Test notification from aprs-cloud")
    #expect(try rig.fake.requests(distributor).first?.string(at: ["json", "title"]) == "N0CALL-7")
  }
}
