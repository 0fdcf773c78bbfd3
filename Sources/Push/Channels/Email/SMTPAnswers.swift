import JSON
import Store

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
