/// A message a registered station sends through the server (`/v1/send`): the rules its fields follow, and its
/// line on APRS-IS. Pure.
///
/// The line is `STATION>APRS,TCPIP*::ADDRESSEE:TEXT{MSGNO` + CR LF (docs/protocol.md "Sending messages"), the
/// addressee padded with spaces to 9 (APRS101 ch. 14). The listener writes it on its own verified login; aprsc
/// passes a verified client's packets for other source calls and appends `,qAS,<login>` (hessu/aprsc
/// `src/parse_qc.c`, `q_process`: a verified inbound client, a packet not originated by its login, no q
/// construct yet).
public enum OutgoingMessage {
  /// The destination of sent messages, as docs/protocol.md writes the line.
  public static let toCall = "APRS"
  /// The longest text, in characters (APRS101: 67).
  public static let maximumTextLength = 67
  /// Source calls APRS-IS never passes: aprsc's built-in `disallow_srccall` list, matched against the whole
  /// source call (so `N0CALL-7` is not on it). A station with one of these calls can receive but never send.
  public static let disallowedSources: Set<String> = ["N0CALL", "NOCALL", "SERVER"]
  /// Characters a message text must not hold (APRS101 ch. 14: `|` and `~` are reserved, `{` starts the
  /// message number).
  public static let forbiddenCharacters: Set<Unicode.Scalar> = ["{", "|", "~"]

  /// Whether APRS-IS drops every packet from `station` (an upper-case station address).
  public static func isDisallowedSource(_ station: String) -> Bool {
    disallowedSources.contains(station)
  }

  /// Why `text` cannot be sent, as a sentence (nil when it can): 1–67 printable characters (no control
  /// characters, C1 included, no line or paragraph separators or bidirectional overrides), none of `{`, `|`, `~`, not only spaces, and read back by receivers as a
  /// personal message with exactly this text: not an ack or rej (`ack12`), telemetry metadata (`PARM.`) or a
  /// query (`?APRSP`), none of which is ever acknowledged. Trailing spaces count: receivers drop them, so trim
  /// them first.
  public static func textProblem(_ text: String) -> String? {
    let scalars = text.unicodeScalars
    guard !scalars.isEmpty else { return "text is empty; it must be 1-\(maximumTextLength) characters" }
    guard scalars.count <= maximumTextLength else {
      return "text is \(scalars.count) characters long; at most \(maximumTextLength)"
    }
    for scalar in scalars {
      if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
        return "text must be printable: no control characters (U+\(hex(scalar.value)))"
      }
      // A line or paragraph separator breaks the receiver's line; a bidirectional embedding, override or
      // isolate makes the text read differently from what it holds (the "Trojan source" characters).
      if scalar.value == 0x2028 || scalar.value == 0x2029 || (0x202A...0x202E).contains(scalar.value)
        || (0x2066...0x2069).contains(scalar.value)
      {
        return "text must be printable: no line separators or direction overrides (U+\(hex(scalar.value)))"
      }
      if forbiddenCharacters.contains(scalar) {
        return "text must not contain '\(scalar)' ({, | and ~ are reserved in APRS messages)"
      }
    }
    guard scalars.contains(where: { $0 != " " }) else { return "text is only spaces" }
    let probe = line(from: "N0CALL", to: "N0CALL-1", text: text, msgno: "1")
    guard case .success(.packet(let packet)) = TNC2Packet.parse(probe),
      case .addressed(let read) = AddressedPacket.classify(packet)
    else { return "text is not read back as a message" }
    switch read.kind {
    case .message:
      guard read.text == text, read.msgno == "1", read.replyAck == nil else {
        return
          "text is not read back as itself (receivers drop trailing spaces and read a final {…} as a number)"
      }
      return nil
    case .ack, .rej:
      return "text would be read as an \(read.kind.rawValue), which is never acknowledged"
    case .telemetry:
      return "text would be read as telemetry metadata (PARM., UNIT., EQNS., BITS.), never acknowledged"
    case .query:
      return "text starting with '?' is a query: stations answer queries but never acknowledge them"
    default:
      return "text would not be read as a personal message"
    }
  }

  /// Calls that name no station on APRS-IS, refused as addressees with any SSID: aprsc's own server name
  /// (`SERVER`), the internet path's markers (`TCPIP`, `TCPXX`), placeholder calls (`NOCALL`, `N0CALL`), and the
  /// path aliases and flags of APRS101 and the q-construct rules (`RELAY`, `RFONLY`, `NOGATE`).
  public static let reservedAddressees: Set<String> = [
    "SERVER", "TCPIP", "TCPXX", "NOCALL", "N0CALL", "RELAY", "RFONLY", "NOGATE",
  ]
  /// Prefixes of calls that are path aliases or group addresses, refused as addressees: `WIDE` (`WIDE1-1`,
  /// `WIDE2-2`, …) and `TRACE` (`TRACE3-3`, …) are digipeater aliases, `BLN` bulletins, `NWS` weather services.
  public static let reservedAddresseePrefixes = ["WIDE", "TRACE", "BLN", "NWS"]

  /// Why `addressee` (an upper-case station address) cannot be sent to, as a sentence naming it, or nil.
  ///
  /// An addressee must look like a station that can answer: not `login` (the server's own APRS-IS login, which
  /// would be sent its own messages), not a ``reservedAddressees`` call with any SSID, not a q-construct
  /// (`qA` and one letter: `qAC`, `qAR`, …), not a call starting with a ``reservedAddresseePrefixes`` entry,
  /// not a gateway or generic destination call (``ServiceCalls``: `EMAIL-2`, `SMSGTE`, `APRS`, `CQ`, …);
  /// and not a bulletin, announcement or weather address, which are never acknowledged, so a message to them
  /// would only be repeated until it expires (a bulletin or announcement goes out as one instead:
  /// ``bulletinAddresseeProblem(_:)``, ``unnumberedLine(from:to:text:)``).
  public static func addresseeProblem(_ addressee: String, login: String? = nil) -> String? {
    let upper = addressee.uppercased()
    let base =
      upper.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
      ?? upper
    if let login, !login.isEmpty, login.uppercased() == upper {
      return "\(addressee) is this server's own APRS-IS login; it cannot be sent messages through itself"
    }
    if reservedAddressees.contains(base) {
      return "\(addressee) is a reserved APRS-IS name (\(base)), not a station"
    }
    if let problem = ServiceCalls.problem(addressee) { return problem }
    if base.utf8.count == 3, base.hasPrefix("QA"), let last = base.utf8.last, ASCII.isUpper(last) {
      return "\(addressee) is an APRS-IS q-construct (qA?), not a station"
    }
    if let prefix = reservedAddresseePrefixes.first(where: { base.hasPrefix($0) }) {
      switch prefix {
      case "BLN": return "\(addressee) is a bulletin address; bulletins are never acknowledged"
      case "NWS": return "\(addressee) is a weather address; such messages are never acknowledged"
      default: return "\(addressee) is a digipeater path alias (\(prefix)*), not a station"
      }
    }
    let probe = line(from: "N0CALL", to: addressee, text: "x", msgno: "1")
    guard case .success(.packet(let packet)) = TNC2Packet.parse(probe),
      case .addressed(let read) = AddressedPacket.classify(packet)
    else { return "\(addressee) is not an addressee" }
    switch read.kind {
    case .bulletin, .announcement:
      return "\(addressee) is a bulletin address; bulletins are never acknowledged"
    case .weather: return "\(addressee) is a weather address; such messages are never acknowledged"
    default: return nil
    }
  }

  /// Why `addressee` cannot be sent a bulletin or announcement, as a sentence naming it, or nil when it can: it
  /// must be `BLN`, one digit (a bulletin) or letter (an announcement), then at most 5 letters or digits of group
  /// (``BulletinSchedule/init(addressee:)``; APRS101 ch. 14: `BLN3WX`, `BLNQ`), any case.
  public static func bulletinAddresseeProblem(_ addressee: String) -> String? {
    guard BulletinSchedule(addressee: addressee) == nil else { return nil }
    return
      "\(addressee) is not a bulletin or announcement address: BLN0-BLN9 (a bulletin) or BLNA-BLNZ (an"
      + " announcement), then at most 5 letters or digits of group (BLN3WX, BLNQ)"
  }

  /// `STATION>APRS,TCPIP*::ADDRESSEE:TEXT{MSGNO` + CR LF, the addressee padded with spaces to 9. Calls and the
  /// message number lose spaces and control bytes, the text its control bytes and CR/LF, so nothing can start a
  /// second line. The text goes as its UTF-8 bytes.
  public static func line(from station: String, to addressee: String, text: String, msgno: String) -> [UInt8]
  {
    build(from: station, to: addressee, text: text, msgno: msgno)
  }

  /// `STATION>APRS,TCPIP*::ADDRESSEE:TEXT` + CR LF: the unnumbered form, for a bulletin or announcement
  /// (`BLN3WX`; docs/protocol.md "Bulletins and announcements"), which nobody acknowledges. The addressee is
  /// padded to 9 and every input cleaned as for ``line(from:to:text:msgno:)``.
  public static func unnumberedLine(from station: String, to addressee: String, text: String) -> [UInt8] {
    build(from: station, to: addressee, text: text, msgno: nil)
  }

  private static func build(from station: String, to addressee: String, text: String, msgno: String?)
    -> [UInt8]
  {
    var line: [UInt8] = []
    line.reserveCapacity(32 + text.utf8.count)
    appendCall(station, to: &line)
    line.append(ASCII.greaterThan)
    line += toCall.utf8
    line.append(ASCII.comma)
    line += OutgoingLine.internetPath.utf8
    line.append(ASCII.colon)
    line.append(ASCII.colon)
    let start = line.count
    appendCall(addressee, to: &line)
    while line.count - start < OutgoingLine.addresseeWidth { line.append(ASCII.space) }
    line.append(ASCII.colon)
    for byte in text.utf8 where byte >= ASCII.space && byte != 0x7F { line.append(byte) }
    if let msgno {
      line.append(ASCII.openBrace)
      appendCall(msgno, to: &line)
    }
    line.append(ASCII.cr)
    line.append(ASCII.lf)
    return line
  }

  private static func appendCall(_ text: String, to line: inout [UInt8]) {
    for byte in text.utf8 where byte > ASCII.space && byte != 0x7F { line.append(byte) }
  }

  private static func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
  }
}
