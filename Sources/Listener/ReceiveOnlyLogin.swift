/// The login name of a listener without `[aprsis] login`: `ACLD` and four hex digits, random per process.
///
/// APRS-IS requires unique login names (a second login with the same name kicks the first off), and a receive-only
/// listener must never use a user's call, so it makes one up. Four letters before the first digit is not the shape
/// of an amateur call (ITU prefixes have at most three characters), so it cannot be anybody's.
public enum ReceiveOnlyLogin {
  /// The fixed prefix.
  static let prefix = "ACLD"

  /// A new name from `generator`.
  static func generate(using generator: inout some RandomNumberGenerator) -> String {
    let value = UInt16.random(in: 0...UInt16.max, using: &generator)
    let digits = Array("0123456789ABCDEF")
    var name = prefix
    for shift in stride(from: 12, through: 0, by: -4) {
      name.append(digits[Int((value >> UInt16(shift)) & 0xF)])
    }
    return name
  }

  /// A new name from the system's random source.
  public static func generate() -> String {
    var generator = SystemRandomNumberGenerator()
    return generate(using: &generator)
  }
}
