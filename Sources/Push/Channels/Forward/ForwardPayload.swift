import APRS
import JSON
import Logging
import Store

/// What a forward target receives for one message, pure (docs/api.md "Forwarding"):
/// - webhook: a JSON POST `{"type","station","to","from","text","timestamp","seqId"}` signed with
///   `X-APRS-Cloud-Signature: t=<unix s>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`;
/// - ntfy: a POST of the text with the `Title`, `Tags` and `Priority` headers ntfy documents (and
///   `Authorization: Bearer <token>` when the target has one);
/// - email: a plain-text mail, subject `APRS from <sender>`, without `Reply-To`.
///
/// Where a person reads the text (the mail, the ntfy notification) bidirectional controls are written as
/// `<U+202E>` (`BidiControls.escaped`), so a message cannot display as something else than it says; the webhook,
/// for programs, has the text as stored, which is as received.
enum ForwardPayload {
  /// The webhook's signature header (lower case, as sent).
  static let signatureHeader = "x-aprs-cloud-signature"

  /// The webhook body of `message` stored for `station`.
  static func webhookBody(station: String, message: StoredMessage) -> [UInt8] {
    var writer = JSONWriter(capacity: 160 + message.text.utf8.count)
    writer.beginObject()
    writer.key("type")
    writer.string("message")
    writer.key("station")
    writer.string(station)
    writer.key("to")
    writer.string(message.to ?? station)
    writer.key("from")
    writer.string(message.peer)
    writer.key("text")
    writer.string(message.text)
    writer.key("timestamp")
    writer.int(message.timestamp)
    writer.key("seqId")
    writer.stringOrNull(message.msgno)
    writer.endObject()
    return writer.bytes
  }

  /// `t=<seconds>,v1=<lower-case hex HMAC-SHA256 under secret of "<seconds>.<body>">`.
  static func signature(secret: String, seconds: Int64, body: [UInt8]) -> String {
    let signed = Array("\(seconds).".utf8) + body
    return "t=\(seconds),v1=" + hex(ECECrypto.hmacSHA256(key: Array(secret.utf8), signed))
  }

  /// The webhook's headers for `body` signed at `seconds` (epoch s).
  static func webhookHeaders(secret: String, seconds: Int64, body: [UInt8]) -> [String] {
    [
      "content-type: application/json",
      "\(signatureHeader): " + signature(secret: secret, seconds: seconds, body: body),
      "expect:",
    ]
  }

  /// ntfy's headers for `message` (https://docs.ntfy.sh/publish/: `Title`, `Tags`, `Priority`).
  static func ntfyHeaders(message: StoredMessage, priority: Int, token: String?) -> [String] {
    var headers = [
      "content-type: text/plain; charset=utf-8",
      "title: APRS from " + headerSafe(BidiControls.escaped(message.peer)),
      "tags: incoming_envelope",
      "priority: \(min(5, max(1, priority)))",
      "expect:",
    ]
    if let token { headers.append("authorization: Bearer " + headerSafe(token)) }
    return headers
  }

  /// ntfy's body: the text, and the addressee when it is another SSID of the station; bidirectional controls
  /// escaped.
  static func ntfyBody(station: String, message: StoredMessage) -> [UInt8] {
    var text = message.text
    if let to = message.to, to != station { text += "\n(to \(to))" }
    return Array(BidiControls.escaped(text).utf8)
  }

  /// The mail for `message`: headers and a plain-text body with sender, time, number and text, CRLF line ends.
  static func messageMail(from: String, to: String, station: String, message: StoredMessage) -> [UInt8] {
    var body = [
      "From: " + message.peer,
      "To: " + (message.to ?? station),
      "Time: " + UTCTime.readable(message.timestamp),
    ]
    if let msgno = message.msgno { body.append("Message number: " + msgno) }
    body += [
      "", message.text, "", "-- ",
      "Forwarded by aprs-cloud for \(station). This address takes no replies: answer on the air or in the app.",
    ]
    return mail(
      from: from, to: to, subject: "APRS from " + message.peer, date: message.timestamp,
      id: "\(station).\(message.timestamp)", lines: body)
  }

  /// The confirmation mail carrying `code`.
  static func confirmationMail(from: String, to: String, station: String, code: String, now: Int64) -> [UInt8]
  {
    mail(
      from: from, to: to, subject: "APRS forwarding: confirm for \(station)", date: now,
      id: "confirm.\(station).\(now)",
      lines: [
        "Someone asked the aprs-cloud server to forward the APRS messages of \(station) to this address.",
        "",
        "To confirm, enter this code where you set up forwarding:",
        "",
        "    " + code,
        "",
        "The code is good for 24 hours. If you did not ask for this, ignore this mail: nothing is forwarded",
        "to this address without the code.",
      ])
  }

  private static func mail(
    from: String, to: String, subject: String, date: Int64, id: String, lines: [String]
  )
    -> [UInt8]
  {
    let domain = from.split(separator: "@").last.map(String.init) ?? "aprs-cloud.invalid"
    let headers = [
      "From: " + from,
      "To: " + to,
      "Subject: " + headerSafe(BidiControls.escaped(subject)),
      "Date: " + UTCTime.mailDate(date),
      "Message-ID: <\(headerSafe(id)).\(date)@\(domain)>",
      "MIME-Version: 1.0",
      "Content-Type: text/plain; charset=utf-8",
      "Content-Transfer-Encoding: 8bit",
      "Auto-Submitted: auto-generated",
    ]
    let text = (headers + [""] + lines.map(bodySafe)).joined(separator: "\r\n") + "\r\n"
    return Array(text.utf8)
  }

  /// `text` without control characters (a header value never breaks its line).
  static func headerSafe(_ text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
  }

  /// A body line: control characters but tab dropped, bidirectional controls escaped.
  private static func bodySafe(_ text: String) -> String {
    let scalars = BidiControls.escaped(text).unicodeScalars
    return String(
      String.UnicodeScalarView(scalars.filter { ($0.value >= 0x20 && $0.value != 0x7F) || $0 == "\t" }))
  }

  static func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      out.append(digits[Int(byte >> 4)])
      out.append(digits[Int(byte & 0xF)])
    }
    return String(decoding: out, as: UTF8.self)
  }
}

/// Epoch milliseconds as UTC calendar text, from the logger's ISO 8601 timestamp (one civil-date conversion in
/// the project: `Logger.timestamp(epochMs:)`).
enum UTCTime {
  /// `2026-12-02 07:59:00 UTC`.
  static func readable(_ ms: Int64) -> String {
    let iso = Array(Logger.timestamp(epochMs: ms))  // 2026-12-02T07:59:00.000Z
    return String(iso[0..<10]) + " " + String(iso[11..<19]) + " UTC"
  }

  /// RFC 5322 §3.3: `Wed, 02 Dec 2026 07:59:00 +0000`.
  static func mailDate(_ ms: Int64) -> String {
    let iso = Array(Logger.timestamp(epochMs: ms))
    let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
    let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    let weekday = Int(((days % 7) + 11) % 7)  // 1970-01-01 was a Thursday (4)
    let names = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    let month = Int(String(iso[5..<7])) ?? 1
    return "\(names[weekday]), \(String(iso[8..<10])) \(months[month - 1]) \(String(iso[0..<4])) "
      + String(iso[11..<19]) + " +0000"
  }
}
