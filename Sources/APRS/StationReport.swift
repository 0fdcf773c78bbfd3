/// What a packet from a watched station says about it (APRS101 ch. 8–10, 16): where it is and whether it
/// reports an emergency. Pure; only for watched calls (the filter's `b/` entries), so it is not on the hot path.
///
/// - Positions: plain (`!`, `=`, and `/`, `@` after a 7-character timestamp; ambiguity spaces read as 0),
///   compressed (base-91 after the symbol table), and Mic-E (`` ` `` or `'`: latitude and message bits in the
///   destination call, longitude in the information field).
/// - Emergency (``emergencyIn``): the Mic-E message code 000 ("Emergency": the destination's first three
///   characters all `0`–`9` or `L`), or `EMERGENCY` in capitals anywhere in the information field: a position's
///   comment, a status, an object's or item's text, a message (``StationReport/emergencyPlace(_:)``).
public struct StationReport: Hashable, Sendable {
  /// What kind of report the packet is.
  public enum Kind: String, Hashable, Sendable {
    case position
    case micE
    case status
    /// Anything else from the station (messages, objects, telemetry, …): it was heard, nothing more.
    case other
  }

  /// The sender (as in the packet).
  public var source: String
  public var kind: Kind
  /// Degrees, north positive; nil when the packet has no position.
  public var latitude: Double?
  /// Degrees, east positive; nil when the packet has no position.
  public var longitude: Double?
  /// Where the packet reports an emergency; nil when it reports none.
  public var emergencyIn: EmergencyPlace?
  /// For a status report, its text (without `>`, at most 62 characters kept).
  public var status: String?
  /// For an emergency, the text it was found in (a comment, an object's text, a message; at most 62 characters,
  /// control characters dropped), when that is not the status; nil without one.
  public var emergencyText: String?

  public init(
    source: String, kind: Kind, latitude: Double? = nil, longitude: Double? = nil,
    emergencyIn: EmergencyPlace? = nil, status: String? = nil, emergencyText: String? = nil
  ) {
    self.source = source
    self.kind = kind
    self.latitude = latitude
    self.longitude = longitude
    self.emergencyIn = emergencyIn
    self.status = status
    self.emergencyText = emergencyText
  }

  /// Whether the packet reports an emergency.
  public var emergency: Bool { emergencyIn != nil }

  /// Reads a parsed packet.
  public static func read(_ packet: TNC2Packet) -> StationReport {
    let info = packet.information
    var report = StationReport(source: packet.source, kind: .other)
    guard let type = info.first else { return report }
    switch type {
    case 0x21, 0x3D:  // ! =
      if let (lat, lon) = position(info, at: 1) { report.set(.position, lat, lon) }
    case 0x2F, 0x40:  // / @ (timestamp first)
      if let (lat, lon) = position(info, at: 8) { report.set(.position, lat, lon) }
    case 0x60, 0x27, 0x1C, 0x1D:  // ` ' and the old Mic-E types
      if let micE = MicE(destination: packet.destination, information: info) {
        report.set(.micE, micE.latitude, micE.longitude)
      }
    case 0x3E:  // >
      report.kind = .status
      report.status = String(decoding: info.dropFirst().prefix(62), as: UTF8.self)
    default: break
    }
    if let (place, text) = emergencyPlace(packet) {
      report.emergencyIn = place
      if place != .status { report.emergencyText = text }
    }
    return report
  }

  private mutating func set(_ kind: Kind, _ latitude: Double, _ longitude: Double) {
    self.kind = kind
    self.latitude = latitude
    self.longitude = longitude
  }

  /// A plain (`DDMM.mmN/DDDMM.mmW`) or compressed position starting at `start`.
  static func position(_ info: [UInt8], at start: Int) -> (Double, Double)? {
    guard start < info.count else { return nil }
    if ASCII.isDigit(info[start]) || info[start] == ASCII.space { return plain(info, at: start) }
    return compressed(info, at: start)
  }

  /// `DDMM.hhN` + table + `DDDMM.hhW` + symbol (19 bytes).
  static func plain(_ info: [UInt8], at start: Int) -> (Double, Double)? {
    guard info.count >= start + 19 else { return nil }
    guard let lat = degrees(info[start..<(start + 7)], degreeDigits: 2),
      let lon = degrees(info[(start + 9)..<(start + 17)], degreeDigits: 3)
    else { return nil }
    let ns = info[start + 7]
    let ew = info[start + 17]
    guard ns == 0x4E || ns == 0x53, ew == 0x45 || ew == 0x57 else { return nil }  // N S, E W
    let latitude = ns == 0x53 ? -lat : lat
    let longitude = ew == 0x57 ? -lon : lon
    guard abs(latitude) <= 90, abs(longitude) <= 180 else { return nil }
    return (latitude, longitude)
  }

  /// `DD[D]MM.hh` with ambiguity spaces read as 0.
  private static func degrees(_ field: ArraySlice<UInt8>, degreeDigits: Int) -> Double? {
    var digits: [Int] = []
    for (offset, byte) in field.enumerated() {
      if offset == degreeDigits + 2 {
        guard byte == ASCII.period else { return nil }
        continue
      }
      if ASCII.isDigit(byte) {
        digits.append(Int(byte - ASCII.zero))
      } else if byte == ASCII.space {
        digits.append(0)
      } else {
        return nil
      }
    }
    let whole = digits.prefix(degreeDigits).reduce(0) { $0 * 10 + $1 }
    let rest = digits.dropFirst(degreeDigits)
    let minutes =
      Double(rest.prefix(2).reduce(0) { $0 * 10 + $1 }) + Double(rest.dropFirst(2).reduce(0) { $0 * 10 + $1 })
      / 100
    guard minutes < 60 else { return nil }
    return Double(whole) + minutes / 60
  }

  /// Table + 4 base-91 latitude + 4 base-91 longitude + symbol (APRS101 ch. 9).
  static func compressed(_ info: [UInt8], at start: Int) -> (Double, Double)? {
    guard info.count >= start + 10 else { return nil }
    let table = info[start]
    guard table == 0x2F || table == 0x5C || ASCII.isUpper(table) || (table >= 0x61 && table <= 0x6A) else {
      return nil
    }
    func base91(_ from: Int) -> Int? {
      var value = 0
      for byte in info[from..<(from + 4)] {
        guard byte >= 33 && byte <= 123 else { return nil }
        value = value * 91 + Int(byte - 33)
      }
      return value
    }
    guard let y = base91(start + 1), let x = base91(start + 5) else { return nil }
    let latitude = 90 - Double(y) / 380_926
    let longitude = -180 + Double(x) / 190_463
    guard abs(latitude) <= 90, abs(longitude) <= 180 else { return nil }
    return (latitude, longitude)
  }
}
