/// One line of APRS-IS, summarised in a single call: what `aprs-cloud parse` prints.
public struct LineSummary: Hashable, Sendable {
  /// `message`, `ack`, `rej`, `bulletin`, `announcement`, `weather`, `telemetry`, `query`, `other` (the
  /// ``PacketKind`` raw values), `comment` or `invalid`.
  public var kind: String
  /// The sender (innermost for third-party packets); nil for comments and invalid lines.
  public var source: String?
  /// The addressee, upper case and trimmed; only for message-format packets.
  public var addressee: String?
  /// The message text (without `{msgno`); for a comment, the whole comment line.
  public var text: String?
  /// The message number; for an ack or rej, the number acknowledged or rejected.
  public var msgno: String?
  /// The reply-ack after `}` (`""` for `{MM}`), when there is one.
  public var replyAck: String?
  /// Why the line is invalid; only for kind `invalid`.
  public var error: String?

  /// The `kind` of a `#` line.
  public static let commentKind = "comment"
  /// The `kind` of a line that is neither a comment nor a TNC2 packet.
  public static let invalidKind = "invalid"

  /// Makes a summary from its parts.
  public init(
    kind: String, source: String? = nil, addressee: String? = nil, text: String? = nil, msgno: String? = nil,
    replyAck: String? = nil, error: String? = nil
  ) {
    self.kind = kind
    self.source = source
    self.addressee = addressee
    self.text = text
    self.msgno = msgno
    self.replyAck = replyAck
    self.error = error
  }

  /// Parses and classifies one line (with or without its line ending).
  public init(line: some Collection<UInt8>) {
    switch TNC2Line.parse(line) {
    case .failure(let error):
      self.init(kind: Self.invalidKind, error: error.description)
    case .success(.comment(let bytes)):
      self.init(kind: Self.commentKind, text: String(decoding: bytes, as: UTF8.self))
    case .success(.packet(let packet)):
      switch AddressedPacket.classify(packet) {
      case .other:
        self.init(kind: PacketKind.other.rawValue, source: packet.source)
      case .addressed(let message):
        self.init(
          kind: message.kind.rawValue, source: message.source, addressee: message.addressee,
          text: message.text, msgno: message.ackedMsgno ?? message.msgno, replyAck: message.replyAck)
      }
    }
  }

  /// Same as ``init(line:)``.
  public static func summarize(_ line: some Collection<UInt8>) -> LineSummary {
    LineSummary(line: line)
  }
}
