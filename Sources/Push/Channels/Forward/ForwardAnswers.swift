import JSON
import Store

/// What one answer of a forward target means for its message and for the target (docs/api.md "Forwarding (email, ntfy, webhooks)", the tables
/// of answers per channel): pure.
enum ForwardVerdict: Sendable, Equatable {
  /// The service took the message.
  case delivered
  /// The target can never work as saved: disabled with the reason (the owner is told once), and nothing more is
  /// sent to it.
  case disable(ForwardProblem, reason: String)
  /// A passing failure: the message is retried after `wait`, and the target shows `failing` with the reason until
  /// the next delivery.
  case failing(ForwardProblem, reason: String, wait: ForwardWait)
  /// This message cannot be delivered (the service refused it as sent); the target is kept as it is.
  case dropMessage(reason: String)
}

/// How long a failing forward waits before it is tried again.
enum ForwardWait: Sendable, Equatable {
  /// The growing backoff (10 s doubling with jitter, at most 15 min), or `Retry-After` when that is later.
  case backoff
  /// No answer: the backoff (a lost connection is tried again sooner once).
  case transport
  /// A 429: `Retry-After` when given, else 60 s doubling with each 429 in a row. `wholeService`: the limit is the
  /// service's for this server's address (all stations share it), so every target at the same origin waits too.
  case throttled(wholeService: Bool)
}

/// ntfy's answers to a publish (`POST` to a topic URL), as ntfy documents them: its error JSON
/// (`{"code":40101,"http":401,"error":"unauthorized","link":…}`, server/errors.go), authentication
/// (its publishing guide, "Authentication") and rate limiting (its configuration guide, "Rate limiting": limits per visitor, a
/// visitor being the client's IP address, or the user for an authenticated request; failed logins are counted per
/// IP address, 30 at once then one a minute, `visitor-auth-failure-limit-*`, after which every authenticated
/// request from that address is refused with 429 code 42909 — server.go `maybeAuthenticate`). ntfy sends no
/// `Retry-After`.
///
/// | answer | verdict |
/// |---|---|
/// | 2xx | delivered |
/// | 3xx | failing `redirect` (``HTTPAnswers/redirect(_:)``) |
/// | 401 (40101), 403 (40301) | disabled `auth_refused`: the token was revoked or lacks write access, or the topic needs one; never sent again |
/// | 404, 410 | disabled `gone` |
/// | 429 42909 (auth failures of this server's address), or any 429 to a target without a token (an IP-based limit) | failing `throttled`, every target at that ntfy server waits |
/// | other 429 (42901 requests, 42908 daily messages …: the user's limits) | failing `throttled`, that target waits |
/// | 5xx | failing `server_error`, the backoff |
/// | other 4xx (400 40xxx, 413 41301 …) | that message dropped, the target kept |
/// | no answer | failing `no_answer` |
enum NtfyAnswers {
  /// The verdict of `response` to a target with (`hasToken`) or without an access token.
  static func verdict(_ response: ProviderResponse, hasToken: Bool) -> ForwardVerdict {
    if let failure = response.transportError {
      return .failing(.noAnswer, reason: "no answer: \(failure)", wait: .transport)
    }
    let status = response.status
    let detail = errorDetail(response.body).map { " (\($0))" } ?? ""
    switch status {
    case 200...299:
      return .delivered
    case 300...399:
      return HTTPAnswers.redirect(response)
    case 401, 403:
      let what =
        hasToken
        ? "ntfy refused the access token" : "ntfy refused to publish without an access token"
      return .disable(.authRefused, reason: "\(status) \(what)\(detail); save the target with a new token")
    case 404, 410:
      return .disable(.gone, reason: "\(status) the endpoint is gone\(detail)")
    case 429:
      let code = errorCode(response.body)
      let wholeService = code == authFailureCode || !hasToken
      return .failing(
        .throttled, reason: "429 ntfy rate limited this server\(detail)",
        wait: .throttled(wholeService: wholeService))
    case 500...599:
      return .failing(.serverError, reason: "\(status)\(detail)", wait: .backoff)
    default:
      return .dropMessage(reason: "\(status)\(detail)")
    }
  }

  /// ntfy's code for "limit reached: too many auth failures" (server/errors.go), counted per IP address.
  static let authFailureCode = 42909

  /// `code` of ntfy's error JSON, nil when the body is not one.
  static func errorCode(_ body: [UInt8]) -> Int? {
    guard let object = errorObject(body), case .number(let number)? = object["code"] else { return nil }
    return number.int64.flatMap { Int(exactly: $0) }
  }

  /// `40101 unauthorized` from ntfy's error JSON (its code and `error`, shortened), nil when the body is not one.
  static func errorDetail(_ body: [UInt8]) -> String? {
    guard let object = errorObject(body) else { return nil }
    var parts: [String] = []
    if let code = errorCode(body) { parts.append(String(code)) }
    if case .string(let message)? = object["error"] {
      parts.append(String(message.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(120)))
    }
    return parts.isEmpty ? nil : parts.joined(separator: " ")
  }

  private static func errorObject(_ body: [UInt8]) -> JSONObject? {
    guard !body.isEmpty, body.count <= 4096,
      case .object(let object)? = try? JSONParser.parse(body, maxDepth: 4, maxMembers: 32)
    else { return nil }
    return object
  }
}

/// A webhook's answers (RFC 9110 §15): the receiver is the owner's own.
///
/// | answer | verdict |
/// |---|---|
/// | 2xx | delivered (§15.3) |
/// | 3xx (301, 302, 303, 307, 308) | failing `redirect` with the `Location`, never followed (§15.4: following is the client's choice; the signed body and a secret in the URL go only to the address the owner gave) |
/// | 404, 410 | disabled `gone` (§15.5.5, §15.5.11) |
/// | 429 | failing `throttled`, `Retry-After` else 60 s doubling (RFC 6585 §4, RFC 9110 §10.2.3) |
/// | 5xx | failing `server_error`, the backoff or a later `Retry-After` (§15.6) |
/// | other 4xx | that message dropped, the target kept |
/// | no answer | failing `no_answer` |
enum HTTPAnswers {
  static func verdict(_ response: ProviderResponse) -> ForwardVerdict {
    if let failure = response.transportError {
      return .failing(.noAnswer, reason: "no answer: \(failure)", wait: .transport)
    }
    let status = response.status
    let detail = response.body.isEmpty ? "" : ": " + response.bodySummary
    switch status {
    case 200...299:
      return .delivered
    case 300...399:
      return redirect(response)
    case 404, 410:
      return .disable(.gone, reason: "\(status) the endpoint is gone")
    case 429:
      return .failing(.throttled, reason: "429 rate limited" + detail, wait: .throttled(wholeService: false))
    case 500...599:
      return .failing(.serverError, reason: "\(status)" + detail, wait: .backoff)
    default:
      return .dropMessage(reason: "\(status)" + detail)
    }
  }

  /// A redirect (RFC 9110 §15.4): never followed, the target failing with the `Location` the owner should save
  /// instead (retried with the backoff, so a receiver that stops redirecting gets the messages still within
  /// `maxAge`).
  static func redirect(_ response: ProviderResponse) -> ForwardVerdict {
    let location = response.location.map { " to " + printable($0) } ?? " without a Location"
    return .failing(
      .redirect, reason: "\(response.status) redirect\(location), not followed: save the target's new URL",
      wait: .backoff)
  }

  /// `text` without control characters.
  static func printable(_ text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
  }
}

/// The SMTP server's answers to a forwarded or confirmation mail, per RFC 5321 (§4.2.1 reply classes, §4.2.2 and
/// §4.2.3 the codes, §4.5.3.1.10 a 552 to `RCPT TO` is temporary) and RFC 3463 (enhanced status codes
/// `class.subject.detail`: subject 1 addressing, 2 mailbox, 3 mail system, 4 network and routing, 5 protocol, 6
/// content, 7 security or policy). The enhanced code comes from the server's last reply line, when it sends one
/// (RFC 2034).
///
/// | answer | verdict |
/// |---|---|
/// | 250 | delivered |
/// | `RCPT TO` refused with 5.1.x (5.1.1 no such mailbox, 5.1.2 no such domain, 5.1.3 bad syntax, 5.1.6 moved; not 5.1.7/5.1.8, the sender's), or without an enhanced code 550, 551, 553 | disabled `address_refused` |
/// | enhanced x.2.2 (mailbox full), or 552 without an enhanced code | failing `mailbox_full`, the backoff; active again when the mailbox takes mail |
/// | any 4xx (450, 451, 452 …), enhanced 5.2.x, 5.3.x, 5.4.x, 5.7.x, other 5xx to `RCPT TO` or after `DATA` | failing `mail_deferred`, the backoff |
/// | enhanced 5.6.x (the content refused) | that message dropped |
/// | no answer; the operator's own server refusing the login, the sender (`MAIL FROM`), TLS | failing `mail_server`: never held against the owner's address |
enum SMTPAnswers {
  /// Where in the SMTP transaction the failure came.
  enum Stage: Equatable {
    /// The greeting, `EHLO`, `STARTTLS`, `AUTH`, `MAIL FROM`: the operator's own server and configuration.
    case session
    /// `RCPT TO`: the owner's address.
    case recipient
    /// `DATA` and the end of the message.
    case message
  }

  /// The stage libcurl's error text names (lib/smtp.c: `RCPT failed: %d`, `DATA failed: %d`; a refusal at the
  /// end of the message has no text of its own, `Weird server reply`).
  static func stage(_ failure: String) -> Stage {
    if failure.hasPrefix("RCPT failed") { return .recipient }
    if failure.hasPrefix("DATA failed") || failure.hasPrefix("Weird server reply") { return .message }
    return .session
  }

  /// The enhanced status code of a reply line (`552 5.2.2 Mailbox full` → (5, 2, 2)): right after the basic code
  /// and its separator, `class.subject.detail` with a class 2, 4 or 5, subject and detail of 1–3 digits (RFC 3463
  /// §2); nil when the line has none.
  static func enhancedCode(_ line: String) -> (Int, Int, Int)? {
    let bytes = Array(line.utf8)
    guard bytes.count > 4, bytes[3] == UInt8(ascii: " ") || bytes[3] == UInt8(ascii: "-") else { return nil }
    let text = bytes[4...].prefix { $0 != UInt8(ascii: " ") }
    let parts = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    guard parts.count == 3, parts.allSatisfy({ (1...3).contains($0.count) && $0.allSatisfy(isDigit) }) else {
      return nil
    }
    let numbers = parts.map { Int(String(decoding: $0, as: UTF8.self)) ?? -1 }
    guard [2, 4, 5].contains(numbers[0]), parts[0].count == 1 else { return nil }
    return (numbers[0], numbers[1], numbers[2])
  }

  private static func isDigit(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
  }

  static func verdict(_ response: ProviderResponse) -> ForwardVerdict {
    guard let failure = response.transportError else { return .delivered }
    let code = response.status
    let reply = response.mailReply.map { HTTPAnswers.printable($0) }
    let said = reply ?? failure
    guard (400...599).contains(code) else {
      return .failing(.mailServer, reason: "mail not sent: \(failure)", wait: .transport)
    }
    let stage = stage(failure)
    guard stage != .session else {
      return .failing(
        .mailServer, reason: "mail not sent: \(failure)" + (reply.map { " (\($0))" } ?? ""),
        wait: .backoff)
    }
    // The enhanced code counts only when its class agrees with the basic code's (RFC 3463 §2); x.0.x says nothing.
    var enhanced = reply.flatMap(enhancedCode)
    if let (klass, subject, _) = enhanced, klass != code / 100 || subject == 0 { enhanced = nil }
    let full = enhanced.map { $0.1 == 2 && $0.2 == 2 } ?? (code == 552)
    if full {
      return .failing(.mailboxFull, reason: "the mailbox is full: \(said)", wait: .backoff)
    }
    if code < 500 {
      return .failing(.mailDeferred, reason: "mail put off: \(said)", wait: .backoff)
    }
    if let (_, subject, detail) = enhanced {
      switch subject {
      case 1 where detail != 7 && detail != 8:
        return .disable(.addressRefused, reason: "the mail server refused the address: \(said)")
      case 6:
        return .dropMessage(reason: "the mail server refused the message: \(said)")
      case 5, 1:
        return .failing(.mailServer, reason: "mail not sent: \(said)", wait: .backoff)
      default:
        return .failing(.mailDeferred, reason: "mail put off: \(said)", wait: .backoff)
      }
    }
    if stage == .recipient, [550, 551, 553].contains(code) {
      return .disable(.addressRefused, reason: "the mail server refused the address: \(said)")
    }
    return .failing(.mailDeferred, reason: "mail put off: \(said)", wait: .backoff)
  }
}
