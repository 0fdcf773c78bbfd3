extension AddressedPacket {
  /// How many nested third-party `}` wrappers are unwrapped; a deeper packet is ``Classified/other``.
  /// Real traffic has one, rarely two.
  public static let maximumThirdPartyDepth = 8

  /// Classifies a packet, following docs/aprs-is.md "Message packets".
  ///
  /// - Third-party: an information field starting with `}` holds a whole TNC2 packet; it is unwrapped (nested
  ///   wrappers too, up to ``maximumThirdPartyDepth``) and sender, addressee, text and msgno come from the
  ///   innermost one. An inner packet that does not parse is ``Classified/other``.
  /// - Addressee: `:` + addressee + `:`. The addressee is normally padded with spaces to exactly 9, but an
  ///   **unpadded** one (`:N0CALL:hi{1`, the `:` anywhere within the first 10 bytes) is accepted too, as is a
  ///   **lower-case** one: aprsc's `g/` filter passes both, and the sender expects them delivered. The
  ///   addressee is trimmed of spaces and upper-cased in ``addressee`` (match registered stations on it; an
  ///   SSID `-0` is dropped, as `N0CALL-0` is the station `N0CALL`) and kept as sent in ``addresseeAsSent``
  ///   (the ACK's source). It must be 1–9 printable ASCII bytes without
  ///   inner spaces, else ``Classified/other``.
  /// - `ack`/`rej` (lower case, as APRS101 writes them) followed by a valid message number (same rule as
  ///   below) is an ack or rej, even with a `{msgno` of its own (`ack12{34`: ``ackedMsgno`` 12, ``text``
  ///   the whole text). So is HTCommander's authenticated ACK `ack<msgno>}<TOKEN>`: the number, `}` and 1–8
  ///   characters of `[A-Za-z0-9+/=]` (`ack556}eL8OYs`: ``ackedMsgno`` 556, ``ackToken`` `eL8OYs`); what
  ///   also fits the reply-ack form (`ack12}34`) stays a reply-ack (``replyAck`` 34). Any other text starting
  ///   with them (`acknowledged`, `ack12}toolongtoken`) is an ordinary text.
  /// - Addressee `BLN` + digit (or nothing else recognisable) is a bulletin, including group bulletins like
  ///   `BLN3WX`; `BLN` + letter (`BLNA`…) is an announcement (APRS101 ch. 14, as aprslib does).
  /// - Addressees starting `NWS-`, `NWS_`, `SKY`, `CWA` or `BOM` are weather.
  /// - Texts starting `PARM.`, `UNIT.`, `EQNS.` or `BITS.` are telemetry metadata; texts starting `?` queries.
  /// - Message number: split on the **last** `{`; the suffix (trailing spaces, CR and LF ignored) must be
  ///   `[A-Za-z0-9]{1,5}` optionally followed by `}[A-Za-z0-9]{0,5}`, otherwise the whole thing is text.
  /// - Text: trailing spaces, CR and LF are dropped. A message-format packet whose text is then **empty**
  ///   (`:N0CALL   :` or `:N0CALL   :{12`) is ``Classified/other``: nothing to store, show or ACK.
  public static func classify(_ packet: TNC2Packet) -> Classified {
    packet.information.withUnsafeBufferPointer { classify(information: $0, source: packet.source) }
  }

  /// ``classify(_:)`` on an information field's bytes; `source` is the outer packet's source.
  static func classify(information buffer: UnsafeBufferPointer<UInt8>, source: String) -> Classified {
    let upper = buffer.count
    var lower = 0
    var innerSource: Range<Int>?
    var depth = 0
    while lower < upper && buffer[lower] == ASCII.closeBrace {
      depth += 1
      guard depth <= maximumThirdPartyDepth,
        case .success(let scan) = TNC2Packet.scanPacket(buffer, lower + 1, upper)
      else { return .other }
      innerSource = scan.source
      lower = scan.information.lowerBound
    }
    guard lower < upper && buffer[lower] == ASCII.colon else { return .other }

    // Addressee: up to 9 bytes, then ':' (padded or not).
    let fieldStart = lower + 1
    let limit = min(upper, fieldStart + StationAddress.maximumAddressLength + 1)
    var colon = fieldStart
    while colon < limit && buffer[colon] != ASCII.colon { colon += 1 }
    guard colon < limit else { return .other }
    var addresseeStart = fieldStart
    var addresseeEnd = colon
    while addresseeStart < addresseeEnd && buffer[addresseeStart] == ASCII.space { addresseeStart += 1 }
    while addresseeEnd > addresseeStart && buffer[addresseeEnd - 1] == ASCII.space { addresseeEnd -= 1 }
    guard addresseeStart < addresseeEnd else { return .other }
    for index in addresseeStart..<addresseeEnd where !ASCII.isGraphic(buffer[index]) { return .other }
    let addressee = addresseeStart..<addresseeEnd
    // `CALL-0` is the bare call: the station `CALL` (``addressee``); the ACK still goes out as it was named.
    let station =
      StationAddress.dropsZeroSSID(buffer, addressee) ? addresseeStart..<(addresseeEnd - 2) : addressee

    let textStart = colon + 1
    let kind: PacketKind
    var textEnd = trimmedEnd(buffer, textStart, upper)
    var msgno: Range<Int>?
    var replyAck: Range<Int>?
    var ackedMsgno: Range<Int>?

    var ackToken: Range<Int>?

    if let ack = ackKind(buffer, textStart, textEnd),
      let number = ackNumber(buffer, textStart + 3, textEnd)
    {
      kind = ack
      ackedMsgno = number.msgno
      replyAck = number.replyAck
      ackToken = number.token
    } else {
      var bodyEnd = textEnd
      if let brace = lastIndex(of: ASCII.openBrace, in: buffer, textStart, textEnd),
        let number = MessageNumber.match(buffer, brace + 1, textEnd)
      {
        msgno = number.msgno
        replyAck = number.replyAck
        bodyEnd = trimmedEnd(buffer, textStart, brace)
      }
      guard textStart < bodyEnd else { return .other }
      if let ack = ackKind(buffer, textStart, bodyEnd),
        let number = ackNumber(buffer, textStart + 3, bodyEnd)
      {
        // `ack12{34`: an ack that carries a number of its own; still an ack, never a message.
        kind = ack
        ackedMsgno = number.msgno
        replyAck = number.replyAck
        ackToken = number.token
        msgno = nil
      } else {
        kind =
          addresseeKind(buffer, addressee)
          ?? (isTelemetry(buffer, textStart, bodyEnd)
            ? .telemetry : (buffer[textStart] == ASCII.questionMark ? .query : .message))
        textEnd = bodyEnd
      }
    }

    return .addressed(
      AddressedPacket(
        source: innerSource.map { string(buffer, $0) } ?? source,
        addressee: upperString(buffer, station),
        addresseeAsSent: string(buffer, addressee),
        text: string(buffer, textStart..<textEnd),
        msgno: msgno.map { string(buffer, $0) },
        replyAck: replyAck.map { string(buffer, $0) },
        kind: kind,
        ackedMsgno: ackedMsgno.map { string(buffer, $0) },
        ackToken: ackToken.map { string(buffer, $0) }))
  }

  /// The number an `ack`/`rej` text answers (`buffer[lower..<upper]` is what follows the 3 letters): the
  /// reply-ack form `MM`, `MM}AA` or `MM}` first (``MessageNumber``), then HTCommander's authenticated form
  /// `MM}TOKEN` (``AckToken``); nil when neither matches (the text is then an ordinary message).
  private static func ackNumber(_ buffer: UnsafeBufferPointer<UInt8>, _ lower: Int, _ upper: Int)
    -> (msgno: Range<Int>, replyAck: Range<Int>?, token: Range<Int>?)?
  {
    if let number = MessageNumber.match(buffer, lower, upper) { return (number.msgno, number.replyAck, nil) }
    if let number = AckToken.match(buffer, lower, upper) { return (number.msgno, nil, number.token) }
    return nil
  }

  /// `.ack` or `.rej` when the text starts with `ack` or `rej`.
  private static func ackKind(_ buffer: UnsafeBufferPointer<UInt8>, _ lower: Int, _ upper: Int) -> PacketKind?
  {
    guard upper - lower >= 4 else { return nil }
    switch (buffer[lower], buffer[lower + 1], buffer[lower + 2]) {
    case (0x61, 0x63, 0x6B): return .ack  // "ack"
    case (0x72, 0x65, 0x6A): return .rej  // "rej"
    default: return nil
    }
  }

  /// Bulletin, announcement or weather by addressee prefix (case-insensitive); nil for anything else.
  private static func addresseeKind(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> PacketKind?
  {
    let count = range.count
    guard count >= 3 else { return nil }
    let start = range.lowerBound
    let first = ASCII.upper(buffer[start])
    let second = ASCII.upper(buffer[start + 1])
    let third = ASCII.upper(buffer[start + 2])
    switch (first, second, third) {
    case (0x42, 0x4C, 0x4E):  // "BLN"
      guard count >= 4 else { return .bulletin }
      return ASCII.isLetter(buffer[start + 3]) ? .announcement : .bulletin
    case (0x4E, 0x57, 0x53):  // "NWS" + "-" or "_"
      guard count >= 4 else { return nil }
      let fourth = buffer[start + 3]
      return fourth == ASCII.hyphen || fourth == ASCII.underscore ? .weather : nil
    case (0x53, 0x4B, 0x59), (0x43, 0x57, 0x41), (0x42, 0x4F, 0x4D):  // "SKY", "CWA", "BOM"
      return .weather
    default:
      return nil
    }
  }

  /// Text starting `PARM.`, `UNIT.`, `EQNS.` or `BITS.` (upper case, as APRS101 writes them).
  private static func isTelemetry(_ buffer: UnsafeBufferPointer<UInt8>, _ lower: Int, _ upper: Int) -> Bool {
    guard upper - lower >= 5 && buffer[lower + 4] == ASCII.period else { return false }
    switch (buffer[lower], buffer[lower + 1], buffer[lower + 2], buffer[lower + 3]) {
    case (0x50, 0x41, 0x52, 0x4D),  // PARM
      (0x55, 0x4E, 0x49, 0x54),  // UNIT
      (0x45, 0x51, 0x4E, 0x53),  // EQNS
      (0x42, 0x49, 0x54, 0x53):  // BITS
      return true
    default:
      return false
    }
  }

  /// `upper` moved back over trailing spaces, CR and LF, not below `lower`.
  private static func trimmedEnd(_ buffer: UnsafeBufferPointer<UInt8>, _ lower: Int, _ upper: Int) -> Int {
    var end = upper
    while end > lower {
      let byte = buffer[end - 1]
      guard byte == ASCII.space || byte == ASCII.cr || byte == ASCII.lf else { break }
      end -= 1
    }
    return end
  }

  private static func lastIndex(
    of byte: UInt8, in buffer: UnsafeBufferPointer<UInt8>, _ lower: Int, _ upper: Int
  ) -> Int? {
    var index = upper
    while index > lower {
      index -= 1
      if buffer[index] == byte { return index }
    }
    return nil
  }

  private static func string(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
    String(decoding: UnsafeBufferPointer(rebasing: buffer[range]), as: UTF8.self)
  }

  /// The bytes upper-cased (ASCII letters only) into a string, without an intermediate array.
  private static func upperString(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
    String(unsafeUninitializedCapacity: range.count) { output in
      for (offset, index) in range.enumerated() { output[offset] = ASCII.upper(buffer[index]) }
      return range.count
    }
  }
}
