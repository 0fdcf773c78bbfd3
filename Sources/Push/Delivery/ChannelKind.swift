import Store

/// The channels the delivery engine sends through, one folder each under `Sources/Push/Channels`: the push
/// providers of the registered devices and the forward targets' services. A new channel is one folder and one case
/// here.
enum ChannelKind: String, Sendable, CaseIterable {
  /// Firebase Cloud Messaging HTTP v1 (`android` devices).
  case fcm
  /// Apple Push Notification service with token authentication (`ios` devices).
  case apns
  /// Web Push (RFC 8030, RFC 8291, RFC 8292) to a browser's push service (`webpush` devices).
  case webpush
  /// UnifiedPush: Web Push to the distributor's server the device chose (`unifiedpush` devices).
  case unifiedpush
  /// An ntfy topic of a forward target.
  case ntfy
  /// An HTTPS webhook of a forward target.
  case webhook
  /// A mail through the operator's SMTP server to a forward target.
  case email

  /// The channel of a device's platform.
  init(_ platform: DevicePlatform) {
    switch platform {
    case .android: self = .fcm
    case .ios: self = .apns
    case .webpush: self = .webpush
    case .unifiedpush: self = .unifiedpush
    }
  }

  /// The channel of a forward target's kind.
  init(_ kind: ForwardKind) {
    switch kind {
    case .ntfy: self = .ntfy
    case .webhook: self = .webhook
    case .email: self = .email
    }
  }

  /// The device platform the channel serves; nil for the forward channels.
  var platform: DevicePlatform? {
    switch self {
    case .fcm: .android
    case .apns: .ios
    case .webpush: .webpush
    case .unifiedpush: .unifiedpush
    case .ntfy, .webhook, .email: nil
    }
  }

  /// The forward kind the channel serves; nil for the push channels.
  var forwardKind: ForwardKind? {
    switch self {
    case .ntfy: .ntfy
    case .webhook: .webhook
    case .email: .email
    case .fcm, .apns, .webpush, .unifiedpush: nil
    }
  }
}
