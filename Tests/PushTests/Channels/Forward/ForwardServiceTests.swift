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

/// An in-process `PushService` with forwarding on, against a `ForwardFake` (HTTPS receiver and SMTPS server), with
/// its own database and log. No push provider: the forwarder alone drains the outbox.
final class ForwardRig: PushServiceRig {
  let fake: ForwardFake

  /// `webPush`: Web Push and UnifiedPush on (their endpoints may be the fake receiver's paths), for the notices.
  init(
    allowPrivate: Bool = true, messaging: String = "coalesceWindow = 0", forward: String = "",
    webPush: Bool = false, extraHTTPSPorts: Int = 0
  ) throws {
    fake = try ForwardFake(extraHTTPSPorts: extraHTTPSPorts)
    let webPushSection =
      webPush
      ? "subject = mailto:ops@example.org\ncaFile = ca.pem\nallowPrivateEndpoints = true" : "enabled = false"
    try super.init(
      directory: fake.directory,
      configText: """
        [messaging]
        \(messaging)
        [messaging.webpush]
        \(webPushSection)
        [forward]
        caFile = ca.pem
        allowPrivateEndpoints = \(allowPrivate)
        \(forward)
        [forward.email]
        url = smtps://127.0.0.1:\(fake.smtpPort)
        from = aprs@example.org
        username = \(ForwardFake.smtpUser)
        password = \(ForwardFake.smtpPassword)

        """)
  }

  override func close() {
    super.close()
    fake.stop()
    fake.removeFiles()
  }

  /// Registers `station` without a device (forwarding needs none).
  func register(_ station: String) throws {
    try registerStation(database, station, platform: nil, now: clock.now())
  }

  /// Replaces the station's targets (as `/v1/settings` does); returns them.
  @discardableResult
  func targets(_ station: String, _ drafts: [ForwardDraft]) throws -> [ForwardTarget] {
    try #require(try database.replaceForwardTargets(of: station, with: drafts, now: clock.now()))
  }

  /// A webhook draft to the fake's `path`.
  func webhook(_ path: String, always: Bool = false) -> ForwardDraft {
    ForwardDraft(kind: .webhook, address: fake.url(path), secret: Self.secret, always: always)
  }

  static let secret = "whsec-0123456789abcdef-ZZ"

  /// The `inMs` of every "forward failed; will retry" line so far (or of the lines saying `failure`).
  func retryWaits(_ failure: String = "forward failed; will retry") -> [Int64] {
    log().split(separator: "\n").filter { $0.contains(failure) }.compactMap { line in
      guard let range = line.range(of: "inMs=") else { return nil }
      return Int64(line[range.upperBound...].prefix { $0.isNumber })
    }
  }

  /// The code in the newest confirmation mail to `to`.
  func confirmationCode(to: String) throws -> String {
    let mail = try #require(try fake.mails().last { $0.string(at: ["data"])?.contains("To: " + to) == true })
    let data = try #require(mail.string(at: ["data"]))
    let line = try #require(data.split(separator: "\r\n").first { $0.hasPrefix("    ") })
    return String(line.trimmingCharacters(in: .whitespaces))
  }

  func status(_ station: String, _ id: String) throws -> ForwardStatus? {
    try target(station, id)?.status
  }

  func target(_ station: String, _ id: String) throws -> ForwardTarget? {
    try database.forwardTargets(of: station).first { $0.id == id }
  }

  /// Registers a UnifiedPush device of `station` whose endpoint is the fake receiver's `path` (its body arrives
  /// unencrypted), with the station key (`keyed`, the owner's) or without.
  func registerDevice(_ station: String, path: String, keyed: Bool) throws {
    try registerDevice(station, endpoint: fake.url(path), keyed: keyed)
  }

  /// Registers a UnifiedPush device of `station` whose endpoint is `endpoint`.
  func registerDevice(_ station: String, endpoint: String, keyed: Bool) throws {
    let parts = station.split(separator: "-", maxSplits: 1)
    _ = try database.upsertStation(
      StationUpsert(
        address: station, base: String(parts[0]), ssid: parts.count > 1 ? Int(parts[1]) ?? 0 : 0,
        platform: .unifiedpush, pushToken: endpoint, ackMessages: false, isRegistration: true,
        keyed: keyed),
      now: clock.now())
  }

  /// Confirms the email target `id` with the code of the confirmation mail to `to` (waits for the mail).
  func confirm(_ station: String, _ id: String, to: String) throws {
    guard try fake.waitMail(to: to, count: 1) else { throw TestFailure("no confirmation mail: \(log())") }
    let code = try confirmationCode(to: to)
    let confirmed = try database.confirmForwardTarget(station: station, id: id, code: code, now: clock.now())
    guard case .confirmed = confirmed else { throw TestFailure("not confirmed: \(confirmed)") }
  }
}

/// The forwarder in process against the fake receiver and SMTP server: real TLS (the test run's own CA), real
/// SQLite, the outbox and retry discipline of the push sender. Waits are bounded.
@Suite(.serialized) struct ForwardServiceTests {
  @Test func aStoredMessageReachesEachTargetOfItsStationOnlyWithinTwoSeconds() throws {
    let rig = try ForwardRig()
    defer { rig.close() }
    try rig.register("N0CALL-7")
    try rig.register("N0CALL-8")
    let a = try rig.targets(
      "N0CALL-7",
      [
        rig.webhook("/hook/a"),
        ForwardDraft(kind: .ntfy, address: rig.fake.url("/ntfy/a"), secret: "tk_ntfytoken1234", priority: 5),
        ForwardDraft(kind: .email, address: "owner@example.org"),
      ])
    try rig.targets("N0CALL-8", [rig.webhook("/hook/b")])
    try rig.start()
    // The email target gets its confirmation mail first; the owner enters the code.
    #expect(try rig.fake.waitMail(to: "owner@example.org", count: 1), "\(rig.log())")
    let confirmation = try #require(try rig.fake.mails().first)
    let confirmationData = confirmation.string(at: ["data"]) ?? ""
    #expect(confirmationData.contains("Subject: APRS forwarding: confirm for N0CALL-7"))
    let code = try rig.confirmationCode(to: "owner@example.org")
    #expect(code.count == 6 && code.allSatisfy(\.isNumber), "\(confirmationData)")
    let confirmed = try rig.database.confirmForwardTarget(
      station: "N0CALL-7", id: a[2].id, code: code, now: rig.clock.now())
    guard case .confirmed = confirmed else { throw TestFailure("not confirmed: \(confirmed)") }

    let start = Date()
    try rig.store("N0CALL-7", ["Hello from the radio"], msgno: "42")
    #expect(try rig.fake.wait(path: "/hook/a", count: 1, timeoutMs: 2000), "\(rig.log())")
    #expect(try rig.fake.wait(path: "/ntfy/a", count: 1, timeoutMs: 2000), "\(rig.log())")
    #expect(try rig.fake.waitMail(to: "owner@example.org", count: 2, timeoutMs: 2000), "\(rig.log())")
    #expect(Date().timeIntervalSince(start) < 2)

    // The webhook: the documented body, and a signature Python's hmac accepts over the raw body.
    let hook = try #require(try rig.fake.requests("/hook/a").first)
    let body = try parseObject(Array((hook.string(at: ["body"]) ?? "").utf8))
    #expect(body.string(at: ["type"]) == "message" && body.string(at: ["station"]) == "N0CALL-7")
    #expect(body.string(at: ["to"]) == "N0CALL-7" && body.string(at: ["from"]) == "KJ7ABC-7")
    #expect(body.string(at: ["text"]) == "Hello from the radio" && body.string(at: ["seqId"]) == "42")
    #expect((body.int(at: ["timestamp"]) ?? 0) > 1_700_000_000_000)
    #expect(hook.string(at: ["headers", "content-type"]) == "application/json")
    let signature = try #require(hook.string(at: ["headers", "x-aprs-cloud-signature"]))
    #expect(signature.hasPrefix("t=") && signature.contains(",v1="))
    let raw = try #require(hook.string(at: ["bodyBase64"]))
    #expect(try ForwardFake.pythonVerifies(signature: signature, bodyBase64: raw, secret: ForwardRig.secret))
    #expect(
      try !ForwardFake.pythonVerifies(signature: signature, bodyBase64: raw, secret: "another-secret-value"))

    // ntfy: the text as the body, Title, Tags, Priority and the token as documented.
    let ntfy = try #require(try rig.fake.requests("/ntfy/a").first)
    #expect(ntfy.string(at: ["body"]) == "Hello from the radio")
    #expect(ntfy.string(at: ["headers", "title"]) == "APRS from KJ7ABC-7")
    #expect(ntfy.string(at: ["headers", "tags"]) == "incoming_envelope")
    #expect(ntfy.string(at: ["headers", "priority"]) == "5")
    #expect(ntfy.string(at: ["headers", "authorization"]) == "Bearer tk_ntfytoken1234")

    // The mail: subject, sender, time, number and text; no Reply-To; sent with the operator's SMTP login.
    let mail = try #require(try rig.fake.mails().last)
    let data = mail.string(at: ["data"]) ?? ""
    #expect(data.contains("Subject: APRS from KJ7ABC-7\r\n"), "\(data)")
    #expect(data.contains("\r\nFrom: KJ7ABC-7\r\n") && data.contains("\r\nMessage number: 42\r\n"), "\(data)")
    #expect(data.contains("\r\nHello from the radio\r\n") && data.contains(" UTC\r\n"), "\(data)")
    #expect(!data.lowercased().contains("reply-to"))
    #expect(mail.value(at: ["from"]) == .string("aprs@example.org"))
    #expect(mail.value(at: ["authenticated"]) == .bool(true))

    // Station B's target never saw A's message; B's own message reaches only B's.
    #expect(try rig.fake.requests("/hook/b").isEmpty)
    try rig.store("N0CALL-8", ["For B only"])
    #expect(try rig.fake.wait(path: "/hook/b", count: 1), "\(rig.log())")
    #expect(try rig.fake.requests("/hook/a").count == 1)
    #expect(try rig.fake.requests("/ntfy/a").count == 1)
    #expect(try rig.fake.requests("/hook/b").first?.string(at: ["body"])?.contains("For B only") == true)
    #expect(try eventually { try rig.database.dueOutbox(now: .max, limit: 100).isEmpty })
    let counters = try rig.database.pushStatus().counters
    #expect(counters[forward: .webhook, .delivered] == 2)
    #expect(counters[forward: .ntfy, .delivered] == 1)
    #expect(counters[forward: .email, .delivered] == 1 && counters[forward: .email, .confirmation] == 1)
  }

  @Test func anUnconfirmedAddressGetsOnlyTheConfirmationMail() throws {
    let rig = try ForwardRig()
    defer { rig.close() }
    try rig.register("N0CALL-7")
    try rig.targets(
      "N0CALL-7", [ForwardDraft(kind: .email, address: "new@example.org"), rig.webhook("/hook/u")])
    try rig.start()
    #expect(try rig.fake.waitMail(to: "new@example.org", count: 1), "\(rig.log())")
    try rig.store("N0CALL-7", ["one", "two"])
    // The webhook got both: the batch was forwarded; the unconfirmed address got nothing of it.
    #expect(try rig.fake.wait(path: "/hook/u", count: 2), "\(rig.log())")
    #expect(try eventually { try rig.database.dueOutbox(now: .max, limit: 100).isEmpty })
    let mails = try rig.fake.mails()
    #expect(mails.count == 1)
    #expect(mails.first?.string(at: ["data"])?.contains("APRS forwarding: confirm for N0CALL-7") == true)
  }

  @Test func serverErrorsAreRetriedWithGrowingWaitsAndRetryAfterIsHonoured() throws {
    let rig = try ForwardRig()
    defer { rig.close() }
    try rig.register("N0CALL-7")
    try rig.targets("N0CALL-7", [rig.webhook("/hook/r")])
    try rig.fake.script("/hook/r", status: 503, times: 2)
    try rig.fake.script("/hook/r", status: 503, retryAfter: 600)
    try rig.start()
    try rig.store("N0CALL-7", ["retry me"])
    for attempt in 1...3 {
      #expect(try rig.fake.wait(path: "/hook/r", count: attempt, status: 503), "\(rig.log())")
      #expect(try eventually { rig.retryWaits().count == attempt }, "\(rig.log())")
      let wait = rig.retryWaits()[attempt - 1]
      rig.clock.advance(by: wait + 1)
      rig.service?.notify()
    }
    #expect(try rig.fake.wait(path: "/hook/r", count: 4), "\(rig.log())")
    #expect(try rig.fake.requests("/hook/r").last?.int(at: ["status"]) == 200)
    let waits = rig.retryWaits()
    // 10 s, then 20 s (each with up to half again of jitter), then the server's Retry-After of 600 s.
    #expect((10_000...15_000).contains(waits[0]) && (20_000...30_000).contains(waits[1]), "\(waits)")
    #expect(waits[2] >= 599_000, "\(waits)")
    #expect(try eventually { try rig.database.dueOutbox(now: .max, limit: 100).isEmpty })
    #expect(try rig.database.pushStatus().counters[forward: .webhook, .retried] == 3)
    #expect(try rig.database.forwardTargets(of: "N0CALL-7").first?.status == .active)
  }

  @Test func aConfirmationMailPutOffByTheMailServerIsRetriedWithGrowingWaits() throws {
    let rig = try ForwardRig()
    defer { rig.close() }
    try rig.register("N0CALL-7")
    // 451 to RCPT: the mail server is busy for now, which never disables the owner's address.
    try rig.fake.refuse("later@example.org", code: 451)
    let targets = try rig.targets("N0CALL-7", [ForwardDraft(kind: .email, address: "later@example.org")])
    try rig.start()
    let failed = "confirmation mail failed; will retry"
    for attempt in 1...3 {
      #expect(try eventually { rig.retryWaits(failed).count == attempt }, "\(rig.log())")
      if attempt == 3 { try rig.fake.refuse("later@example.org", code: 0) }
      rig.clock.advance(by: rig.retryWaits(failed)[attempt - 1] + 1)
      rig.service?.notify()
    }
    #expect(try rig.fake.waitMail(to: "later@example.org", count: 1), "\(rig.log())")
    let waits = rig.retryWaits(failed)
    // 10 s, 20 s, 40 s, each with up to half again of jitter: the backoff of a forward.
    #expect(
      (10_000...15_000).contains(waits[0]) && (20_000...30_000).contains(waits[1])
        && (40_000...60_000).contains(waits[2]), "\(waits)")
    #expect(try rig.status("N0CALL-7", targets[0].id)?.name == "unconfirmed")
    let counters = try rig.database.pushStatus().counters
    #expect(counters[forward: .email, .retried] == 3 && counters[forward: .email, .confirmation] == 1)
    // The code the mail finally carried confirms the address.
    let code = try rig.confirmationCode(to: "later@example.org")
    let confirmed = try rig.database.confirmForwardTarget(
      station: "N0CALL-7", id: targets[0].id, code: code, now: rig.clock.now())
    guard case .confirmed = confirmed else { throw TestFailure("not confirmed: \(confirmed)") }
  }

  @Test func a410DisablesTheTargetWithItsReason() throws {
    let rig = try ForwardRig()
    defer { rig.close() }
    try rig.register("N0CALL-7")
    let targets = try rig.targets("N0CALL-7", [rig.webhook("/hook/gone"), rig.webhook("/hook/ok")])
    try rig.fake.gone("/hook/gone")
    try rig.start()
    try rig.store("N0CALL-7", ["first"])
    #expect(try rig.fake.wait(path: "/hook/gone", count: 1, status: 410))
    #expect(try eventually { try rig.status("N0CALL-7", targets[0].id)?.name == "disabled" }, "\(rig.log())")
    guard case .disabled(let reason, let at)? = try rig.status("N0CALL-7", targets[0].id) else {
      throw TestFailure("not disabled")
    }
    #expect(reason.contains("410") && at > 0)
    try rig.store("N0CALL-7", ["second"])
    #expect(try rig.fake.wait(path: "/hook/ok", count: 2), "\(rig.log())")
    #expect(try eventually { try rig.database.dueOutbox(now: .max, limit: 100).isEmpty })
    #expect(try rig.fake.requests("/hook/gone").count == 1, "a disabled target gets nothing more")
    #expect(try rig.database.pushStatus().counters[forward: .webhook, .disabled] == 1)
  }

  @Test func aTargetAtAPrivateAddressIsRefusedAtConnectAndDisabled() throws {
    let rig = try ForwardRig(allowPrivate: false)
    defer { rig.close() }
    try rig.register("N0CALL-7")
    // Stored past the responder's check (a name can resolve there too): the sender refuses the connection.
    let targets = try rig.targets("N0CALL-7", [rig.webhook("/hook/private")])
    try rig.start()
    try rig.store("N0CALL-7", ["to the LAN?"])
    #expect(try eventually { try rig.status("N0CALL-7", targets[0].id)?.name == "disabled" }, "\(rig.log())")
    guard case .disabled(let reason, _)? = try rig.status("N0CALL-7", targets[0].id) else {
      throw TestFailure("not disabled")
    }
    #expect(reason.contains("127.0.0.1") && reason.contains("loopback or private"), "\(reason)")
    #expect(try rig.fake.requests().isEmpty, "nothing reached the private address")
    #expect(try rig.database.pushStatus().counters[forward: .webhook, .privateAddress] == 1)
  }

  @Test func anAddressTheMailServerRefusesIsDisabled() throws {
    let rig = try ForwardRig()
    defer { rig.close() }
    try rig.register("N0CALL-7")
    try rig.fake.refuse("nobody@example.org")
    let targets = try rig.targets("N0CALL-7", [ForwardDraft(kind: .email, address: "nobody@example.org")])
    try rig.start()
    #expect(try eventually { try rig.status("N0CALL-7", targets[0].id)?.name == "disabled" }, "\(rig.log())")
    guard case .disabled(let reason, _)? = try rig.status("N0CALL-7", targets[0].id) else {
      throw TestFailure("not disabled")
    }
    #expect(reason.contains("refused the address"), "\(reason)")
    #expect(try rig.fake.mails().isEmpty)
  }

  @Test func muteAndQuietHoursHoldForwardsUnlessTheTargetSaysAlways() throws {
    let rig = try ForwardRig()
    defer { rig.close() }
    try rig.register("N0CALL-7")
    try rig.targets("N0CALL-7", [rig.webhook("/hook/quiet"), rig.webhook("/hook/always", always: true)])
    var update = StationSettingsUpdate()
    update.mutedUntil = rig.clock.now() + 3_600_000
    try rig.database.updateStationSettings("N0CALL-7", update, now: rig.clock.now())
    try rig.start()
    try rig.store("N0CALL-7", ["while muted"])
    #expect(try rig.fake.wait(path: "/hook/always", count: 1), "\(rig.log())")
    #expect(try eventually { try rig.database.dueOutbox(now: .max, limit: 100).isEmpty })
    #expect(try rig.fake.requests("/hook/quiet").isEmpty)
    update.mutedUntil = 0
    try rig.database.updateStationSettings("N0CALL-7", update, now: rig.clock.now())
    try rig.store("N0CALL-7", ["after the mute"])
    #expect(try rig.fake.wait(path: "/hook/quiet", count: 1), "\(rig.log())")
    #expect(
      try rig.fake.requests("/hook/quiet").first?.string(at: ["body"])?.contains("after the mute") == true)
  }

  @Test func aSlowTargetGetsOneForwardAtATimeInOrderAndHoldsUpNobodyElse() throws {
    let rig = try ForwardRig()
    defer { rig.close() }
    try rig.register("N0CALL-7")
    try rig.register("N0CALL-8")
    try rig.targets("N0CALL-7", [rig.webhook("/hook/slow")])
    try rig.targets("N0CALL-8", [rig.webhook("/hook/quick")])
    try rig.fake.script("/hook/slow", status: 200, times: 5, delayMs: 300)
    try rig.start()
    try rig.store("N0CALL-7", (0..<5).map { "slow \($0)" })
    #expect(try rig.fake.wait(path: "/hook/slow", count: 1), "\(rig.log())")
    try rig.store("N0CALL-8", ["quick one"])
    // Another station's target is served while the slow one works through its queue.
    #expect(try rig.fake.wait(path: "/hook/quick", count: 1, timeoutMs: 1_000), "\(rig.log())")
    #expect(try rig.fake.requests("/hook/slow").count < 5, "the quick one did not wait for the slow queue")
    #expect(try rig.fake.wait(path: "/hook/slow", count: 5), "\(rig.log())")
    let slow = try rig.fake.requests("/hook/slow")
    #expect(slow.map { $0.int(at: ["concurrent"]) } == Array(repeating: 1, count: 5), "one at a time")
    #expect(
      slow.compactMap { try? parseObject(Array(($0.string(at: ["body"]) ?? "").utf8)).string(at: ["text"]) }
        == (0..<5).map { "slow \($0)" }, "in order")
  }

  @Test func theGlobalRateHoldsForwardsPastPerMinute() throws {
    let rig = try ForwardRig(forward: "perMinute = 1")
    defer { rig.close() }
    try rig.register("N0CALL-7")
    try rig.targets("N0CALL-7", [rig.webhook("/hook/rate")])
    try rig.start()
    try rig.store("N0CALL-7", ["first", "second"])
    #expect(try rig.fake.wait(path: "/hook/rate", count: 1), "\(rig.log())")
    // The second waits for the minute (the fake's bounded wait runs out with one request).
    #expect(try !rig.fake.wait(path: "/hook/rate", count: 2, timeoutMs: 700))
    rig.clock.advance(by: 60_001)
    rig.service?.notify()
    #expect(try rig.fake.wait(path: "/hook/rate", count: 2), "\(rig.log())")
    #expect(try eventually { try rig.database.dueOutbox(now: .max, limit: 100).isEmpty })
  }

  /// Without any push provider, a row no target takes stays pending for the provider a restart may bring.
  @Test func withoutAPushProviderTheRowsNoTargetTakesWait() throws {
    let rig = try ForwardRig()
    defer { rig.close() }
    try rig.register("N0CALL-7")
    try rig.register("N0CALL-8")
    try rig.targets("N0CALL-7", [rig.webhook("/hook/w")])
    try rig.start()
    try rig.store("N0CALL-8", ["no target here"])
    try rig.store("N0CALL-7", ["forwarded"])
    #expect(try rig.fake.wait(path: "/hook/w", count: 1), "\(rig.log())")
    #expect(
      try eventually { try rig.database.dueOutbox(now: .max, limit: 100).map(\.station) == ["N0CALL-8"] })
    #expect(try rig.fake.requests().count == 1)
  }

  @Test func quietHoursHoldForwardsButFromBypassCallsOrToAlwaysTargets() throws {
    let rig = try ForwardRig()
    defer { rig.close() }
    try rig.register("N0CALL-7")
    try rig.targets("N0CALL-7", [rig.webhook("/hook/q"), rig.webhook("/hook/qa", always: true)])
    let minute = Int(rig.clock.now() / 60_000 % 1440)
    var update = StationSettingsUpdate()
    update.quietHours = try QuietHours(
      start: (minute + 1430) % 1440, end: (minute + 60) % 1440, utcOffsetMinutes: 0)
    update.quietBypass = try CallList(validating: ["KJ7ABC"], field: "quietBypass")
    try rig.database.updateStationSettings("N0CALL-7", update, now: rig.clock.now())
    try rig.start()
    try rig.store("N0CALL-7", ["in the quiet hours"], from: "W5AGO")
    try rig.store("N0CALL-7", ["from a bypass call"], from: "KJ7ABC-7")
    #expect(try rig.fake.wait(path: "/hook/qa", count: 2), "\(rig.log())")
    #expect(try rig.fake.wait(path: "/hook/q", count: 1), "\(rig.log())")
    #expect(try eventually { try rig.database.dueOutbox(now: .max, limit: 100).isEmpty })
    let quiet = try rig.fake.requests("/hook/q")
    #expect(quiet.count == 1 && quiet.first?.string(at: ["body"])?.contains("from a bypass call") == true)
  }
}
