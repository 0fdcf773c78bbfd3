/// Where a packet reports an emergency: the Mic-E code, or the part of the packet that holds `EMERGENCY`.
public enum EmergencyPlace: Hashable, Sendable {
  /// The Mic-E message code 000, "Emergency" (APRS101 ch. 10).
  case micE
  /// A position report's comment (plain, compressed or Mic-E).
  case positionComment
  /// A status report (`>`).
  case status
  /// An object's text (`;`), with the object's name.
  case object(String)
  /// An item's text (`)`), with the item's name.
  case item(String)
  /// A message's text (`:`).
  case message
  /// Any other packet (telemetry, weather, …).
  case packet

  /// The place as a person reads it: `Mic-E`, `position comment`, `status`, `object FIRE1`, `item TENT`,
  /// `message`, `packet`.
  public var description: String {
    switch self {
    case .micE: "Mic-E"
    case .positionComment: "position comment"
    case .status: "status"
    case .object(let name): "object " + name
    case .item(let name): "item " + name
    case .message: "message"
    case .packet: "packet"
    }
  }
}

extension StationReport {
  /// The word that raises an alarm wherever it is in a packet, in capitals only: Xastir checks the entire line
  /// for it (`src/db.c`, `strstr(…, "EMERGENCY")`), YAAC recognises it too, and their authors ask for mixed or
  /// lower case when no alarm is meant (aprssig, December 2012: "Avoid putting "EMERGENCY" (all caps) in
  /// beacons please!"). Mixed and lower case (`Emergency`, `emergency drill`) are no emergency.
  public static let emergencyWord = Array("EMERGENCY".utf8)

  /// Where `packet` reports an emergency, and the text it was found in (at most 62 characters, control bytes
  /// dropped, spaces trimmed): the Mic-E code 000 first, else ``emergencyWord`` anywhere in the information
  /// field, placed by the packet's type. Nil when it reports none.
  public static func emergencyPlace(_ packet: TNC2Packet) -> (EmergencyPlace, String)? {
    let info = packet.information
    guard let type = info.first else { return nil }
    let isMicE = type == 0x60 || type == 0x27 || type == 0x1C || type == 0x1D
    if isMicE, let micE = MicE(destination: packet.destination, information: info), micE.isEmergency {
      return (.micE, excerpt(info, from: min(info.count, 9)))
    }
    guard contains(info, emergencyWord) else { return nil }
    switch type {
    case 0x21, 0x3D:  // ! =
      return (.positionComment, excerpt(info, from: commentStart(info, position: 1)))
    case 0x2F, 0x40:  // / @
      return (.positionComment, excerpt(info, from: commentStart(info, position: 8)))
    case 0x60, 0x27, 0x1C, 0x1D:
      return (.positionComment, excerpt(info, from: min(info.count, 9)))
    case 0x3E:  // >
      return (.status, excerpt(info, from: 1))
    case 0x3B:  // ; name (9), * or _, timestamp (7), position
      let name = excerpt(info[..<min(info.count, 10)], from: 1)
      return (.object(name), excerpt(info, from: commentStart(info, position: 18)))
    case 0x29:  // ) name (3–9), ! or _, position
      let end = info.indices.dropFirst().prefix(10).first { info[$0] == 0x21 || info[$0] == ASCII.underscore }
      guard let end else { return (.item(excerpt(info, from: 1)), excerpt(info, from: 1)) }
      return (
        .item(excerpt(info[..<end], from: 1)), excerpt(info, from: commentStart(info, position: end + 1))
      )
    case ASCII.colon:  // :addressee:text
      return (.message, excerpt(info, from: min(info.count, 11)))
    default:
      return (.packet, excerpt(info, from: 1))
    }
  }

  /// Where the comment begins after a plain (19 bytes) or compressed (13 bytes) position at `position`; the
  /// position itself when it is neither.
  private static func commentStart(_ info: [UInt8], position: Int) -> Int {
    guard position < info.count else { return info.count }
    if plain(info, at: position) != nil { return position + 19 }
    if compressed(info, at: position) != nil { return min(info.count, position + 13) }
    return position
  }

  /// The text from `start`: control bytes dropped, spaces trimmed, at most 62 characters.
  private static func excerpt(_ bytes: some Collection<UInt8>, from start: Int) -> String {
    var text = bytes.dropFirst(start).filter { $0 >= ASCII.space && $0 != 0x7F }
    while text.last == ASCII.space { text.removeLast() }
    let lead = text.prefix { $0 == ASCII.space }.count
    return String(String(decoding: text.dropFirst(lead), as: UTF8.self).prefix(62))
  }

  /// Whether `needle` occurs in `haystack`.
  private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard haystack.count >= needle.count else { return false }
    for start in 0...(haystack.count - needle.count)
    where haystack[start] == needle[0] && haystack[start..<(start + needle.count)].elementsEqual(needle) {
      return true
    }
    return false
  }
}
