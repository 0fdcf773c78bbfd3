import Foundation
import JSON
import Push
import Store
import TestSupport
import Testing

/// The forwarder in process against the fake receiver and SMTP server answering as ntfy, mail servers and
/// webhooks do (docs/api.md "Forwarding (email, ntfy, webhooks)", the tables of answers): each answer ends in its documented status, and
/// another station's target never suffers for it. Waits are bounded.
@Suite(.serialized) struct ForwardAnswerServiceTests {
  /// A revoked ntfy token: ntfy counts failed logins per client address (all stations of this server share it),
  /// so the token is sent once, the target disabled, the owner's devices told once, and another station's good
  /// token at the same ntfy server keeps working (the fake refuses this address after 2 failures).
  @Test func aRevokedNtfyTokenIsSentOnceAndTheOwnerIsToldOnce() throws {
    let rig = try ForwardRig(webPush: true)
    defer { rig.close() }
    try rig.register("N0CALL-7")
    try rig.register("N0CALL-8")
    try rig.registerDevice("N0CALL-7", path: "/push/owner", keyed: true)
    try rig.registerDevice("N0CALL-7", path: "/push/keyless", keyed: false)
    try rig.fake.ntfy("/ntfy/revoked", token: "tk_new_token_1234", authFailureLimit: 2)
    try rig.fake.ntfy("/ntfy/good", token: "tk_good_token_5678", authFailureLimit: 2)
    let a = try rig.targets(
      "N0CALL-7",
      [ForwardDraft(kind: .ntfy, address: rig.fake.url("/ntfy/revoked"), secret: "tk_old_token_0000")])
    try rig.targets(
      "N0CALL-8",
      [ForwardDraft(kind: .ntfy, address: rig.fake.url("/ntfy/good"), secret: "tk_good_token_5678")])
    try rig.start()
    try rig.store("N0CALL-7", ["one", "two", "three", "four"])
    #expect(try eventually { try rig.status("N0CALL-7", a[0].id)?.name == "disabled" }, "\(rig.log())")
    for round in 0..<3 {
      try rig.store("N0CALL-7", ["more \(round)"])
      try rig.store("N0CALL-8", ["for B \(round)"])
    }
    #expect(try rig.fake.wait(path: "/ntfy/good", count: 3, status: 200), "\(rig.log())")
    #expect(try eventually { try rig.database.dueOutbox(now: .max, limit: 100).isEmpty }, "\(rig.log())")
    #expect(try rig.fake.requests("/ntfy/revoked").count == 1, "the refused token went once")
    let target = try #require(try rig.target("N0CALL-7", a[0].id))
    guard case .disabled(let reason, _) = target.status else { throw TestFailure("\(target.status)") }
    #expect(reason.contains("401 ntfy refused the access token (40101 unauthorized)"), "\(reason)")
    #expect(target.problem == .authRefused)
    #expect(try rig.fake.requests("/ntfy/good").allSatisfy { $0.int(at: ["status"]) == 200 })
    // The owner's device got one notice (beside the pushes of the messages); the device without the key none.
    func notices(_ path: String) throws -> [String] {
      try rig.fake.requests(path).compactMap { $0.string(at: ["body"]) }.filter {
        $0.contains("forwardDisabled")
      }
    }
    #expect(try eventually { try notices("/push/owner").count == 1 }, "\(rig.log())")
    let body = try notices("/push/owner").first ?? ""
    #expect(body.contains("N0CALL-7: forwarding to ntfy stopped") && body.contains("40101"), "\(body)")
    #expect(body.contains(#""kind":"forwardDisabled""#) && !body.contains("/ntfy/revoked"), "\(body)")
    #expect(try !rig.fake.wait(path: "/push/owner", count: 10, timeoutMs: 500))
    #expect(try notices("/push/owner").count == 1 && notices("/push/keyless").isEmpty)
    #expect(try !rig.fake.requests("/push/keyless").isEmpty, "the keyless device got the message pushes")
    #expect(try rig.database.pushStatus().counters[forward: .ntfy, .disabled] == 1)
  }

  @Test func an403OfAProtectedTopicDisablesATargetWithoutAToken() throws {
    let rig = try ForwardRig()
    defer { rig.close() }
    try rig.register("N0CALL-7")
    try rig.fake.ntfy("/ntfy/protected", token: "tk_someone_elses")
    let a = try rig.targets("N0CALL-7", [ForwardDraft(kind: .ntfy, address: rig.fake.url("/ntfy/protected"))])
    try rig.start()
    try rig.store("N0CALL-7", ["hello", "again"])
    #expect(try eventually { try rig.status("N0CALL-7", a[0].id)?.name == "disabled" }, "\(rig.log())")
    #expect(try rig.status("N0CALL-7", a[0].id)?.reason?.contains("403") == true)
    #expect(try rig.target("N0CALL-7", a[0].id)?.problem == .authRefused)
    #expect(try eventually { try rig.database.dueOutbox(now: .max, limit: 100).isEmpty })
    #expect(try rig.fake.requests("/ntfy/protected").count == 1)
  }

  /// ntfy's 429 (42909: too many auth failures from this address) carries no Retry-After: the target and every
  /// other target at that ntfy server wait the default back-off, nothing is sent before it, and then both go.
  @Test func ntfys429HoldsTheWholeServiceForItsBackOff() throws {
    let rig = try ForwardRig()
    defer { rig.close() }
    try rig.register("N0CALL-7")
    try rig.register("N0CALL-8")
    try rig.register("N0CALL-9")
    try rig.fake.script(
      "/ntfy/busy", status: 429, answer: ForwardFake.ntfyError(42909, "limit reached: too many auth failures")
    )
    let a = try rig.targets(
      "N0CALL-7", [ForwardDraft(kind: .ntfy, address: rig.fake.url("/ntfy/busy"), secret: "tk_a_token_1234")])
    let b = try rig.targets(
      "N0CALL-8", [ForwardDraft(kind: .ntfy, address: rig.fake.url("/ntfy/other"), secret: "tk_b_token_1234")]
    )
    try rig.start()
    try rig.store("N0CALL-7", ["throttled"])
    #expect(try rig.fake.wait(path: "/ntfy/busy", count: 1, status: 429), "\(rig.log())")
    #expect(try eventually { rig.retryWaits().count == 1 }, "\(rig.log())")
    #expect((60_000...90_000).contains(rig.retryWaits()[0]), "\(rig.retryWaits())")
    #expect(try eventually { try rig.status("N0CALL-7", a[0].id)?.name == "failing" }, "\(rig.log())")
    #expect(try rig.target("N0CALL-7", a[0].id)?.problem == .throttled)
    #expect(try rig.status("N0CALL-7", a[0].id)?.reason?.contains("42909") == true)
    try rig.store("N0CALL-8", ["waits for the service"])
    #expect(try !rig.fake.wait(path: "/ntfy/other", count: 1, timeoutMs: 700), "sent during ntfy's back-off")
    #expect(try rig.fake.requests("/ntfy/busy").count == 1, "not retried before the back-off")
    rig.clock.advance(by: rig.retryWaits().max()! + 1)
    rig.service?.notify()
    #expect(try rig.fake.wait(path: "/ntfy/busy", count: 1, status: 200), "\(rig.log())")
    #expect(try rig.fake.wait(path: "/ntfy/other", count: 1, status: 200), "\(rig.log())")
    #expect(try eventually { try rig.status("N0CALL-7", a[0].id) == .active }, "\(rig.log())")
    #expect(try eventually { try rig.status("N0CALL-8", b[0].id) == .active }, "\(rig.log())")
    #expect(try eventually { try rig.database.dueOutbox(now: .max, limit: 100).isEmpty })
  }

  /// A full mailbox (552 5.2.2 at RCPT TO) is passing (RFC 5321 §4.5.3.1.10): `failing` with the reason, retried
  /// with growing waits, and active again without a new confirmation once the mailbox takes mail.
  @Test func aFullMailboxIsFailingThenActiveAgainWithoutConfirming() throws {
    let rig = try ForwardRig()
    defer { rig.close() }
    try rig.register("N0CALL-7")
    try rig.register("N0CALL-8")
    let a = try rig.targets("N0CALL-7", [ForwardDraft(kind: .email, address: "full@example.org")])
    try rig.targets("N0CALL-8", [rig.webhook("/hook/b")])
    try rig.start()
    try rig.confirm("N0CALL-7", a[0].id, to: "full@example.org")
    try rig.fake.refuse("full@example.org", code: 552, reply: "5.2.2 <full@example.org>: Mailbox full")
    try rig.store("N0CALL-7", ["to a full mailbox"])
    for attempt in 1...2 {
      #expect(try eventually { rig.retryWaits().count == attempt }, "\(rig.log())")
      if attempt == 1 {
        #expect(try eventually { try rig.status("N0CALL-7", a[0].id)?.name == "failing" }, "\(rig.log())")
        let target = try #require(try rig.target("N0CALL-7", a[0].id))
        #expect(target.problem == .mailboxFull)
        #expect(target.status.reason?.contains("552 5.2.2") == true, "\(target.status)")
        try rig.store("N0CALL-8", ["B is not held up"])
        #expect(try rig.fake.wait(path: "/hook/b", count: 1), "\(rig.log())")
      } else {
        try rig.fake.refuse("full@example.org", code: 0)
      }
      rig.clock.advance(by: rig.retryWaits()[attempt - 1] + 1)
      rig.service?.notify()
    }
    let waits = rig.retryWaits()
    #expect((10_000...15_000).contains(waits[0]) && (20_000...30_000).contains(waits[1]), "\(waits)")
    #expect(try rig.fake.waitMail(to: "full@example.org", count: 2), "\(rig.log())")
    #expect(try eventually { try rig.status("N0CALL-7", a[0].id) == .active }, "\(rig.log())")
    #expect(try rig.target("N0CALL-7", a[0].id)?.problem == nil)
    #expect(try eventually { try rig.database.dueOutbox(now: .max, limit: 100).isEmpty })
  }

  @Test func a452IsFailingAndA550_5_1_1Disables() throws {
    let rig = try ForwardRig()
    defer { rig.close() }
    try rig.register("N0CALL-7")
    try rig.register("N0CALL-8")
    let a = try rig.targets("N0CALL-7", [ForwardDraft(kind: .email, address: "busy@example.org")])
    let b = try rig.targets("N0CALL-8", [ForwardDraft(kind: .email, address: "gone@example.org")])
    try rig.start()
    try rig.confirm("N0CALL-7", a[0].id, to: "busy@example.org")
    try rig.confirm("N0CALL-8", b[0].id, to: "gone@example.org")
    try rig.fake.refuse("busy@example.org", code: 452, reply: "4.3.1 Insufficient system storage")
    try rig.fake.refuse("gone@example.org", code: 550, reply: "5.1.1 <gone@example.org>: User unknown")
    try rig.store("N0CALL-7", ["put off"])
    try rig.store("N0CALL-8", ["no such user"])
    #expect(try eventually { try rig.status("N0CALL-7", a[0].id)?.name == "failing" }, "\(rig.log())")
    #expect(
      try rig.status("N0CALL-7", a[0].id)?.reason == "mail put off: 452 4.3.1 Insufficient system storage")
    #expect(try rig.target("N0CALL-7", a[0].id)?.problem == .mailDeferred)
    #expect(try eventually { try rig.status("N0CALL-8", b[0].id)?.name == "disabled" }, "\(rig.log())")
    #expect(
      try rig.status("N0CALL-8", b[0].id)?.reason
        == "the mail server refused the address: 550 5.1.1 <gone@example.org>: User unknown")
    #expect(try rig.target("N0CALL-8", b[0].id)?.problem == .addressRefused)
    // One station's refused address leaves the other's passing failure as it was.
    #expect(try rig.status("N0CALL-7", a[0].id)?.name == "failing")
  }

  /// A webhook answering 308 is never followed: `failing` with the Location, the redirect's target gets nothing,
  /// and the next delivery makes it active again.
  @Test func aRedirectIsFailingWithTheLocationAndNeverFollowed() throws {
    let rig = try ForwardRig()
    defer { rig.close() }
    try rig.register("N0CALL-7")
    try rig.register("N0CALL-8")
    let moved = rig.fake.url("/hook/new")
    try rig.fake.script("/hook/moved", status: 308, headers: [("Location", moved)])
    let a = try rig.targets("N0CALL-7", [rig.webhook("/hook/moved")])
    try rig.targets("N0CALL-8", [rig.webhook("/hook/b")])
    try rig.start()
    try rig.store("N0CALL-7", ["redirected"])
    #expect(try eventually { try rig.status("N0CALL-7", a[0].id)?.name == "failing" }, "\(rig.log())")
    #expect(
      try rig.status("N0CALL-7", a[0].id)?.reason
        == "308 redirect to \(moved), not followed: save the target's new URL")
    #expect(try rig.target("N0CALL-7", a[0].id)?.problem == .redirect)
    #expect(try rig.fake.requests("/hook/new").isEmpty, "never followed")
    try rig.store("N0CALL-8", ["B is not held up"])
    #expect(try rig.fake.wait(path: "/hook/b", count: 1), "\(rig.log())")
    #expect(try eventually { rig.retryWaits().count == 1 }, "\(rig.log())")
    rig.clock.advance(by: rig.retryWaits()[0] + 1)
    rig.service?.notify()
    #expect(try rig.fake.wait(path: "/hook/moved", count: 1, status: 200), "\(rig.log())")
    #expect(try eventually { try rig.status("N0CALL-7", a[0].id) == .active }, "\(rig.log())")
    #expect(try rig.fake.requests("/hook/new").isEmpty)
  }
}
