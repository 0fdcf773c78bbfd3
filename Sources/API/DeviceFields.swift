import Store

/// `platform` and `pushToken` of a register or heartbeat, validated together.
///
/// An empty or absent token makes a sync-only station (a desktop); then `platform` may be absent.
struct DeviceFields: Equatable {
  /// Android (an FCM registration token) or iOS (a raw hex APNs device token), or nil.
  var platform: DevicePlatform?
  /// The push token, or nil for a sync-only station; an APNs token in lower case (`DeviceToken.apns`).
  var pushToken: String?

  init(platform: DevicePlatform?, pushToken: String?) {
    self.platform = platform
    self.pushToken = pushToken
  }

  init(_ body: RequestBody) throws(APIError) {
    let name = try body.string("platform", maxLength: 64).flatMap { $0.isEmpty ? nil : $0 }
    let token = try body.string("pushToken", maxLength: 4096).flatMap { $0.isEmpty ? nil : $0 }
    let platform = name.flatMap(DevicePlatform.init(rawValue:))
    if name != nil, platform == nil {
      throw .badRequest("platform must be \"android\" or \"ios\"")
    }
    if let token {
      switch platform {
      case nil:
        throw .badRequest("platform is required with a pushToken (\"android\" or \"ios\")")
      case .ios?:
        // Stored lower case: the app sends it in upper case, and one device must stay one row.
        guard let hex = DeviceToken.apns(token) else {
          throw .badRequest(
            "pushToken must be an APNs device token in hex (an even number of "
              + "\(DeviceToken.apnsDigits.lowerBound)–\(DeviceToken.apnsDigits.upperBound) digits) for platform ios"
          )
        }
        self.init(platform: platform, pushToken: hex)
        return
      default:
        guard Self.isFCMToken(token) else {
          throw .badRequest("pushToken is not an FCM registration token")
        }
      }
    }
    self.init(platform: platform, pushToken: token)
  }

  /// FCM registration tokens are URL-safe text such as `dXk…:APA91b…`.
  static func isFCMToken(_ token: String) -> Bool {
    let utf8 = token.utf8
    return utf8.count >= 8
      && utf8.allSatisfy { byte in
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
          || byte == 0x5F || byte == 0x2D || byte == 0x3A || byte == 0x2E
      }
  }
}
