/// A message-format packet (`:ADDRESSEE:text{msgno`), taken from the innermost third-party packet.
///
/// Made by ``classify(_:)``; ``kind`` says whether it is a personal message or one of the kinds that must never
/// be stored or ACKed (acks, rejs, bulletins, announcements, weather, telemetry, queries).
public struct AddressedPacket: Hashable, Sendable {
  /// The sender: the source call of the innermost packet, as sent (e.g. `OH7AA-1`).
  public var source: String
  /// The addressee, trimmed of spaces and upper-cased (e.g. `OH7LZB`): compare this with registered stations.
  public var addressee: String
  /// The addressee exactly as the message named it, only trimmed of spaces: the source of an ACK.
  public var addresseeAsSent: String
  /// The text without the `{msgno` suffix and without trailing spaces, CR or LF; never empty. For an ack or
  /// rej, the whole text (`ack42`).
  public var text: String
  /// The message number (`[A-Za-z0-9]{1,5}`, the part between `{` and any `}`); nil when unnumbered. Always
  /// nil for acks and rejs (see ``ackedMsgno``).
  public var msgno: String?
  /// The reply-ack after `}`: nil without `}`, `""` for `{MM}` (reply-ack capable, nothing to acknowledge).
  /// For an ack or rej `ackMM}AA`, the `AA`.
  public var replyAck: String?
  /// What the packet is.
  public var kind: PacketKind
  /// For ``PacketKind/ack`` and ``PacketKind/rej``: the number acknowledged or rejected (`MM` of `ackMM}AA`).
  public var ackedMsgno: String?
  /// For an authenticated ack or rej (`ack556}eL8OYs`, HTCommander): the token after `}` (1–8 characters of
  /// `[A-Za-z0-9+/=]`); nil otherwise (a reply-ack `ackMM}AA` keeps its `AA` in ``replyAck``).
  public var ackToken: String?

  /// Makes a value from its parts, unvalidated (tests, fixtures).
  public init(
    source: String, addressee: String, addresseeAsSent: String? = nil, text: String, msgno: String? = nil,
    replyAck: String? = nil, kind: PacketKind, ackedMsgno: String? = nil, ackToken: String? = nil
  ) {
    self.source = source
    self.addressee = addressee
    self.addresseeAsSent = addresseeAsSent ?? addressee
    self.text = text
    self.msgno = msgno
    self.replyAck = replyAck
    self.kind = kind
    self.ackedMsgno = ackedMsgno
    self.ackToken = ackToken
  }

  /// Everything that followed `{`, as docs/protocol.md's `seqId` and the ACK echo want it: `42`, `AB}CD`, `AB}`.
  /// Nil when unnumbered.
  public var seqId: String? {
    guard let msgno else { return nil }
    guard let replyAck else { return msgno }
    return msgno + "}" + replyAck
  }

  /// The sender as a station: ``source`` upper-cased, an SSID `-0` dropped (``StationAddress/canonical(_:)``):
  /// `OH7AA-1`, and `N0CALL` for `n0call-0`. Compare it with ``addressee`` and registered stations; answer
  /// ``source`` itself.
  public var sender: String { StationAddress.canonical(source) }

  /// True when the sender is the addressee (same call and SSID, ignoring case, `CALL-0` being `CALL`): never
  /// ACK, never notify. The same base call with another SSID is a normal message.
  public var isToSelf: Bool { sender == StationAddress.canonical(addressee) }
}
