/// What makes two received messages the same message (docs/aprs-is.md "Retransmissions").
///
/// Senders retry numbered messages until ACKed, for about 30 minutes; the key is sender, addressee, msgno
/// (without the `}AA` reply-ack, which changes between retries) and text (msgno counters wrap, so the text
/// stays in). Unnumbered messages key on sender, addressee and text, for a shorter window.
public struct DedupKey: Hashable, Sendable {
  /// How long a numbered message's key is kept, in seconds.
  public static let numberedWindow = 3600
  /// How long an unnumbered message's key is kept, in seconds.
  public static let unnumberedWindow = 1800
  /// The byte between fields in ``digest``: a control byte that no call or message number contains.
  public static let separator: Character = "\u{1F}"

  /// The sender, trimmed and upper case (an SSID `-0` dropped).
  public let sender: String
  /// The addressee, trimmed and upper case (an SSID `-0` dropped).
  public let addressee: String
  /// The message number without `}AA`; nil when unnumbered.
  public let msgno: String?
  /// The text with trailing spaces (and CR, LF) trimmed.
  public let text: String

  /// A key from its parts, normalised as described on each property. A `}AA` left on `msgno` is cut off and
  /// an empty `msgno` counts as unnumbered.
  public init(
    sender: some StringProtocol, addressee: some StringProtocol, msgno: (some StringProtocol)?,
    text: some StringProtocol
  ) {
    self.sender = Self.normalisedCall(sender)
    self.addressee = Self.normalisedCall(addressee)
    if let msgno {
      let number = msgno.utf8.prefix { $0 != ASCII.closeBrace }
      self.msgno = number.isEmpty ? nil : String(decoding: number, as: UTF8.self)
    } else {
      self.msgno = nil
    }
    let bytes = Array(text.utf8)
    var end = bytes.count
    while end > 0
      && (bytes[end - 1] == ASCII.space || bytes[end - 1] == ASCII.cr || bytes[end - 1] == ASCII.lf)
    {
      end -= 1
    }
    self.text = String(decoding: bytes[0..<end], as: UTF8.self)
  }

  /// The key of a received message.
  public init(_ message: AddressedPacket) {
    self.init(sender: message.source, addressee: message.addressee, msgno: message.msgno, text: message.text)
  }

  /// True when the message carried a number.
  public var isNumbered: Bool { msgno != nil }

  /// How long to remember the key, in seconds: ``numberedWindow`` or ``unnumberedWindow``.
  public var window: Int { isNumbered ? Self.numberedWindow : Self.unnumberedWindow }

  /// A stable text form for a database key: `SENDER␟ADDRESSEE␟MSGNO␟TEXT` with U+001F between the fields
  /// (`MSGNO` empty when unnumbered). Unambiguous: only the text, which comes last, can contain U+001F.
  public var digest: String {
    let separator = String(Self.separator)
    return sender + separator + addressee + separator + (msgno ?? "") + separator + text
  }

  /// Trimmed of whitespace and upper-cased (ASCII letters only), `CALL-0` as `CALL`.
  private static func normalisedCall(_ text: some StringProtocol) -> String { StationAddress.canonical(text) }
}
