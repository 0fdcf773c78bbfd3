/// What a register or heartbeat request tells the store about a station.
public struct StationUpsert: Sendable, Equatable {
  /// The station address, `CALL` or `CALL-SSID` (any case; stored upper-case).
  public var address: String
  /// The base callsign (any case; stored upper-case).
  public var base: String
  /// The SSID, 0–15.
  public var ssid: Int
  /// `"android"`, `"ios"`, …; nil for a sync-only station (then a stored platform is kept).
  public var platform: String?
  /// The device's push token; nil or empty for none. Needs `platform`.
  public var pushToken: String?
  /// Whether the listener should ACK messages for this station; nil keeps the stored value
  /// (false for a new station).
  public var ackMessages: Bool?
  /// True for /v1/register (also sets `registered_at`), false for /v1/heartbeat.
  public var isRegistration: Bool

  /// A station upsert; see the properties.
  public init(
    address: String, base: String, ssid: Int, platform: String?, pushToken: String?,
    ackMessages: Bool?, isRegistration: Bool
  ) {
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
  public var platform: String?
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
  /// The provider token (FCM registration token or APNs device token).
  public var token: String
  /// The upper-case address of the station it belongs to.
  public var station: String
  /// The platform the token is for (`"android"`, `"ios"`).
  public var platform: String
  /// When the token joined this station, epoch ms.
  public var registeredAt: Int64
  /// Its last register or heartbeat, epoch ms.
  public var refreshedAt: Int64
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
