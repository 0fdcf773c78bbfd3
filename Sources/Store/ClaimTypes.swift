/// Whether a station is claimed (PROTOCOL.md "Owned stations"), as `Database.stationClaim(_:)` reads it.
public enum ClaimState: Sendable, Equatable {
  /// No station is stored under the address.
  case unregistered
  /// The station is stored and nobody claimed it: the old protocol's rules apply.
  case unclaimed
  /// The station is claimed; only the holder of the key whose SHA-256 this is may change it.
  case claimed(StationClaim)

  /// The claim, when there is one.
  public var claim: StationClaim? {
    if case .claimed(let claim) = self { return claim }
    return nil
  }
}

/// A station's claim as stored on its row (`stations.claim_key_hash`, `claimed_at`, `claim_refreshed_at`).
public struct StationClaim: Sendable, Equatable {
  /// The SHA-256 of the station key's text, lower-case hex (64 characters). The key itself is never stored.
  public var keyHash: String
  /// When the station was claimed, epoch ms (a rotation keeps it).
  public var claimedAt: Int64
  /// The last claim, rotation, or request made with the key (register and heartbeat always, any other at most
  /// once an hour), epoch ms: the claim lapses when this is older than the station expiry.
  public var refreshedAt: Int64

  public init(keyHash: String, claimedAt: Int64, refreshedAt: Int64) {
    self.keyHash = keyHash
    self.claimedAt = claimedAt
    self.refreshedAt = refreshedAt
  }
}

/// What `Database.claimStation` did.
public enum ClaimOutcome: Sendable, Equatable {
  /// The station is now claimed with the given key hash, at this time (epoch ms).
  case claimed(at: Int64)
  /// It was claimed already: nothing changed (the API's 409).
  case alreadyClaimed
  /// No station is stored under the address.
  case unregistered
}

/// Whether a claimed station takes devices registered without its key (setting `keylessDevices`, stored as the
/// raw value in `station_settings.keyless_devices`).
public enum KeylessDevices: String, Sendable, CaseIterable {
  /// Keyless devices are taken, in their own small pool (`[limits] keylessDevicesPerStation`).
  case allow
  /// A register or heartbeat with a push token but without the key is refused (403).
  case deny
}

/// What one entry of a station's audit trail records (`station_audit.action`).
public enum AuditAction: String, Sendable, CaseIterable {
  /// `POST /v1/claim` claimed the station.
  case claimed
  /// The owner rotated the key.
  case rotated
  /// The operator released the claim (`aprs-cloud stations CALL --release-claim`).
  case released
  /// The claim lapsed: no request made with the key refreshed it within the station expiry.
  case lapsed
  /// `POST /v1/settings` changed settings (the detail names them).
  case settings
  /// A whole-station `POST /v1/unregister` deleted the station.
  case unregistered
  /// Register's `ackMessages` changed the ACK policy (the detail says to what).
  case ackPolicy
}

/// One entry of a station's audit trail.
public struct AuditEntry: Sendable, Equatable {
  /// The station's upper-case address.
  public var station: String
  /// When, epoch ms.
  public var at: Int64
  public var action: AuditAction
  /// The client as the limits key it (IPv4 address, IPv6 /64, `unknown`), or `operator`.
  public var client: String
  /// What changed, for people (`blocked, mutedUntil`; `ackPolicy never`); may be empty.
  public var detail: String

  public init(station: String, at: Int64, action: AuditAction, client: String, detail: String = "") {
    self.station = station
    self.at = at
    self.action = action
    self.client = client
    self.detail = detail
  }

  /// The client name of changes made by the operator's command line.
  public static let operatorClient = "operator"
  /// Entries kept per station (the oldest go first).
  public static let keptPerStation = 100
  /// How long an entry is kept at most, ms (a year).
  public static let retentionMs: Int64 = 365 * 86_400_000
}
