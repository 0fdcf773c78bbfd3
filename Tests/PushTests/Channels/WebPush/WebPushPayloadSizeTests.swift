import Push
import Store
import Testing

/// The sizes docs/api.md states for a Web Push body's plaintext (before `aes128gcm`): one record holds at most
/// 3993 bytes (RFC 8291 §4: 4096 − 86 header − 16 tag − 1 delimiter), and the builder never goes past it.
@Suite struct WebPushPayloadSizeTests {
  static let icon = String(repeating: "a", count: 32)
  static let image = String(repeating: "A", count: PushPayload.maxImageCharacters)
  static let withImage = PushAvatar.stored(
    Avatar(icon: icon, image: image, hash: String(repeating: "f", count: 64)))
  /// The longest message text one APRS-IS line (510 bytes) carries with 9-character calls and a 5-character
  /// message number.
  static let longestText = String(
    repeating: "x",
    count: 510 - "OH7LZB-15>APRS,TCPIP*,qAC,T2TEST::KJ7ABC-15:".utf8.count - "{ABCDE".utf8.count)

  func size(_ text: String, _ avatar: PushAvatar) throws -> Int {
    let content = PushContent(
      station: "KJ7ABC-15", fromCall: "OH7LZB-15", seqId: "ABCDE", text: text, count: 1, avatar: avatar)
    return try WebPushPayload.body(content, preview: true, encrypted: true).get().bytes.count
  }

  @Test func theBodiesTheGuideStates() throws {
    #expect(WebPushPayload.maxBytes(encrypted: true) == 3993)
    let aprs101 = String(repeating: "x", count: 67)
    // One 67-character message (APRS101's limit) from a station with a built-in icon.
    #expect(try size(aprs101, .stored(Avatar(icon: Self.icon, image: nil, hash: "icon:" + Self.icon))) == 275)
    // The same with the largest avatar image a push carries (3000 characters).
    #expect(try size(aprs101, Self.withImage) == 3323)
    // The longest text an APRS-IS line holds, with that image.
    #expect(Self.longestText.count == 460)
    #expect(try size(Self.longestText, Self.withImage) == 3716)
    // Escaped control characters make any more fit by dropping the image, then shortening the text.
    for controls in [0, 50, 55, 56, 100, 460] {
      let text = String(repeating: "\u{1}", count: controls) + Self.longestText.dropFirst(controls)
      #expect(try size(text, Self.withImage) <= 3993, "\(controls)")
    }
  }
}
