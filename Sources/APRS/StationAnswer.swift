/// A station's own answer to a message it was sent, recognised in a line the station itself transmitted (heard on
/// APRS-IS through an igate): `CALL-SSID>…::SENDER   :ack12`, `:rej12`, or a message of its own that carries the
/// APRS 1.1 reply-ack `{MM}AA` (its `AA` acknowledges the sender's message `AA`).
///
/// Made from the classification every line already gets (``AddressedPacket/classify(_:)``: third-party wrappers
/// unwrapped, the addressee trimmed of the 9-character field's spaces and upper-cased, the number rules of
/// ``MessageNumber`` and ``AckToken``); nothing is parsed twice. What answers which number:
/// - `ackMM`, `rejMM`: the number `MM`. HTCommander's authenticated `ackMM}TOKEN`: `MM`.
/// - `ackMM}AA` (the ACK of a reply-ack capable message `{MM}AA`): `MM` only. Its `AA` merely echoes what the
///   acknowledged message carried (the sender's own acknowledgement of one of the station's messages), so it is
///   no answer of the station's.
/// - A message `text{MM}AA` from the station: `AA` (a reply-ack: the reply-ack mechanism of APRS 1.1, "the format
///   for the line number for outgoing message numbers is {MM}AA where MM is the outgoing message number and AA is
///   the free ACK if needed", WB4APR's replyacks.txt of Dec 1999). `text{MM}` and `text{MM}` with nothing after
///   `}` answer nothing.
/// - Anything else (positions, bulletins, queries, telemetry, a message to itself, unnumbered messages) answers
///   nothing: nil.
///
/// The numbers are compared exactly (APRS101 ch. 14: the ACK carries the message number as it was sent, 1–5
/// alphanumerics, case included).
public struct StationAnswer: Hashable, Sendable {
  /// How the station answered.
  public enum Kind: String, Hashable, Sendable {
    /// `ackMM`.
    case ack
    /// `rejMM`: the station refused the message. It is still the station's answer.
    case rej
    /// A message of its own carrying `}AA`.
    case replyAck
  }

  /// The station that answered: the packet's (innermost) source, upper case, `CALL-0` as `CALL`
  /// (``StationAddress/canonical(_:)``), SSID exact.
  public var station: String
  /// Whom it answered: the addressee, trimmed of spaces, upper case, `CALL-0` as `CALL`, SSID exact.
  public var peer: String
  /// The message number answered, exactly as written.
  public var msgno: String
  /// How.
  public var kind: Kind

  /// True for a `rej`.
  public var rejected: Bool { kind == .rej }

  /// Makes a value from its parts (tests).
  public init(station: String, peer: String, msgno: String, kind: Kind) {
    self.station = station
    self.peer = peer
    self.msgno = msgno
    self.kind = kind
  }

  /// The answer an already classified packet carries, nil when it carries none (see the type's rules).
  public init?(_ packet: AddressedPacket) {
    guard !packet.isToSelf else { return nil }
    switch packet.kind {
    case .ack, .rej:
      guard let acked = packet.ackedMsgno else { return nil }
      self.init(
        station: packet.sender, peer: packet.addressee, msgno: acked, kind: packet.kind == .rej ? .rej : .ack)
    case .message:
      guard packet.msgno != nil, let acked = packet.replyAck, !acked.isEmpty else { return nil }
      self.init(station: packet.sender, peer: packet.addressee, msgno: acked, kind: .replyAck)
    default:
      return nil
    }
  }

  /// The answer a packet carries (classified with ``AddressedPacket/classify(_:)``), nil when it carries none.
  public init?(_ packet: TNC2Packet) {
    guard let addressed = AddressedPacket.classify(packet).addressed else { return nil }
    self.init(addressed)
  }

  /// Whether this answer is `station`'s (any case, `CALL-0` as `CALL`, SSID exact).
  public func isFrom(_ station: some StringProtocol) -> Bool {
    self.station == StationAddress.canonical(station)
  }
}
