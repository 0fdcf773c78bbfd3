/// Push tokens as the store keeps them: an APNs device token is hex and stored lower case, so the app's
/// upper-case form (FlutterFire prints it so) and any other spelling are one device, one row; FCM
/// registration tokens are case-sensitive and kept as given. The API validates with the same rule, and the
/// push sender refuses to send to a token that breaks it.
public enum DeviceToken {
  /// How many hex digits an APNs device token may have (32 bytes today; Apple may grow them, up to 100 bytes).
  public static let apnsDigits = 16...200

  /// The stored form of an APNs device token: its hex digits in lower case; nil when it is not an even number
  /// of `apnsDigits` hex digits.
  public static func apns(_ token: String) -> String? {
    let utf8 = token.utf8
    guard apnsDigits.contains(utf8.count), utf8.count % 2 == 0 else { return nil }
    var lower: [UInt8] = []
    lower.reserveCapacity(utf8.count)
    for byte in utf8 {
      switch byte {
      case 0x30...0x39, 0x61...0x66: lower.append(byte)
      case 0x41...0x46: lower.append(byte + 0x20)
      default: return nil
      }
    }
    return String(decoding: lower, as: UTF8.self)
  }

  /// The form `token` is stored and looked up under for `platform`: an APNs token lower-cased (its ASCII letters,
  /// even when it is not valid hex, so a bad row still matches its own spelling), any other token as given.
  public static func stored(_ token: String, platform: DevicePlatform) -> String {
    switch platform {
    case .ios: String(decoding: token.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    case .android, .webpush, .unifiedpush: token
    }
  }
}
