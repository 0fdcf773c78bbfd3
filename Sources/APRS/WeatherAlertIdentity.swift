/// A weather alert's identity as the weather servers send it: the sender (the office and product, `RIWWSW`) and
/// the first four characters after `{` (three of issue time, one that tells the office's products of that minute
/// apart). The fifth is the line: `A` the alert with its zones, `B`, `C`, … the lines that continue it
/// (`SKYRIW   :WINTER STORM WARNING CONTINUING TODAY {JBNBB`). Sources: APRS+SA's NWS tab ("Any packet with the
/// from Call and the first 4 digits of the sequence matching are associated packets"), Xastir `src/alert.c`
/// (a `SKY` line joins the alert of the same sender whose sequence's first four characters match), aprs-is.net/WX.
/// The sequence is compared as sent: its letters of both cases are different numbers.
public struct WeatherAlertIdentity: Hashable, Sendable {
  /// The sender as a station (``AddressedPacket/sender``).
  public var sender: String
  /// The first four characters of the `{` number.
  public var sequence: String

  public init(sender: String, sequence: String) {
    self.sender = sender
    self.sequence = sequence
  }

  /// The identity of a weather message (``PacketKind/weather``) numbered as the servers number theirs (five
  /// letters or digits after `{`); nil for any other message.
  public init?(_ message: AddressedPacket) {
    guard message.kind == .weather, let msgno = message.msgno, msgno.utf8.count == 5, message.replyAck == nil
    else { return nil }
    self.init(sender: message.sender, sequence: String(msgno.prefix(4)))
  }
}
