// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import Testing

@testable import Store

/// `Database+Forward.swift`: the stations' forward targets, their confirmation and their health.
@Suite struct DatabaseForwardTests {
  private static let station = "N0CALL-7"

  /// Replaces the station's targets, requiring a stored answer.
  @discardableResult
  private static func replace(_ database: Database, _ drafts: [ForwardDraft], now: Int64 = 2_000) throws
    -> [ForwardTarget]
  {
    try #require(try database.replaceForwardTargets(of: station, with: drafts, now: now))
  }

  /// One email target with its confirmation mail taken, and the code it carries.
  private static func mailedEmail(_ database: Database, now: Int64) throws -> (ForwardTarget, String) {
    let target = try #require(
      try replace(database, [ForwardDraft(kind: .email, address: "me@example.org")]).first)
    let code = try #require(
      try database.beginForwardConfirmation(station: station, id: target.id, newCode: "424242", now: now))
    return (target, code)
  }

  /// An email target confirmed (mailed at 3 000, its code entered at 3 001) and an ntfy target with a token saved
  /// beside it at `now`.
  private static func confirmedEmailAndNtfy(_ database: Database, now: Int64 = 2_000) throws
    -> (email: ForwardTarget, ntfy: ForwardTarget)
  {
    let (email, code) = try mailedEmail(database, now: 3_000)
    _ = try database.confirmForwardTarget(station: station, id: email.id, code: code, now: 3_001)
    let ntfy = try replace(
      database,
      [
        ForwardDraft(id: email.id),
        ForwardDraft(kind: .ntfy, address: "https://ntfy.example/t", secret: "tok-123456789"),
      ],
      now: now)[1]
    return (email, ntfy)
  }

  // MARK: replaceForwardTargets

  @Test func anUnregisteredStationHasNoTargetsToReplace() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    #expect(
      try database.replaceForwardTargets(
        of: "NOBODY-1", with: [ForwardDraft(kind: .ntfy, address: "https://ntfy.example/t")], now: 1) == nil)
    #expect(try count(database, "forward_targets") == 0)
    #expect(try database.forwardTargets(of: "NOBODY-1").isEmpty)
  }

  @Test func freshTargetsStartByKindAndKeepTheGivenOrder() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    let stored = try Self.replace(
      database,
      [
        ForwardDraft(kind: .webhook, address: "https://hook.example/in", secret: "s3cret-signing-key"),
        ForwardDraft(kind: .email, address: "Me@Example.org"),
        ForwardDraft(kind: .ntfy, address: "https://ntfy.example/topic", priority: 2, always: true),
      ])
    #expect(stored.map(\.kind) == [.webhook, .email, .ntfy])
    #expect(stored.map(\.status) == [.active, .unconfirmed, .active])
    #expect(stored.map(\.confirmDue) == [false, true, false], "only the email target waits for a mail")
    #expect(stored[1].address == "Me@Example.org", "stored as typed")
    #expect(stored[0].priority == 4 && !stored[0].always, "the defaults")
    #expect(stored[2].priority == 2 && stored[2].always)
    #expect(Set(stored.map(\.id)).count == 3 && stored.allSatisfy { $0.id.hasPrefix("f") })
    #expect(stored.allSatisfy { $0.station == Self.station })
    #expect(try database.forwardTargets(of: "n0call-7") == stored, "read back in order, in any case")
  }

  @Test func theStationNameIsTakenInAnyCase() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    let stored = try #require(
      try database.replaceForwardTargets(
        of: "n0call-7", with: [ForwardDraft(kind: .ntfy, address: "https://ntfy.example/t")], now: 5))
    #expect(stored.first?.station == Self.station)
  }

  @Test func anEmptyListRemovesEveryTarget() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    try Self.replace(
      database,
      [
        ForwardDraft(kind: .ntfy, address: "https://a.example/t"),
        ForwardDraft(kind: .email, address: "a@b.example"),
      ])
    #expect(try Self.replace(database, []).isEmpty)
    #expect(try count(database, "forward_targets") == 0)
    #expect(try Self.replace(database, []).isEmpty, "a second empty list is no error")
  }

  @Test func theLimitIsFivePerStation() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    let five = (1...ForwardTarget.maximumPerStation).map {
      ForwardDraft(kind: .ntfy, address: "https://ntfy.example/\($0)")
    }
    #expect(try Self.replace(database, five).count == 5)
    let message = invalidArgument { () throws(StoreError) in
      try database.replaceForwardTargets(
        of: Self.station, with: five + [ForwardDraft(kind: .ntfy, address: "https://ntfy.example/6")], now: 3)
    }
    #expect(message == "at most 5 forward targets")
    #expect(try database.forwardTargets(of: Self.station).count == 5, "the five stay")
  }

  @Test func aRefusedListWritesNothing() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    let before = try Self.replace(database, [ForwardDraft(kind: .ntfy, address: "https://ntfy.example/keep")])
    // The first draft would be written before the second is refused: the whole list is refused.
    let cases: [([ForwardDraft], String)] = [
      (
        [
          ForwardDraft(kind: .ntfy, address: "https://ntfy.example/new"),
          ForwardDraft(kind: .webhook, address: "https://h.example"),
        ],
        "[1].secret: a webhook needs a secret"
      ),
      ([ForwardDraft(kind: .email)], "[0]: a new forward target needs its type and address"),
      ([ForwardDraft(address: "https://x.example")], "[0]: a new forward target needs its type and address"),
      ([ForwardDraft(id: "fnope")], "[0].id: no forward target fnope"),
      (
        [ForwardDraft(id: before[0].id), ForwardDraft(id: before[0].id)],
        "[1].id: forward target \(before[0].id) is named twice"
      ),
      (
        [ForwardDraft(id: before[0].id, kind: .email)],
        "[0]: a target given another type needs its address"
      ),
      (
        [ForwardDraft(id: before[0].id, kind: .webhook, address: "https://h.example")],
        "[0].secret: a webhook needs a secret"
      ),
    ]
    for (drafts, expected) in cases {
      let message = invalidArgument { () throws(StoreError) in
        try database.replaceForwardTargets(of: Self.station, with: drafts, now: 9_000)
      }
      #expect(message == expected)
      #expect(try database.forwardTargets(of: Self.station) == before, "\(expected)")
    }
  }

  @Test func aKeptIdChangesOnlyAlwaysAndPriority() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    let (email, ntfy) = try Self.confirmedEmailAndNtfy(database)
    // The same id with the same address, a new priority and `always`, and the order swapped.
    let stored = try Self.replace(
      database,
      [
        ForwardDraft(id: ntfy.id, address: ntfy.address, priority: 5),
        ForwardDraft(id: email.id, always: true),
      ])
    #expect(stored.map(\.id) == [ntfy.id, email.id])
    #expect(
      stored[0].priority == 5 && stored[0].secret == "tok-123456789", "a draft without a secret keeps it")
    #expect(stored[1].status == .active && stored[1].always, "the confirmation is kept")
    #expect(!stored[1].confirmDue)
  }

  @Test func aNewAddressIsAFreshTargetWithoutTheOldSecret() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    let (email, ntfy) = try Self.confirmedEmailAndNtfy(database, now: 4_000)
    let stored = try Self.replace(
      database,
      [
        ForwardDraft(id: email.id, address: "other@example.org"),
        ForwardDraft(id: ntfy.id, address: "https://elsewhere.example/t"),
      ],
      now: 4_000)
    #expect(stored[0].id != email.id && stored[0].status == .unconfirmed && stored[0].confirmDue)
    #expect(stored[0].address == "other@example.org")
    #expect(stored[1].id != ntfy.id && stored[1].status == .active)
    #expect(stored[1].secret == nil, "the token never goes to another host")
    #expect(Set(stored.map(\.id)).isDisjoint(with: [email.id, ntfy.id]), "a fresh id is never a dropped one")
    #expect(try count(database, "forward_targets") == 2, "the old rows are gone")
    // Another kind on the same target: its own address, nothing of the old secret.
    let webhook = try Self.replace(
      database,
      [
        ForwardDraft(
          id: stored[1].id, kind: .webhook, address: "https://hook.example/in", secret: "hmac-key-0001")
      ],
      now: 4_000)
    #expect(webhook.map(\.kind) == [.webhook] && webhook[0].secret == "hmac-key-0001")
  }

  @Test func theSameDraftTwiceChangesNothing() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    let first = try Self.replace(database, [ForwardDraft(kind: .email, address: "a@b.example")])
    let again = try Self.replace(
      database, first.map { ForwardDraft(id: $0.id, address: $0.address) }, now: 9_000)
    #expect(again == first)
  }

  // MARK: confirmForwardTarget

  @Test func aConfirmationNeedsAPendingEmailTarget() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    #expect(
      try database.confirmForwardTarget(station: Self.station, id: "fnone", code: "1", now: 1) == .notFound)
    let ntfy = try Self.replace(database, [ForwardDraft(kind: .ntfy, address: "https://n.example/t")])[0]
    #expect(
      try database.confirmForwardTarget(station: Self.station, id: ntfy.id, code: "1", now: 1)
        == .notPending(ntfy))
    #expect(
      try database.confirmForwardTarget(station: "N0CALL-8", id: ntfy.id, code: "1", now: 1) == .notFound,
      "another station's id is not found")
  }

  @Test func noCodeIsGoodBeforeItsMailWentOut() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    let email = try Self.replace(database, [ForwardDraft(kind: .email, address: "a@b.example")])[0]
    #expect(
      try database.confirmForwardTarget(station: Self.station, id: email.id, code: "", now: 1) == .wrongCode)
    #expect(try database.forwardTargets(of: Self.station)[0].status == .unconfirmed)
  }

  @Test func theRightCodeConfirmsOnce() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    let (email, code) = try Self.mailedEmail(database, now: 3_000)
    #expect(code == "424242")
    guard
      case .confirmed(let confirmed) = try database.confirmForwardTarget(
        station: "n0call-7", id: email.id, code: code, now: 3_001)
    else {
      Issue.record("not confirmed")
      return
    }
    #expect(confirmed.status == .active && !confirmed.confirmDue)
    #expect(try database.forwardTargets(of: Self.station) == [confirmed])
    #expect(
      try count(database, "forward_targets", where: "confirm_code IS NULL AND confirm_expires_at IS NULL")
        == 1)
    #expect(
      try database.confirmForwardTarget(station: Self.station, id: email.id, code: code, now: 3_002)
        == .notPending(confirmed), "a second confirmation finds it active")
  }

  @Test func aCodeExpiresAfterItsLifetime() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    let (email, code) = try Self.mailedEmail(database, now: 3_000)
    let expiry = 3_000 + ForwardTarget.confirmationLifetimeMs
    #expect(
      try database.confirmForwardTarget(station: Self.station, id: email.id, code: code, now: expiry)
        == .wrongCode)
    guard
      case .confirmed = try database.confirmForwardTarget(
        station: Self.station, id: email.id, code: code, now: expiry - 1)
    else {
      Issue.record("the code was void a millisecond before its expiry")
      return
    }
  }

  @Test func fiveWrongCodesVoidTheRightOne() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    let (email, code) = try Self.mailedEmail(database, now: 3_000)
    for attempt in 1...ForwardTarget.maximumWrongCodes {
      #expect(
        try database.confirmForwardTarget(
          station: Self.station, id: email.id, code: "00000\(attempt)", now: 3_001)
          == .wrongCode)
      #expect(try count(database, "forward_targets", where: "confirm_wrong = \(attempt)") == 1, "counted")
    }
    #expect(
      try database.confirmForwardTarget(station: Self.station, id: email.id, code: code, now: 3_002)
        == .wrongCode)
    #expect(
      try count(database, "forward_targets", where: "confirm_wrong = 5") == 1, "a void code counts no more")
    // A new mail brings a new code and the count starts again.
    _ = try database.resendForwardConfirmation(station: Self.station, id: email.id, now: 3_003)
    let fresh = try #require(
      try database.beginForwardConfirmation(
        station: Self.station, id: email.id, newCode: "777777", now: 3_004))
    #expect(try count(database, "forward_targets", where: "confirm_wrong = 0") == 1)
    guard
      case .confirmed = try database.confirmForwardTarget(
        station: Self.station, id: email.id, code: fresh, now: 3_005)
    else {
      Issue.record("the new code did not confirm")
      return
    }
  }

  @Test func codesCompareWholeAndExact() {
    #expect(Database.constantTimeEqual("123456", "123456"))
    #expect(!Database.constantTimeEqual("123456", "123457"))
    #expect(!Database.constantTimeEqual("123456", "12345"))
    #expect(!Database.constantTimeEqual("123456", "1234567"))
    #expect(Database.constantTimeEqual("", ""))
  }

  // MARK: the confirmation mails

  @Test func aResendQueuesOnlyAPendingTarget() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    #expect(try database.resendForwardConfirmation(station: Self.station, id: "fnone", now: 1) == .notFound)
    let targets = try Self.replace(
      database,
      [
        ForwardDraft(kind: .email, address: "a@b.example"),
        ForwardDraft(kind: .ntfy, address: "https://n.example/t"),
      ])
    #expect(
      try database.resendForwardConfirmation(station: Self.station, id: targets[1].id, now: 1)
        == .notPending(targets[1]))
    _ = try database.beginForwardConfirmation(station: Self.station, id: targets[0].id, newCode: "1", now: 2)
    #expect(try database.dueForwardConfirmations().isEmpty)
    guard
      case .queued(let queued) = try database.resendForwardConfirmation(
        station: Self.station, id: targets[0].id, now: 3)
    else {
      Issue.record("not queued")
      return
    }
    #expect(queued.confirmDue)
    #expect(try database.dueForwardConfirmations() == [queued])
    #expect(
      try database.resendForwardConfirmation(station: Self.station, id: targets[0].id, now: 4)
        == .queued(queued))
    #expect(try count(database, "rate_limits") == 3, "a resend counts nothing: the mail does")
  }

  @Test func theDueListHoldsOnlyPendingEmailTargetsUpToItsLimit() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    try register(database, "N0CALL-8")
    let mine = try Self.replace(
      database,
      [
        ForwardDraft(kind: .email, address: "a@b.example"),
        ForwardDraft(kind: .email, address: "c@d.example"),
        ForwardDraft(kind: .ntfy, address: "https://n.example/t"),
      ])
    _ = try database.replaceForwardTargets(
      of: "N0CALL-8", with: [ForwardDraft(kind: .email, address: "e@f.example")], now: 5)
    #expect(try database.dueForwardConfirmations().count == 3)
    #expect(try database.dueForwardConfirmations(limit: 1).count == 1)
    #expect(try database.dueForwardConfirmations(limit: 0).isEmpty)
    _ = try database.beginForwardConfirmation(station: Self.station, id: mine[0].id, newCode: "1", now: 6)
    let due = try database.dueForwardConfirmations()
    #expect(Set(due.map(\.id)) == [mine[1].id, try database.forwardTargets(of: "N0CALL-8")[0].id])
  }

  @Test func aMailIsTakenOnceAndCountedOnce() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    let email = try Self.replace(database, [ForwardDraft(kind: .email, address: "a@b.example")])[0]
    #expect(
      try database.beginForwardConfirmation(station: Self.station, id: email.id, newCode: "111111", now: 10)
        == "111111")
    #expect(
      try database.beginForwardConfirmation(station: Self.station, id: email.id, newCode: "222222", now: 11)
        == nil,
      "taken: no longer due")
    #expect(
      try count(
        database, "forward_targets",
        where: "confirm_code = '111111' AND confirm_expires_at = \(10 + ForwardTarget.confirmationLifetimeMs)"
      ) == 1)
    #expect(try count(database, "rate_limits") == 3, "the station's, the mailbox's and the domain's budget")
    #expect(
      try database.beginForwardConfirmation(station: Self.station, id: "fnone", newCode: "1", now: 12) == nil)
  }

  @Test func aRequeuedMailCarriesTheKeptCodeUncounted() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    let email = try Self.replace(database, [ForwardDraft(kind: .email, address: "a@b.example")])[0]
    // Nothing to send again before a code went out.
    try database.requeueForwardConfirmation(station: Self.station, id: email.id)
    #expect(try count(database, "forward_targets", where: "confirm_due = 1") == 1)
    let code = try #require(
      try database.beginForwardConfirmation(station: Self.station, id: email.id, newCode: "111111", now: 10))
    let counted = try database.scalarText("SELECT group_concat(key || '=' || count) FROM rate_limits")
    try database.requeueForwardConfirmation(station: Self.station, id: email.id)
    #expect(try database.dueForwardConfirmations().map(\.id) == [email.id])
    #expect(
      try database.beginForwardConfirmation(station: Self.station, id: email.id, newCode: "999999", now: 20)
        == code)
    #expect(try database.scalarText("SELECT group_concat(key || '=' || count) FROM rate_limits") == counted)
    // Requeued after the code expired: a new code, counted.
    try database.requeueForwardConfirmation(station: Self.station, id: email.id)
    let late = 10 + ForwardTarget.confirmationLifetimeMs
    #expect(
      try database.beginForwardConfirmation(station: Self.station, id: email.id, newCode: "999999", now: late)
        == "999999")
  }

  @Test func theBudgetsAreTheStationsTheMailboxsAndTheDomains() {
    let limits = Database.confirmationLimits(station: "N0CALL-7", to: "J.Doe+x@Example.org")
    #expect(limits.map(\.1) == [.station, .address, .domain])
    #expect(
      limits.map(\.0) == [
        RateKey.forwardConfirmationsFrom + "N0CALL-7", RateKey.forwardConfirmationsTo + "j.doe@example.org",
        RateKey.forwardConfirmationsToDomain + "example.org",
      ])
    #expect(
      Database.confirmationKey("J.Doe+x@Example.org") == RateKey.forwardConfirmationsTo + "j.doe@example.org")
    #expect(
      Database.confirmationLimits(station: "N0CALL-7", to: "a@gmail.com").map(\.1) == [.station, .address],
      "a public provider's domain has no budget")
  }

  @Test func aStationsBudgetRefusesItsEleventhMailAndSaysWhen() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    let now: Int64 = 1_000_000
    for number in 1...ForwardTarget.confirmationsPerStationPerDay {
      let email = try Self.replace(database, [ForwardDraft(kind: .email, address: "u\(number)@gmail.com")])[0]
      #expect(
        try database.beginForwardConfirmation(
          station: Self.station, id: email.id, newCode: "1", now: now + Int64(number))
          == "1")
    }
    let last = try Self.replace(database, [ForwardDraft(kind: .email, address: "u11@gmail.com")])[0]
    guard
      case .limited(let retryAt, let budget) = try database.resendForwardConfirmation(
        station: Self.station, id: last.id, now: now + 20)
    else {
      Issue.record("an eleventh mail was queued")
      return
    }
    #expect(
      budget == .station && retryAt > now + 20 && retryAt <= now + 1 + ForwardTarget.confirmationWindowMs)
    #expect(
      try database.beginForwardConfirmation(station: Self.station, id: last.id, newCode: "1", now: now + 21)
        == nil)
    #expect(try database.dueForwardConfirmations().isEmpty, "a refused mail is not due again")
    #expect(
      try count(database, "rate_limits", where: "key = '\(RateKey.forwardConfirmationsTo)u11@gmail.com'")
        == 0,
      "a refused mail uses up none of the other budgets")
  }

  // MARK: disabling and health

  @Test func disablingMarksTheNamedTargetsOnly() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    try database.disableForwardTargets([], now: 1)
    let targets = try Self.replace(
      database,
      [
        ForwardDraft(kind: .ntfy, address: "https://n.example/a"),
        ForwardDraft(kind: .email, address: "a@b.example"),
      ])
    let long = String(repeating: "x", count: 400)
    try database.disableForwardTargets(
      [
        ForwardDisable(station: Self.station, id: targets[0].id, reason: long, problem: .gone),
        ForwardDisable(station: Self.station, id: targets[1].id, reason: "550 no such user"),
        ForwardDisable(station: Self.station, id: "freplaced", reason: "gone"),
      ],
      now: 5_000)
    let after = try database.forwardTargets(of: Self.station)
    #expect(after[0].status == .disabled(reason: String(repeating: "x", count: 300), at: 5_000))
    #expect(after[0].problem == .gone && !after[0].status.forwards)
    #expect(after[1].status == .disabled(reason: "550 no such user", at: 5_000) && after[1].problem == nil)
    #expect(!after[1].confirmDue, "a disabled address gets no confirmation mail")
    #expect(try database.dueForwardConfirmations().isEmpty)
    #expect(try count(database, "forward_targets") == 2, "no row for an id the station does not have")
  }

  @Test func aFailureIsFailingSinceItsFirstAndADeliveryEndsIt() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    let targets = try Self.replace(
      database,
      [
        ForwardDraft(kind: .ntfy, address: "https://n.example/a"),
        ForwardDraft(kind: .email, address: "a@b.example"),
        ForwardDraft(kind: .webhook, address: "https://h.example", secret: "k"),
      ])
    try database.recordForwardHealth([], now: 1)
    try database.disableForwardTargets(
      [ForwardDisable(station: Self.station, id: targets[2].id, reason: "410")], now: 2)
    let failures = targets.map {
      ForwardHealth(station: Self.station, id: $0.id, failure: ("503", .serverError))
    }
    try database.recordForwardHealth(failures, now: 1_000)
    var seen = try database.forwardTargets(of: Self.station)
    #expect(seen[0].status == .failing(reason: "503", since: 1_000) && seen[0].problem == .serverError)
    #expect(
      seen[0].status.forwards && seen[0].status.name == "failing" && seen[0].status.storedName == "active")
    #expect(seen[1].status == .unconfirmed && seen[1].problem == nil, "an unconfirmed target is not touched")
    #expect(seen[2].status == .disabled(reason: "410", at: 2), "nor a disabled one")
    try database.recordForwardHealth(
      [ForwardHealth(station: Self.station, id: targets[0].id, failure: ("no answer", .noAnswer))], now: 2_000
    )
    seen = try database.forwardTargets(of: Self.station)
    #expect(seen[0].status == .failing(reason: "no answer", since: 1_000), "since the first failure")
    #expect(seen[0].problem == .noAnswer)
    try database.recordForwardHealth(
      [ForwardHealth(station: Self.station, id: targets[0].id, failure: nil)], now: 3_000)
    seen = try database.forwardTargets(of: Self.station)
    #expect(seen[0].status == .active && seen[0].problem == nil)
    // A delivery to an active target changes nothing; disabling a failing one ends the failure.
    try database.recordForwardHealth(
      [ForwardHealth(station: Self.station, id: targets[0].id, failure: nil)], now: 4_000)
    #expect(try database.forwardTargets(of: Self.station)[0].status == .active)
    try database.recordForwardHealth(
      [ForwardHealth(station: Self.station, id: targets[0].id, failure: ("503", .serverError))], now: 5_000)
    try database.disableForwardTargets(
      [ForwardDisable(station: Self.station, id: targets[0].id, reason: "404", problem: .gone)], now: 6_000)
    #expect(try database.forwardTargets(of: Self.station)[0].status == .disabled(reason: "404", at: 6_000))
    #expect(try count(database, "forward_targets", where: "failing_since IS NOT NULL") == 0)
  }

  @Test func theCountsGroupByKindStatusAndReason() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    #expect(try database.forwardTargetCounts().isEmpty)
    let targets = try Self.replace(
      database,
      [
        ForwardDraft(kind: .ntfy, address: "https://n.example/a"),
        ForwardDraft(kind: .ntfy, address: "https://n.example/b"),
        ForwardDraft(kind: .ntfy, address: "https://n.example/c"),
        ForwardDraft(kind: .email, address: "a@b.example"),
      ])
    try database.recordForwardHealth(
      [ForwardHealth(station: Self.station, id: targets[1].id, failure: ("429", .throttled))], now: 10)
    try database.disableForwardTargets(
      [ForwardDisable(station: Self.station, id: targets[2].id, reason: "401", problem: .authRefused)],
      now: 11)
    #expect(
      try database.forwardTargetCounts() == [
        ForwardTargetCount(kind: .email, status: "unconfirmed", problem: nil, count: 1),
        ForwardTargetCount(kind: .ntfy, status: "active", problem: nil, count: 1),
        ForwardTargetCount(kind: .ntfy, status: "disabled", problem: .authRefused, count: 1),
        ForwardTargetCount(kind: .ntfy, status: "failing", problem: .throttled, count: 1),
      ])
  }

  @Test func aTargetsDeliveryKeyAndSecretHint() {
    var target = ForwardTarget(station: "N0CALL-7", id: "fabc1", kind: .ntfy, address: "https://n.example/t")
    #expect(target.deliveryKey == "forward:N0CALL-7/fabc1")
    #expect(target.secretHint == nil)
    target.secret = "12345678"
    #expect(target.secretHint == "…", "a short secret is never shown")
    target.secret = "123456789"
    #expect(target.secretHint == "…6789")
  }

  @Test func theTargetsGoWithTheStation() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    try Self.replace(database, [ForwardDraft(kind: .ntfy, address: "https://n.example/a")])
    #expect(try database.deleteStation(Self.station))
    #expect(try count(database, "forward_targets") == 0)
  }
}
