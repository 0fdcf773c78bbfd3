import JSON
import Store

/// `platform`, `pushToken` and `pushKeys` of a register or heartbeat, validated together.
///
/// An empty or absent token makes a sync-only station (a desktop); then `platform` may be absent.
struct DeviceFields: Equatable {
  /// Android (an FCM registration token), iOS (a raw hex APNs device token), Web Push or UnifiedPush (an
  /// endpoint URL), or nil.
  var platform: DevicePlatform?
  /// The push token, or nil for a sync-only station; an APNs token in lower case (`DeviceToken.apns`).
  var pushToken: String?
  /// Web Push / UnifiedPush: the subscription's keys (required for `webpush`, optional for `unifiedpush`).
  var webPushKeys: WebPushKeys?

  init(platform: DevicePlatform?, pushToken: String?, webPushKeys: WebPushKeys? = nil) {
    self.platform = platform
    self.pushToken = pushToken
    self.webPushKeys = webPushKeys
  }

  /// The platforms by name, as the error for an unknown one lists them.
  static let platformNames = #""android", "ios", "webpush" or "unifiedpush""#

  /// `allowPrivateEndpoints`: accept endpoints on loopback and private addresses (tests only).
  init(_ body: RequestBody, allowPrivateEndpoints: Bool = false) throws(APIError) {
    let name = try body.string("platform", maxLength: 64).flatMap { $0.isEmpty ? nil : $0 }
    let token = try body.string("pushToken", maxLength: 4096).flatMap { $0.isEmpty ? nil : $0 }
    let platform = name.flatMap(DevicePlatform.init(rawValue:))
    try Self.checkPushKeysTypes(body)
    if name != nil, platform == nil {
      throw .badRequest("platform must be \(Self.platformNames)")
    }
    if let token {
      switch platform {
      case nil:
        throw .badRequest("platform is required with a pushToken (\(Self.platformNames))")
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
      case .android?:
        guard Self.isFCMToken(token) else {
          throw .badRequest("pushToken is not an FCM registration token")
        }
      case .webpush?, .unifiedpush?:
        let platform = platform!
        guard let endpoint = WebPushEndpoint(token) else {
          throw .badRequest(
            "pushToken must be the push service's endpoint: an https:// URL of at most "
              + "\(WebPushEndpoint.maxBytes) characters for platform \(platform.rawValue)")
        }
        if endpoint.isPrivateHost && !allowPrivateEndpoints {
          throw .badRequest(
            "pushToken is an endpoint on a loopback or private address; this server refuses those")
        }
        let keys = try Self.webPushKeys(body, required: platform == .webpush)
        self.init(platform: platform, pushToken: token, webPushKeys: keys)
        return
      }
    }
    self.init(platform: platform, pushToken: token)
  }

  /// `pushKeys` is read only beside a Web Push or UnifiedPush endpoint, but of the wrong JSON type (or with a
  /// member of the wrong type) it is a 400 whatever the platform, as any known field (docs/protocol.md).
  static func checkPushKeysTypes(_ body: RequestBody) throws(APIError) {
    switch body["pushKeys"] {
    case nil:
      return
    case .object(let keys)?:
      for key in ["p256dh", "auth"] {
        switch keys[key] {
        case nil, .null?, .string?: continue
        default: throw .badRequest("pushKeys.\(key) must be a base64url string")
        }
      }
    case let keys?:
      throw .badRequest("pushKeys must be an object with p256dh and auth, not \(keys.typeName)")
    }
  }

  /// `pushKeys` as `PushSubscription.toJSON()` gives it: `{"p256dh":"<base64url>","auth":"<base64url>"}`.
  static func webPushKeys(_ body: RequestBody, required: Bool) throws(APIError) -> WebPushKeys? {
    guard let value = body["pushKeys"] else {
      if required {
        throw .badRequest(
          "pushKeys is required for platform webpush: {\"p256dh\":…,\"auth\":…} from PushSubscription.toJSON()"
        )
      }
      return nil
    }
    guard case .object(let object) = value else {
      throw .badRequest("pushKeys must be an object with p256dh and auth, not \(value.typeName)")
    }
    func text(_ key: String) throws(APIError) -> String {
      guard case .string(let text)? = object[key] else {
        throw .badRequest("pushKeys.\(key) must be a base64url string")
      }
      guard text.utf8.count <= 256 else { throw .badRequest("pushKeys.\(key) is longer than 256 bytes") }
      return text
    }
    let p256dh = try text("p256dh")
    let auth = try text("auth")
    guard let point = WebPushKeys.decode(p256dh), point.count == WebPushKeys.publicKeyBytes, point[0] == 0x04,
      P256Point.isValid(point)
    else {
      throw .badRequest("pushKeys.p256dh must be base64url of a 65-byte uncompressed P-256 point")
    }
    guard let secret = WebPushKeys.decode(auth), secret.count == WebPushKeys.authBytes else {
      throw .badRequest("pushKeys.auth must be base64url of a 16-byte authentication secret")
    }
    return WebPushKeys(p256dh: point, auth: secret)
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
