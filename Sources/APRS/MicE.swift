/// A Mic-E position's parts (APRS101 ch. 10): latitude, the message bits and the longitude's flags in the
/// destination call, the longitude in the information field's bytes 1–3.
public struct MicE: Hashable, Sendable {
  /// Degrees, north positive.
  public var latitude: Double
  /// Degrees, east positive.
  public var longitude: Double
  /// The message bits A, B, C as one number `A<<2 | B<<1 | C` (APRS101 table "Mic-E Message Codes"): 7 is
  /// M0 "Off Duty" (or C0), … 1 is M6 "Priority" (or C6), 0 is "Emergency" in both sets.
  public var messageCode: UInt8

  /// Message code 000: "Emergency" (the same in the standard and the custom set).
  public var isEmergency: Bool { messageCode == 0 }

  /// Decodes; nil when the destination is not 6 Mic-E characters (an SSID is ignored) or the information
  /// field is shorter than 9 bytes or out of range.
  public init?(destination: String, information info: [UInt8]) {
    let call = Array(destination.utf8.prefix { $0 != ASCII.hyphen })
    guard call.count == 6, info.count >= 9 else { return nil }
    var digits: [Int] = []
    var bits: UInt8 = 0
    var flags: [Bool] = []  // per character: the "1"/north/+100/west meaning
    for (index, byte) in call.enumerated() {
      let digit: Int
      let one: Bool
      switch byte {
      case 0x30...0x39:
        digit = Int(byte - 0x30)
        one = false
      case 0x41...0x4A:  // A–J: custom 1 (only valid in the message characters)
        guard index < 3 else { return nil }
        digit = Int(byte - 0x41)
        one = true
      case 0x4B:  // K: custom 1, ambiguity
        guard index < 3 else { return nil }
        digit = 0
        one = true
      case 0x4C:  // L: 0, ambiguity
        digit = 0
        one = false
      case 0x50...0x59:  // P–Y: standard 1
        digit = Int(byte - 0x50)
        one = true
      case 0x5A:  // Z: standard 1, ambiguity
        digit = 0
        one = true
      default:
        return nil
      }
      digits.append(digit)
      flags.append(one)
      if index < 3 { bits = bits << 1 | (one ? 1 : 0) }
    }
    let latMinutes = Double(digits[2] * 10 + digits[3]) + Double(digits[4] * 10 + digits[5]) / 100
    guard latMinutes < 60 else { return nil }
    var latitude = Double(digits[0] * 10 + digits[1]) + latMinutes / 60
    if !flags[3] { latitude = -latitude }
    guard latitude.magnitude <= 90 else { return nil }

    var degrees = Int(info[1]) - 28
    if flags[4] { degrees += 100 }
    if degrees >= 180 && degrees <= 189 {
      degrees -= 80
    } else if degrees >= 190 && degrees <= 199 {
      degrees -= 190
    }
    var minutes = Int(info[2]) - 28
    if minutes >= 60 { minutes -= 60 }
    let hundredths = Int(info[3]) - 28
    guard degrees >= 0, degrees <= 179, minutes >= 0, minutes < 60, hundredths >= 0, hundredths < 100 else {
      return nil
    }
    var longitude = Double(degrees) + (Double(minutes) + Double(hundredths) / 100) / 60
    if flags[5] { longitude = -longitude }
    self.latitude = latitude
    self.longitude = longitude
    self.messageCode = bits
  }
}
