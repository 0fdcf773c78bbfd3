/// The result of classifying a packet: a message-format packet, or anything else.
public enum Classified: Hashable, Sendable {
  /// A `:ADDRESSEE:text` packet with a non-empty text (possibly unwrapped from third-party headers).
  case addressed(AddressedPacket)
  /// Not a message-format packet (or an empty or malformed one): positions, status, objects, … .
  case other

  /// The packet's kind; ``PacketKind/other`` for ``other``.
  public var kind: PacketKind {
    switch self {
    case .addressed(let packet): packet.kind
    case .other: .other
    }
  }

  /// The addressed packet, if any.
  public var addressed: AddressedPacket? {
    if case .addressed(let packet) = self { return packet }
    return nil
  }
}
