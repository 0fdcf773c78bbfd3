import Platform

/// A Web Push subscription's keys (RFC 8291), as a browser's `PushSubscription.toJSON()` gives them in `keys`:
/// the user agent's ECDH public key `p256dh` and the authentication secret `auth`. Stored in
/// `devices.push_p256dh` and `devices.push_auth` as unpadded base64url.
///
/// Only the shapes are checked here (65 bytes starting 0x04, 16 bytes); whether the point lies on P-256 is
/// the API's check (with OpenSSL) before anything is stored.
public struct WebPushKeys: Sendable, Equatable {
  /// Bytes of an uncompressed P-256 point: 0x04, x, y.
  public static let publicKeyBytes = 65
  /// Bytes of the authentication secret.
  public static let authBytes = 16

  /// The user agent's public key, 65 bytes starting 0x04.
  public let p256dh: [UInt8]
  /// The authentication secret, 16 bytes.
  public let auth: [UInt8]

  /// The keys from their bytes; nil when either has the wrong shape.
  public init?(p256dh: [UInt8], auth: [UInt8]) {
    guard p256dh.count == Self.publicKeyBytes, p256dh.first == 0x04, auth.count == Self.authBytes else {
      return nil
    }
    self.p256dh = p256dh
    self.auth = auth
  }

  /// The keys from their text (`decode(_:)`); nil when either is not base64url or has the wrong shape.
  public init?(p256dh: String, auth: String) {
    guard let key = Self.decode(p256dh), let secret = Self.decode(auth) else { return nil }
    self.init(p256dh: key, auth: secret)
  }

  /// `p256dh` as stored and sent: unpadded base64url (87 characters).
  public var p256dhText: String { Base64URL.encode(p256dh) }
  /// `auth` as stored and sent: unpadded base64url (22 characters).
  public var authText: String { Base64URL.encode(auth) }

  /// base64url with or without padding (what browsers send), or standard base64 (`+` and `/`, which some
  /// libraries write); nil for anything else.
  public static func decode(_ text: String) -> [UInt8]? {
    Base64URL.decode(text) ?? Base64.decode(text)
  }
}
