/// A limit the responder enforces, named exactly as its config key (`[ratelimit]`, `[limits]` or `[send]`), the
/// `limit` label of `aprs_cloud_limit_hits_total` in `/metrics`.
public enum LimitName: String, Sendable, CaseIterable {
  /// `[ratelimit] registrationsPerHour`: registrations per station per hour (429).
  case registrationsPerHour
  /// `[ratelimit] heartbeatsPerHour`: heartbeats per station per hour (429).
  case heartbeatsPerHour
  /// `[ratelimit] avatarUploadsPerHour`: avatar uploads per station per hour (avatar refused).
  case avatarUploadsPerHour
  /// `[ratelimit] newStationsPerAddressPerHour`: stations one client address may create per hour (429).
  case newStationsPerAddressPerHour
  /// `[ratelimit] newStationsPerNetworkPerHour`: stations one IPv4 /24 or IPv6 /48 may create per hour
  /// (429).
  case newStationsPerNetworkPerHour
  /// `[ratelimit] newStationsPerWideNetworkPerHour`: stations one IPv6 /32 may create per hour (429).
  case newStationsPerWideNetworkPerHour
  /// `[ratelimit] claimsPerAddressPerHour`: claims and key rotations one client address may make per hour (429).
  case claimsPerAddressPerHour
  /// `[ratelimit] claimsPerNetworkPerHour`: claims and key rotations one IPv4 /24 or IPv6 /48 may make per hour
  /// (429).
  case claimsPerNetworkPerHour
  /// `[ratelimit] avatarUploadsPerAddressPerHour`: avatar uploads per client address per hour (avatar
  /// refused).
  case avatarUploadsPerAddressPerHour
  /// `[limits] maxStations`: stations the database holds at most (503 for a new one).
  case maxStations
  /// `[limits] devicesPerStation`: push tokens per station; a new one replaces the least recently
  /// refreshed (counted per token replaced).
  case devicesPerStation
  /// `[limits] avatarBytesTotal`: bytes of avatar images stored at most (avatar refused).
  case avatarBytesTotal
  /// `[send] perMinute`: `/v1/send` messages one station may send per minute (429).
  case sendsPerStationPerMinute = "perMinute"
  /// `[send] inFlight`: `/v1/send` messages of one station waiting for an answer at once (429).
  case sendsInFlight = "inFlight"
  /// `[limits] keylessDevicesPerStation`: push tokens registered without the station key that a claimed station
  /// keeps; a new one replaces the least recently refreshed of them (counted per token replaced).
  case keylessDevicesPerStation
  /// `[send] sendsPerAddressPerMinute`: `/v1/send` messages one client address may send per minute (429).
  case sendsPerAddressPerMinute
  /// `[send] sendsPerMinuteGlobal`: `/v1/send` messages accepted per minute from everyone together (429).
  case sendsPerMinuteGlobal
  /// A third of `sendsPerMinuteGlobal` (half for an IPv6 /32): `/v1/send` messages one network (IPv4 /24, IPv6
  /// /48, IPv6 /32) may send per minute, so that no network spends everyone's budget (429).
  case sendsPerNetworkPerMinute
  /// `[send] bulletinsPerDay`: `/v1/send` bulletins and announcements one station may send in any 24 h (429).
  case bulletinsPerDay
}

/// How often each limit was hit since the database was created (`limits.*` rows of `meta`), and the
/// bytes of avatar images stored now.
public struct LimitStatus: Sendable, Equatable {
  /// Requests refused (for `devicesPerStation`: tokens replaced) by each limit; absent reads as 0.
  public var hits: [LimitName: Int] = [:]
  /// The sum of every stored avatar image's length in bytes (base64 text), kept by triggers.
  public var avatarBytes: Int64 = 0

  /// Nothing hit, nothing stored.
  public init() {}

  /// The hits of `limit` (0 when it was never hit).
  public subscript(limit: LimitName) -> Int { hits[limit] ?? 0 }
}

extension LimitStatus {
  /// Every hit counter's key starts with this.
  static let keyPrefix = "limits."

  /// The meta key counting the hits of `limit`.
  static func key(_ limit: LimitName) -> String { keyPrefix + limit.rawValue }

  /// Decodes the `limits.*` rows (by key); a garbled count reads as 0, unknown keys are ignored.
  init(metaRows rows: [String: String], avatarBytes: Int64) {
    self.init()
    for limit in LimitName.allCases {
      let count = StatusText.count(rows[Self.key(limit)])
      if count > 0 { hits[limit] = count }
    }
    self.avatarBytes = max(0, avatarBytes)
  }
}
