/// Whether a station is claimed (docs/protocol.md "Owned stations"), as `Database.stationClaim(_:)` reads it.
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

/// How far a claim is proven (`stations.claim_proof`; docs/design.md "Who may do what").
public enum ClaimProof: String, Sendable, CaseIterable {
  /// First-come on a station nobody used, or confirmed by a code pushed to a device the station already had, or
  /// approved by the operator: the claim governs the station.
  case proven
  /// Made before claims were proven (first-come on any station): it governs the station, and a device older than
  /// the claim may take the station back.
  case unproven
  /// Made while the station was in use and not confirmed yet: the key works, but the claim changes nothing for
  /// the station's other devices; it waits for a code or the operator.
  case provisional

  /// Whether the claim's key may change what the station's other devices receive (settings, sending, wiping).
  public var governs: Bool { self != .provisional }
}

/// A station's claim as stored on its row (`stations.claim_key_hash`, `claimed_at`, `claim_refreshed_at`,
/// `claim_proof`, `claim_seniority`, `claim_replaced_hash`).
public struct StationClaim: Sendable, Equatable {
  /// The SHA-256 of the station key's text, lower-case hex (64 characters). The key itself is never stored.
  public var keyHash: String
  /// When the station was claimed, epoch ms (a rotation keeps it).
  public var claimedAt: Int64
  /// The last claim, rotation, or request made with the key (register and heartbeat always, any other at most
  /// once an hour), epoch ms: the claim lapses when this is older than the station expiry.
  public var refreshedAt: Int64
  /// How far the claim is proven.
  public var proof: ClaimProof
  /// A device registered before this time (epoch ms) may take the station back with a code pushed to it: the
  /// registration time of the device that proved the claim, the claim's own time for a first-come or older claim,
  /// 0 once the operator approved it.
  public var seniority: Int64
  /// The key hash of the claim this one took the station back from, if it did (that key's 401 says so).
  public var replacedKeyHash: String?

  public init(
    keyHash: String, claimedAt: Int64, refreshedAt: Int64, proof: ClaimProof = .proven,
    seniority: Int64? = nil,
    replacedKeyHash: String? = nil
  ) {
    self.keyHash = keyHash
    self.claimedAt = claimedAt
    self.refreshedAt = refreshedAt
    self.proof = proof
    self.seniority = seniority ?? claimedAt
    self.replacedKeyHash = replacedKeyHash
  }
}

/// A claim waiting for its proof (`claim_requests`): the station's provisional claim, or one that would take the
/// station back from a provisional, unproven or younger claim.
public struct ClaimRequest: Sendable, Equatable {
  /// The station's upper-case address.
  public var station: String
  /// The SHA-256 of the requesting key, lower-case hex.
  public var keyHash: String
  /// When it was asked for, epoch ms.
  public var requestedAt: Int64
  /// Codes go to the station's devices registered before this time, epoch ms.
  public var seniority: Int64
  /// The requesting client as the limits key it.
  public var client: String
  /// Whether a round of codes is waiting for the push sender.
  public var codesDue: Bool
  /// Rounds of codes pushed so far (at most ``roundsPerRequest``).
  public var codesPushed: Int
  /// When the current round's codes stop working, epoch ms; nil before the first round.
  public var codesExpireAt: Int64?
  /// Wrong codes entered in the current round (``wrongCodesAllowed`` void it).
  public var wrong: Int

  public init(
    station: String, keyHash: String, requestedAt: Int64, seniority: Int64, client: String,
    codesDue: Bool = true,
    codesPushed: Int = 0, codesExpireAt: Int64? = nil, wrong: Int = 0
  ) {
    self.station = station
    self.keyHash = keyHash
    self.requestedAt = requestedAt
    self.seniority = seniority
    self.client = client
    self.codesDue = codesDue
    self.codesPushed = codesPushed
    self.codesExpireAt = codesExpireAt
    self.wrong = wrong
  }

  /// How long a round of codes works, ms (10 minutes).
  public static let codeLifetimeMs: Int64 = 10 * 60_000
  /// Rounds of codes one request may have pushed (the first and two resends).
  public static let roundsPerRequest = 3
  /// Wrong codes that void a round.
  public static let wrongCodesAllowed = 5
  /// Requests waiting at once per station; a further one replaces the same client's oldest, else one whose codes
  /// expired, else it is refused.
  public static let pendingPerStation = 3
  /// Rounds of codes pushed to one station's devices per day, whatever asks (so nobody floods its phone); counted
  /// in fixed windows, so at most twice as many in any 24 hours.
  public static let roundsPerStationPerDay = 12
  /// Rounds of codes one client (IPv4 address, IPv6 /64) may have pushed to one station's devices per day, so one
  /// client cannot spend the station's rounds and keep the real user from taking it back.
  public static let roundsPerClientPerDay = 3
  /// The window ``roundsPerStationPerDay`` is counted in, ms (a day).
  public static let roundWindowMs: Int64 = 86_400_000
  /// A station made less than this long before a claim counts as not in use yet, ms (10 minutes): the claimant's
  /// own register before its claim, as the web client makes it, does not make its claim provisional.
  public static let graceMs: Int64 = 10 * 60_000
}

/// One code of a round, as stored (`claim_codes`): never the code, only its salted hash.
public struct ClaimCode: Sendable, Equatable {
  /// The device it was pushed to.
  public var token: String
  /// That device's registration time, epoch ms: the proof's seniority should this code be entered.
  public var registeredAt: Int64
  /// 32 lower-case hex characters of random salt.
  public var salt: String
  /// Lower-case hex HMAC-SHA256 under the salt's text of the code's digits.
  public var codeHash: String

  public init(token: String, registeredAt: Int64, salt: String, codeHash: String) {
    self.token = token
    self.registeredAt = registeredAt
    self.salt = salt
    self.codeHash = codeHash
  }
}

/// What `Database.proveClaim` did.
public enum ProofOutcome: Sendable, Equatable {
  /// The station's own provisional (or unproven) claim is proven now.
  case proven
  /// The request's key holds the station now; the claim of `previousKeyHash` is gone.
  case replaced(previousKeyHash: String)
  /// The request is gone (released, replaced, the station unregistered): nothing changed.
  case gone
}

/// What `Database.claimStation` did.
public enum ClaimOutcome: Sendable, Equatable {
  /// The station is now claimed with the given key hash, at this time (epoch ms), proven or provisional.
  case claimed(at: Int64, proof: ClaimProof)
  /// It was claimed already: nothing changed (the API's 409).
  case alreadyClaimed
  /// No station is stored under the address.
  case unregistered
  /// The station had its rounds of codes today (``ClaimRequest/roundsPerStationPerDay``); retry after this, ms.
  case codesLimited(retryAfterMs: Int64)
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
  /// A code pushed to one of the station's devices, or the operator, proved a claim.
  case proven
  /// A proven claim took the station back from another claim (the detail says from which client it came).
  case replaced
  /// A net sent something on air for the station: a join, a renewal, a leave or a post (the detail names the
  /// room and what).
  case net
  /// A bulletin or announcement was sent or cancelled (the detail names its addressee).
  case bulletin
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
