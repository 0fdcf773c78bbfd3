import Store
import Testing

@testable import Push

/// The tables of forward answers (docs/api.md "Forwarding (email, ntfy, webhooks)"), row by row: ntfy's (its server's error JSON and limits),
/// a webhook's (RFC 9110), the SMTP server's (RFC 5321, RFC 3463).
@Suite struct ForwardAnswersTests {
  static func ntfyBody(_ code: Int, _ message: String) -> [UInt8] {
    Array(
      #"{"code":\#(code),"http":\#(code / 100),"error":"\#(message)","link":"https://ntfy.sh/docs"}"#.utf8)
  }

  static func problem(_ verdict: ForwardVerdict) -> ForwardProblem? {
    switch verdict {
    case .disable(let problem, _), .failing(let problem, _, _): problem
    case .delivered, .dropMessage: nil
    }
  }

  // MARK: ntfy

  @Test func ntfyDeliveredForEvery2xx() {
    for status in [200, 201, 204] {
      #expect(NtfyAnswers.verdict(ProviderResponse(status: status), hasToken: true) == .delivered)
    }
  }

  @Test func ntfyRefusedTokensDisableWithTheServersCode() {
    let unauthorized = NtfyAnswers.verdict(
      ProviderResponse(status: 401, body: Self.ntfyBody(40101, "unauthorized")), hasToken: true)
    #expect(
      unauthorized
        == .disable(
          .authRefused,
          reason: "401 ntfy refused the access token (40101 unauthorized); save the target with a new token"))
    let forbidden = NtfyAnswers.verdict(
      ProviderResponse(status: 403, body: Self.ntfyBody(40301, "forbidden")), hasToken: false)
    #expect(
      forbidden
        == .disable(
          .authRefused,
          reason:
            "403 ntfy refused to publish without an access token (40301 forbidden); save the target with a new token"
        ))
    // A body that is not ntfy's JSON (a proxy's page) still disables, without a code.
    guard
      case .disable(.authRefused, let reason) = NtfyAnswers.verdict(
        ProviderResponse(status: 403, body: Array("<html>no</html>".utf8)), hasToken: true)
    else {
      Issue.record("a 403 page did not disable")
      return
    }
    #expect(reason.hasPrefix("403 ntfy refused the access token;"), "\(reason)")
  }

  @Test func ntfyGoneDisables() {
    for status in [404, 410] {
      #expect(Self.problem(NtfyAnswers.verdict(ProviderResponse(status: status), hasToken: true)) == .gone)
    }
  }

  @Test func ntfyAuthFailureLimitHoldsTheWholeServiceOtherLimitsTheTarget() {
    let auth = NtfyAnswers.verdict(
      ProviderResponse(status: 429, body: Self.ntfyBody(42909, "limit reached: too many auth failures")),
      hasToken: true)
    #expect(
      auth
        == .failing(
          .throttled,
          reason: "429 ntfy rate limited this server (42909 limit reached: too many auth failures)",
          wait: .throttled(wholeService: true)))
    let requests = NtfyAnswers.verdict(
      ProviderResponse(status: 429, body: Self.ntfyBody(42901, "limit reached: too many requests")),
      hasToken: true)
    guard case .failing(.throttled, _, .throttled(wholeService: false)) = requests else {
      Issue.record("\(requests)")
      return
    }
    // Without a token ntfy counts by the client's address: every anonymous topic there shares the limit.
    let anonymous = NtfyAnswers.verdict(
      ProviderResponse(status: 429, body: Self.ntfyBody(42908, "limit reached: daily message quota reached")),
      hasToken: false)
    guard case .failing(.throttled, _, .throttled(wholeService: true)) = anonymous else {
      Issue.record("\(anonymous)")
      return
    }
  }

  @Test func ntfyRedirectsServerErrorsNoAnswerAndOtherRefusals() {
    let redirect = NtfyAnswers.verdict(
      ProviderResponse(status: 301, location: "https://ntfy.example.net/topic"), hasToken: true)
    #expect(
      redirect
        == .failing(
          .redirect,
          reason: "301 redirect to https://ntfy.example.net/topic, not followed: save the target's new URL",
          wait: .backoff))
    #expect(
      NtfyAnswers.verdict(
        ProviderResponse(status: 507, body: Self.ntfyBody(50701, "insufficient storage")), hasToken: true)
        == .failing(.serverError, reason: "507 (50701 insufficient storage)", wait: .backoff))
    #expect(
      NtfyAnswers.verdict(ProviderResponse(status: 0, transportError: "timeout"), hasToken: true)
        == .failing(.noAnswer, reason: "no answer: timeout", wait: .transport))
    #expect(
      NtfyAnswers.verdict(
        ProviderResponse(status: 413, body: Self.ntfyBody(41301, "attachment too large")), hasToken: true)
        == .dropMessage(reason: "413 (41301 attachment too large)"))
    #expect(NtfyAnswers.verdict(ProviderResponse(status: 400), hasToken: true) == .dropMessage(reason: "400"))
  }

  // MARK: Webhooks (RFC 9110)

  @Test func webhookRows() {
    #expect(HTTPAnswers.verdict(ProviderResponse(status: 202)) == .delivered)
    for status in [301, 302, 303, 307, 308] {
      let verdict = HTTPAnswers.verdict(ProviderResponse(status: status, location: "https://new.example/h"))
      #expect(
        verdict
          == .failing(
            .redirect,
            reason: "\(status) redirect to https://new.example/h, not followed: save the target's new URL",
            wait: .backoff))
    }
    #expect(
      HTTPAnswers.verdict(ProviderResponse(status: 308))
        == .failing(
          .redirect, reason: "308 redirect without a Location, not followed: save the target's new URL",
          wait: .backoff))
    // A Location with control characters is shown without them.
    guard
      case .failing(_, let reason, _) = HTTPAnswers.verdict(
        ProviderResponse(status: 302, location: "https://x.example/\r\nSet-Cookie: a"))
    else { return }
    #expect(!reason.contains("\r") && !reason.contains("\n"))
    for status in [404, 410] {
      #expect(
        HTTPAnswers.verdict(ProviderResponse(status: status))
          == .disable(.gone, reason: "\(status) the endpoint is gone"))
    }
    #expect(
      HTTPAnswers.verdict(ProviderResponse(status: 429))
        == .failing(.throttled, reason: "429 rate limited", wait: .throttled(wholeService: false)))
    #expect(Self.problem(HTTPAnswers.verdict(ProviderResponse(status: 503))) == .serverError)
    #expect(
      Self.problem(HTTPAnswers.verdict(ProviderResponse(status: 0, transportError: "refused"))) == .noAnswer)
    // A webhook's 401 or 403 is the owner's receiver refusing that message: the target is kept.
    for status in [400, 401, 403, 413] {
      #expect(HTTPAnswers.verdict(ProviderResponse(status: status)) == .dropMessage(reason: "\(status)"))
    }
  }

  // MARK: SMTP (RFC 5321, RFC 3463)

  static func mail(_ code: Int, _ failure: String, reply: String? = nil) -> ForwardVerdict {
    SMTPAnswers.verdict(ProviderResponse(status: code, transportError: failure, mailReply: reply))
  }

  @Test func enhancedCodesAreReadFromTheReplyLine() {
    #expect(SMTPAnswers.enhancedCode("552 5.2.2 Mailbox full").map { [$0.0, $0.1, $0.2] } == [5, 2, 2])
    #expect(SMTPAnswers.enhancedCode("550-5.1.1 The email account").map { [$0.0, $0.1, $0.2] } == [5, 1, 1])
    #expect(
      SMTPAnswers.enhancedCode("451 4.7.650 The mail server").map { [$0.0, $0.1, $0.2] } == [4, 7, 650])
    for line in ["550 Mailbox unavailable", "550 5.1", "550 51.1.1 x", "550 5.1.1234 x", "55", "550 3.1.1 x"]
    {
      #expect(SMTPAnswers.enhancedCode(line) == nil, "\(line)")
    }
  }

  @Test func onlyAnAddressRefusedForGoodDisables() {
    // Enhanced 5.1.x to RCPT TO: the address does not exist or cannot be reached, whatever the basic code.
    for reply in [
      "550 5.1.1 <nobody@example.org>: Recipient address rejected", "553 5.1.3 Bad recipient address syntax",
      "550 5.1.2 Host unknown", "551 5.1.6 Mailbox moved", "554 5.1.1 Unknown user",
    ] {
      let code = Int(reply.prefix(3)) ?? 0
      #expect(
        Self.mail(code, "RCPT failed: \(code)", reply: reply)
          == .disable(.addressRefused, reason: "the mail server refused the address: \(reply)"), "\(reply)")
    }
    // Without an enhanced code: 550, 551 and 553 to RCPT TO.
    for code in [550, 551, 553] {
      #expect(
        Self.problem(Self.mail(code, "RCPT failed: \(code)", reply: "\(code) no such user"))
          == .addressRefused)
      #expect(Self.problem(Self.mail(code, "RCPT failed: \(code)")) == .addressRefused)
    }
    // A refusal after DATA that names the address (5.1.1) disables too.
    #expect(
      Self.problem(Self.mail(550, "Weird server reply", reply: "550 5.1.1 User unknown")) == .addressRefused)
  }

  @Test func aFullMailboxIsPassing() {
    let full = Self.mail(552, "RCPT failed: 552", reply: "552 5.2.2 <me@example.org>: Mailbox full")
    #expect(
      full
        == .failing(
          .mailboxFull, reason: "the mailbox is full: 552 5.2.2 <me@example.org>: Mailbox full",
          wait: .backoff))
    // 552 without an enhanced code (RFC 5321 §4.5.3.1.10), 550 5.2.2 and 452 4.2.2 are the same.
    #expect(Self.problem(Self.mail(552, "RCPT failed: 552")) == .mailboxFull)
    #expect(Self.problem(Self.mail(550, "RCPT failed: 550", reply: "550 5.2.2 Over quota")) == .mailboxFull)
    #expect(Self.problem(Self.mail(452, "RCPT failed: 452", reply: "452 4.2.2 Over quota")) == .mailboxFull)
    #expect(
      Self.problem(Self.mail(552, "Weird server reply", reply: "552 5.3.4 Message too big")) == .mailDeferred)
  }

  @Test func other4xxAndMailboxSystemNetworkAndPolicyCodesArePassing() {
    for (code, reply) in [
      (452, "452 Insufficient system storage"), (450, "450 4.1.1 Recipient unverified, try later"),
      (451, "451 4.3.0 Local error"), (421, "421 4.4.2 Timeout"),
      (550, "550 5.2.1 Mailbox disabled"), (554, "554 5.3.0 Mail system error"),
      (550, "550 5.4.4 Unable to route"), (550, "550 5.7.1 Rejected by policy"),
      (554, "554 Transaction failed"),
    ] {
      let verdict = Self.mail(code, "RCPT failed: \(code)", reply: reply)
      #expect(
        verdict == .failing(.mailDeferred, reason: "mail put off: \(reply)", wait: .backoff), "\(reply)")
    }
    // An enhanced code whose class disagrees with the basic code says nothing (RFC 3463 §2).
    #expect(Self.problem(Self.mail(451, "RCPT failed: 451", reply: "451 5.1.1 odd")) == .mailDeferred)
    #expect(Self.problem(Self.mail(550, "RCPT failed: 550", reply: "550 4.1.1 odd")) == .addressRefused)
  }

  @Test func contentRefusalsDropTheMessageAndTheOperatorsServerNeverDisables() {
    #expect(
      Self.mail(554, "Weird server reply", reply: "554 5.6.0 Content rejected")
        == .dropMessage(reason: "the mail server refused the message: 554 5.6.0 Content rejected"))
    for (code, failure, reply) in [
      (535, "Login denied", "535 5.7.8 Authentication credentials invalid"),
      (550, "MAIL failed: 550", "550 5.1.8 Sender address rejected"),
      (554, "STARTTLS not supported.", nil), (0, "Couldn't connect to server", nil),
      (550, "RCPT failed: 550", "550 5.1.7 Bad sender"),
      (550, "RCPT failed: 550", "550 5.5.1 Protocol error"),
    ] as [(Int, String, String?)] {
      #expect(
        Self.problem(Self.mail(code, failure, reply: reply)) == .mailServer, "\(failure) \(reply ?? "")")
    }
    #expect(SMTPAnswers.verdict(ProviderResponse(status: 250)) == .delivered)
  }
}
