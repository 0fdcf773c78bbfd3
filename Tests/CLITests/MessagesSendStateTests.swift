import Foundation
import Store
import Testing

/// `aprs-cloud messages STATION` shows the messages a station sent through `/v1/send` with their state.
@Suite struct MessagesSendStateTests {
  @Test func sentMessagesShowTheirStateReceivedOnesNone() throws {
    let fixture = try OpsDatabase()
    try fixture.register("OH7LZB-9", at: fixture.now)
    try fixture.deliver("OH7LZB-9", from: "KJ7ABC-7", "hello", msgno: "5")
    for text in ["first", "second", "third"] {
      let creation = try fixture.database.createSend(
        NewSend(station: "OH7LZB-9", addressee: "KJ7ABC-7", text: text, clientId: nil), limits: SendLimits(),
        now: fixture.now)
      guard case .created = creation else { throw CocoaError(.featureUnsupported) }
    }
    _ = try fixture.database.answerSends(
      [SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: "1", kind: .ack)], now: fixture.now + 10)
    _ = try fixture.database.answerSends(
      [SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: "2", kind: .rej)], now: fixture.now + 20)

    let result = try runCLI(["messages", "oh7lzb-9", "--db", fixture.path])
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 4)
    #expect(lines[0].hasSuffix("Z  from KJ7ABC-7  {5}  hello"))
    #expect(lines[1].hasSuffix("Z  to KJ7ABC-7  {3}  [pending]  third"))
    #expect(lines[2].hasSuffix("Z  to KJ7ABC-7  {1}  [acked]  first"), "re-stamped: after the pending one")
    #expect(lines[3].hasSuffix("Z  to KJ7ABC-7  {2}  [rejected]  second"))
  }

  /// Bidirectional controls in a received text (U+202E turns `txt.exe` around) are shown as `<U+202E>`, never
  /// passed to the terminal; the stored message keeps them as received.
  @Test func bidirectionalControlsAreShownEscapedAndStoredAsReceived() throws {
    let fixture = try OpsDatabase()
    try fixture.register("OH7LZB-9", at: fixture.now)
    let controls: [Unicode.Scalar] = [
      "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}",
      "\u{2069}", "\u{200E}", "\u{200F}", "\u{061C}",
    ]
    let text = "pay \u{202E}exe.txt" + String(String.UnicodeScalarView(controls))
    try fixture.deliver("OH7LZB-9", from: "KJ7ABC-7", text, msgno: "5")
    let result = try runCLI(["messages", "OH7LZB-9", "--db", fixture.path])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(!result.stdout.unicodeScalars.contains { controls.contains($0) }, "\(result.stdout)")
    let escaped = controls.map { "<U+" + String($0.value, radix: 16, uppercase: true).leftPadded(4) + ">" }
    #expect(
      result.stdout.hasSuffix("  {5}  pay <U+202E>exe.txt" + escaped.joined() + "\n"), "\(result.stdout)")
    let stored = try fixture.database.recentMessages(station: "OH7LZB-9", limit: 1)
    #expect(stored.first?.text == text)
  }
}

extension String {
  fileprivate func leftPadded(_ width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}
