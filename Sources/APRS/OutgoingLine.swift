/// Lines the listener sends to APRS-IS, as bytes ending in CR LF.
///
/// Every builder drops CR, LF and other control bytes from its inputs, so no argument can smuggle a second
/// line (say, a `#filter`) onto the connection; spaces are dropped from calls and message numbers.
public enum OutgoingLine {
  /// The default destination ("tocall") of packets this software originates. `APZ…` is the experimental
  /// range of the APRS tocall registry; `APZACL` stands for "APRS cloud".
  public static let defaultToCall = "APZACL"
  /// The path of packets originated on APRS-IS: `TCPIP*` (never digipeated on RF).
  public static let internetPath = "TCPIP*"
  /// The width of the addressee field of a message.
  public static let addresseeWidth = 9

  /// The ACK of `message`, or nil when it must not be ACKed: not a ``PacketKind/message``, unnumbered, or
  /// sent by the addressee to itself.
  ///
  /// Source is ``AddressedPacket/addresseeAsSent`` (the addressee exactly as the message named it), the text
  /// echoes everything after `{` (``AddressedPacket/seqId``: `ackMM}AA` for a reply-ack message).
  public static func ack(for message: AddressedPacket, toCall: String = defaultToCall) -> [UInt8]? {
    guard message.kind == .message, let seqId = message.seqId, !message.isToSelf else { return nil }
    return ack(from: message.addresseeAsSent, to: message.source, echo: seqId, toCall: toCall)
  }

  /// The REJ of `message`, under the same conditions as ``ack(for:toCall:)``.
  public static func rej(for message: AddressedPacket, toCall: String = defaultToCall) -> [UInt8]? {
    guard message.kind == .message, let seqId = message.seqId, !message.isToSelf else { return nil }
    return rej(from: message.addresseeAsSent, to: message.source, echo: seqId, toCall: toCall)
  }

  /// `FROM>TOCALL,TCPIP*::TO       :ackECHO` + CR LF, with `TO` padded to 9.
  public static func ack(
    from addressee: some StringProtocol, to sender: some StringProtocol, echo: some StringProtocol,
    toCall: String = defaultToCall
  ) -> [UInt8] {
    response("ack", from: addressee, to: sender, echo: echo, toCall: toCall)
  }

  /// `FROM>TOCALL,TCPIP*::TO       :rejECHO` + CR LF, with `TO` padded to 9.
  public static func rej(
    from addressee: some StringProtocol, to sender: some StringProtocol, echo: some StringProtocol,
    toCall: String = defaultToCall
  ) -> [UInt8] {
    response("rej", from: addressee, to: sender, echo: echo, toCall: toCall)
  }

  /// `user LOGIN pass PASSCODE vers NAME VERSION[ filter SPEC]` + CR LF.
  ///
  /// `passcode` -1 logs in unverified (receive only). `softwareName` and `softwareVersion` must each be one
  /// word (aprsc refuses a name without a version): spaces in them become `-`. An empty or nil `filter`
  /// leaves the `filter` part out.
  public static func login(
    user: some StringProtocol, passcode: Int, softwareName: some StringProtocol,
    softwareVersion: some StringProtocol, filter: String? = nil
  ) -> [UInt8] {
    var line: [UInt8] = []
    line.reserveCapacity(64 + (filter?.utf8.count ?? 0))
    append("user ", to: &line)
    appendCall(user, to: &line)
    append(" pass ", to: &line)
    append(String(passcode), to: &line)
    append(" vers ", to: &line)
    appendWord(softwareName, to: &line)
    line.append(ASCII.space)
    appendWord(softwareVersion, to: &line)
    if let filter, !filter.isEmpty {
      append(" filter ", to: &line)
      append(filter, to: &line)
    }
    line.append(ASCII.cr)
    line.append(ASCII.lf)
    return line
  }

  /// `#filter SPEC` + CR LF: replaces the connection's whole filter. APRS-IS drops it silently when longer
  /// than ``FilterPlanner/maximumLineLength`` bytes; ``FilterPlanner`` plans a spec that fits.
  public static func filter(_ spec: some StringProtocol) -> [UInt8] {
    var line: [UInt8] = []
    line.reserveCapacity(10 + spec.utf8.count)
    append("#filter ", to: &line)
    append(spec, to: &line)
    line.append(ASCII.cr)
    line.append(ASCII.lf)
    return line
  }

  private static func response(
    _ word: String, from addressee: some StringProtocol, to sender: some StringProtocol,
    echo: some StringProtocol, toCall: String
  ) -> [UInt8] {
    var line: [UInt8] = []
    line.reserveCapacity(48)
    appendCall(addressee, to: &line)
    line.append(ASCII.greaterThan)
    appendCall(toCall, to: &line)
    line.append(ASCII.comma)
    append(internetPath, to: &line)
    line.append(ASCII.colon)
    line.append(ASCII.colon)
    let start = line.count
    appendCall(sender, to: &line)
    while line.count - start < addresseeWidth { line.append(ASCII.space) }
    line.append(ASCII.colon)
    append(word, to: &line)
    appendCall(echo, to: &line)
    line.append(ASCII.cr)
    line.append(ASCII.lf)
    return line
  }

  /// Appends the bytes of `text` except control bytes (below space, and DEL).
  private static func append(_ text: some StringProtocol, to line: inout [UInt8]) {
    for byte in text.utf8 where byte >= ASCII.space && byte != 0x7F { line.append(byte) }
  }

  /// Like ``append(_:to:)`` but without spaces: for calls and message numbers.
  private static func appendCall(_ text: some StringProtocol, to line: inout [UInt8]) {
    for byte in text.utf8 where byte > ASCII.space && byte != 0x7F { line.append(byte) }
  }

  /// Like ``append(_:to:)`` but spaces become `-`, so the result stays one word.
  private static func appendWord(_ text: some StringProtocol, to line: inout [UInt8]) {
    for byte in text.utf8 where byte >= ASCII.space && byte != 0x7F {
      line.append(byte == ASCII.space ? ASCII.hyphen : byte)
    }
  }
}
