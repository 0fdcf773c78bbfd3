/// The push platform a device token belongs to; stored as its raw value (`devices.platform`,
/// `stations.platform`), and the `platform` of /v1/register, the `provider` label of `/metrics`.
///
/// A row holding a platform this build does not know (written by hand, or by a newer build) is
/// read as no platform: its device is left out, its station reads as sync-only.
public enum DevicePlatform: String, Sendable, CaseIterable {
  /// An FCM registration token.
  case android
  /// An APNs device token (hex).
  case ios
  /// A Web Push subscription (RFC 8030): the token is the push service's `https://` endpoint URL, the keys
  /// (`WebPushKeys`) encrypt each push (RFC 8291).
  case webpush
  /// A UnifiedPush endpoint a distributor handed the app: Web Push on the wire, the keys optional (without
  /// them the body goes unencrypted).
  case unifiedpush

  /// Web Push or UnifiedPush: the token is an endpoint URL and the push goes out as RFC 8030 Web Push.
  public var isWebPush: Bool { self == .webpush || self == .unifiedpush }
}

/// What a register or heartbeat request tells the store about a station.
public struct StationUpsert: Sendable, Equatable {
  /// The station address, `CALL` or `CALL-SSID` (any case; stored upper-case).
  public var address: String
  /// The base callsign (any case; stored upper-case).
  public var base: String
  /// The SSID, 0–15.
  public var ssid: Int
  /// The device's platform; nil for a sync-only station (then a stored platform is kept).
  public var platform: DevicePlatform?
  /// The device's push token; nil or empty for none. Needs `platform`.
  public var pushToken: String?
  /// Whether the listener should ACK messages for this station; nil keeps the stored value
  /// (false for a new station).
  public var ackMessages: Bool?
  /// True for /v1/register (also sets `registered_at`), false for /v1/heartbeat.
  public var isRegistration: Bool
  /// Web Push / UnifiedPush: the subscription's keys, stored with the device (nil stores none).
  public var webPushKeys: WebPushKeys?
  /// Whether the request proved the station key: the device is the owner's, and the claim is refreshed.
  public var keyed: Bool
  /// The client as the limits key it, for the audit trail (an ACK policy register's `ackMessages` changed).
  public var client: String
  /// What the request opted in to (`want`), stored with its device; nil (a heartbeat) keeps the device's.
  public var wants: Wants?
  /// The `ackMessages` the request carried, stored with its device (`devices.ack_messages`) even where it does
  /// not set the station's policy (a keyless register of a claimed station): a device registered before the
  /// claim keeps its ACKs (``ClaimReach/earlierWantAcks``). Nil keeps the device's.
  public var deviceAckMessages: Bool?

  /// A station upsert; see the properties. `deviceAckMessages` defaults to `ackMessages`.
  public init(
    address: String, base: String, ssid: Int, platform: DevicePlatform?, pushToken: String?,
    ackMessages: Bool?, isRegistration: Bool, webPushKeys: WebPushKeys? = nil, keyed: Bool = false,
    client: String = "unknown", wants: Wants? = nil, deviceAckMessages: Bool?? = nil
  ) {
    self.wants = wants
    self.deviceAckMessages = deviceAckMessages ?? ackMessages
    self.webPushKeys = webPushKeys
    self.keyed = keyed
    self.client = client
    self.address = address
    self.base = base
    self.ssid = ssid
    self.platform = platform
    self.pushToken = pushToken
    self.ackMessages = ackMessages
    self.isRegistration = isRegistration
  }
}

/// A registered station as stored.
public struct StationRecord: Sendable, Equatable {
  /// The upper-case station address (primary key).
  public var address: String
  /// The upper-case base callsign.
  public var base: String
  /// The SSID, 0–15.
  public var ssid: Int
  /// The last platform given, nil for a sync-only station that never gave one.
  public var platform: DevicePlatform?
  /// Whether the listener ACKs messages for this station.
  public var ackMessages: Bool
  /// The hash of the stored avatar, `""` when none is stored (never set, or cleared).
  public var avatarHash: String
  /// When the user cleared the avatar; nil when it is set or was never set.
  public var avatarClearedAt: Int64?
  /// When the station last registered (or was created by a heartbeat), epoch ms.
  public var registeredAt: Int64
  /// Its last register or heartbeat, epoch ms.
  public var heartbeatAt: Int64
  /// The `serverTime` of its newest sync: messages after it have not been pulled yet.
  public var lastSyncCursor: Int64
  /// When `lastSyncCursor` last advanced, epoch ms; nil if it never synced.
  public var lastSyncAt: Int64?
}

/// A stored avatar: a built-in icon name, a base64 PNG image, or both, and their hash.
public struct Avatar: Sendable, Equatable {
  /// A built-in icon name, or nil.
  public var icon: String?
  /// A base64 PNG, or nil.
  public var image: String?
  /// The avatar's identity string (`"icon:<name>"` or a SHA-256 hex), as the client computes it.
  public var hash: String

  /// An avatar; see the properties.
  public init(icon: String?, image: String?, hash: String) {
    self.icon = icon
    self.image = image
    self.hash = hash
  }
}

/// One push token of a station.
public struct DeviceRecord: Sendable, Equatable {
  /// The provider token (FCM registration token, APNs device token, or a Web Push endpoint URL).
  public var token: String
  /// The upper-case address of the station it belongs to.
  public var station: String
  /// The platform the token is for.
  public var platform: DevicePlatform
  /// When the token joined this station, epoch ms.
  public var registeredAt: Int64
  /// Its last register or heartbeat, epoch ms.
  public var refreshedAt: Int64
  /// iOS: the APNs environment that last accepted the token (`devices.apns_environment`); nil until one did,
  /// and for other platforms.
  public var apnsEnvironment: APNsEnvironment?
  /// Web Push / UnifiedPush: the subscription's keys (`devices.push_p256dh`, `devices.push_auth`); nil when none
  /// were given, and for other platforms.
  public var webPushKeys: WebPushKeys?
  /// Whether it was registered or refreshed with the station key (`devices.keyed`): the owner's device.
  public var keyed: Bool
  /// What its last register opted in to (`devices.wants`): with ``Wants/ssids`` it takes the pushes of
  /// other-SSID entries.
  public var wants: Wants

  /// A device; see the properties.
  public init(
    token: String, station: String, platform: DevicePlatform, registeredAt: Int64, refreshedAt: Int64,
    apnsEnvironment: APNsEnvironment? = nil, webPushKeys: WebPushKeys? = nil, keyed: Bool = false,
    wants: Wants = []
  ) {
    self.wants = wants
    self.webPushKeys = webPushKeys
    self.keyed = keyed
    self.token = token
    self.station = station
    self.platform = platform
    self.registeredAt = registeredAt
    self.refreshedAt = refreshedAt
    self.apnsEnvironment = apnsEnvironment
  }
}

/// One of the two APNs environments (stored as its raw value in `devices.apns_environment`). An app built for
/// development gets sandbox tokens, a store or TestFlight build production ones; each environment refuses the
/// other's tokens with `400 BadDeviceToken`.
public enum APNsEnvironment: String, Sendable, CaseIterable {
  /// `api.push.apple.com`.
  case production
  /// `api.sandbox.push.apple.com`.
  case sandbox

  /// The other environment.
  public var other: APNsEnvironment {
    switch self {
    case .production: .sandbox
    case .sandbox: .production
    }
  }
}

/// A station the listener should watch: heard from within the expiry window.
public struct LiveStation: Sendable, Equatable {
  /// The upper-case station address.
  public var address: String
  /// Whether the listener ACKs messages for it.
  public var ackMessages: Bool

  /// A live station; see the properties.
  public init(address: String, ackMessages: Bool) {
    self.address = address
    self.ackMessages = ackMessages
  }
}

/// A station's avatar as a push about one of its messages carries it.
public enum PushAvatar: Sendable, Equatable {
  /// Never set, or the sender is not a known station.
  case none
  /// A stored avatar.
  case stored(Avatar)
  /// A known station that cleared its avatar (the push carries a tombstone).
  case cleared
}

/// One line of `aprs-cloud stations`.
public struct StationSummary: Sendable, Equatable {
  /// Whether the station has an avatar.
  public enum AvatarState: String, Sendable {
    /// An icon or image is stored.
    case set
    /// The user cleared it (the clear time is kept so phones learn of it).
    case cleared
    /// Never set.
    case none
  }

  /// The upper-case station address.
  public var address: String
  /// The last platform given, nil for a sync-only station.
  public var platform: DevicePlatform?
  /// Its last registration, epoch ms.
  public var registeredAt: Int64
  /// Its last register or heartbeat (when it was last heard), epoch ms.
  public var heartbeatAt: Int64
  /// When its sync cursor last advanced, epoch ms; nil if it never synced.
  public var lastSyncAt: Int64?
  /// Its avatar.
  public var avatar: AvatarState
  /// Whether the listener ACKs its messages.
  public var ackMessages: Bool
  /// Its push tokens.
  public var devices: Int
  /// Its stored messages.
  public var messages: Int
  /// Heard within the expiry window.
  public var live: Bool
}
