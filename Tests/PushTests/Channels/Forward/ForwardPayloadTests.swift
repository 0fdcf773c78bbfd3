import Store
import Testing

@testable import Push

/// What a forward target receives, pure: dates (checked against GNU date's output), the mail's lines, the ntfy
/// headers, and text that could break a header line.
@Suite struct ForwardPayloadTests {
  @Test(arguments: [
    (Int64(1_796_198_150_000), "Wed, 02 Dec 2026 07:55:50 +0000", "2026-12-02 07:55:50 UTC"),
    (Int64(951_782_400_000), "Tue, 29 Feb 2000 00:00:00 +0000", "2000-02-29 00:00:00 UTC"),
    (Int64(-86_400_000), "Wed, 31 Dec 1969 00:00:00 +0000", "1969-12-31 00:00:00 UTC"),
  ])
  func datesAreRFC5322AndReadable(ms: Int64, mail: String, readable: String) {
    #expect(UTCTime.mailDate(ms) == mail)
    #expect(UTCTime.readable(ms) == readable)
  }

  static let message = StoredMessage(
    direction: .received, peer: "KJ7ABC-7", text: "Hi\r\nBcc: x@example.org", msgno: "12",
    timestamp: 1_796_198_150_000, to: "N0CALL-9")

  @Test func theMailHasItsHeadersAndNoReplyTo() {
    let mail = String(
      decoding: ForwardPayload.messageMail(
        from: "aprs@example.org", to: "me@example.org", station: "N0CALL-7", message: Self.message),
      as: UTF8.self)
    let (head, body) = (
      mail.components(separatedBy: "\r\n\r\n")[0], mail.components(separatedBy: "\r\n\r\n")[1]
    )
    #expect(head.contains("From: aprs@example.org\r\nTo: me@example.org\r\nSubject: APRS from KJ7ABC-7\r\n"))
    #expect(head.contains("Date: Wed, 02 Dec 2026 07:55:50 +0000") && head.contains("Message-ID: <"))
    #expect(!head.lowercased().contains("reply-to") && !head.contains("Bcc"))
    #expect(
      body.hasPrefix("From: KJ7ABC-7\r\nTo: N0CALL-9\r\nTime: 2026-12-02 07:55:50 UTC\r\nMessage number: 12"))
    // Text that tries to start a header stays on its own body line.
    #expect(mail.contains("\r\nHiBcc: x@example.org\r\n"))
  }

  @Test func ntfyHeadersAreAsDocumented() {
    let headers = ForwardPayload.ntfyHeaders(message: Self.message, priority: 9, token: "tk\r\nX: y")
    #expect(headers.contains("title: APRS from KJ7ABC-7") && headers.contains("tags: incoming_envelope"))
    #expect(headers.contains("priority: 5") && headers.contains("authorization: Bearer tkX: y"))
    #expect(
      String(decoding: ForwardPayload.ntfyBody(station: "N0CALL-7", message: Self.message), as: UTF8.self)
        == "Hi\r\nBcc: x@example.org\n(to N0CALL-9)")
  }

  /// Bidirectional controls (U+202E makes `txt.exe` read `exe.txt`) reach a person as a visible `<U+202E>` in
  /// the mail and the ntfy notification; the webhook, for programs, has the text as received.
  @Test func bidirectionalControlsAreEscapedWhereAPersonReadsTheText() {
    let controls: [Unicode.Scalar] = [
      "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}",
      "\u{2069}", "\u{200E}", "\u{200F}", "\u{061C}",
    ]
    let text = "see \u{202E}fdp.exe" + String(String.UnicodeScalarView(controls))
    let message = StoredMessage(
      direction: .received, peer: "KJ7ABC-7", text: text, msgno: "12", timestamp: 1_796_198_150_000)
    let mail = String(
      decoding: ForwardPayload.messageMail(
        from: "aprs@example.org", to: "me@example.org", station: "N0CALL-7", message: message),
      as: UTF8.self)
    let ntfy = String(decoding: ForwardPayload.ntfyBody(station: "N0CALL-7", message: message), as: UTF8.self)
    let expected =
      "see <U+202E>fdp.exe<U+202A><U+202B><U+202C><U+202D><U+202E><U+2066><U+2067><U+2068><U+2069><U+200E>"
      + "<U+200F><U+061C>"
    for (name, delivered) in [("mail", mail), ("ntfy", ntfy)] {
      #expect(!delivered.unicodeScalars.contains { controls.contains($0) }, "\(name)")
      #expect(delivered.contains(expected), "\(name): \(delivered)")
    }
    let webhook = String(
      decoding: ForwardPayload.webhookBody(station: "N0CALL-7", message: message), as: UTF8.self)
    #expect(webhook.contains(text))
  }

  @Test func theSignatureCoversTheTimestampAndTheBody() {
    let body = ForwardPayload.webhookBody(station: "N0CALL-7", message: Self.message)
    let one = ForwardPayload.signature(secret: "secret-0123456789", seconds: 1_796_198_150, body: body)
    #expect(one.hasPrefix("t=1796198150,v1=") && one.count == "t=1796198150,v1=".count + 64)
    #expect(one != ForwardPayload.signature(secret: "secret-0123456789", seconds: 1_796_198_151, body: body))
    #expect(one != ForwardPayload.signature(secret: "secret-0123456780", seconds: 1_796_198_150, body: body))
    // RFC 4231 test case 2 through the same HMAC: key "Jefe".
    #expect(
      ForwardPayload.hex(
        ECECrypto.hmacSHA256(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8)))
        == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
  }
}
