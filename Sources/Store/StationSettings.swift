import APRS

/// When the listener ACKs a station's messages (docs/protocol.md "Station settings", `ackPolicy`); stored as its raw
/// value in `stations.ack_policy`, except ``fallback`` (see there).
public enum AckPolicy: String, Sendable, CaseIterable {
  /// ACK a message once it is stored (what register's `ackMessages:true` means).
  case server
  /// ACK a message once one of the station's devices pulled it (sync, long poll, register with history), for
  /// messages pulled within 30 minutes of their arrival (``DeviceAckRule``); a message never pulled is never
  /// ACKed.
  case device
  /// Never ACK (what register's `ackMessages:false` means; a new station's policy).
  case never
  /// ACK a message only when the station's own radio, heard through an igate, did not answer it within
  /// ``StationSettings/fallbackWait`` (docs/design.md "Hearing the station's own radio"). Stored as `server`
  /// with `station_settings.ack_fallback = 1` (sql/024_own_radio.sql): a listener that cannot follow the station
  /// (an older build, a filter without room) ACKs as `server` does, never not at all.
  case fallback

  /// The value `stations.ack_policy` holds for this policy (its CHECK knows `server`, `device`, `never`).
  var storedPolicy: String { self == .fallback ? AckPolicy.server.rawValue : rawValue }
}

/// What is pushed for a message the station's own radio answered (`airAnswered`, policy `fallback`); stored as its
/// raw value in `station_settings.air_answered`.
public enum AirAnswered: String, Sendable, CaseIterable {
  /// A push as for any message.
  case push
  /// A low-priority push without sound (APNs priority 5, FCM normal priority, Web Push `Urgency: low`): the
  /// owner saw it on the radio.
  case quiet
  /// No push; the message is still stored and served.
  case none
}

/// Why a push is held back (``StationSettings/pushHold(from:now:)``).
public enum PushHold: String, Sendable, Equatable {
  /// `mutedUntil` is still ahead.
  case muted
  /// Inside `quietHours`, and the sender is not in `quietBypass`.
  case quietHours
  /// The sender is `blocked`: its message was stored only for the devices the claim does not govern
  /// (``ClaimReach``), and the governed ones are never pushed for it.
  case blocked
}

/// A station's settings (docs/protocol.md "Station settings"), as `POST /v1/settings` answers them and the listener and
/// the push sender apply them. A station without stored settings has ``defaults``.
///
/// Stored beside the station: `ackPolicy` in `stations.ack_policy` (with `stations.ack_messages` kept equal to
/// "policy is server"), the rest in its `station_settings` row (sql/008_station_settings.sql): `blocked`
/// (``CallList`` as text), `muted_until`, `quiet_start` / `quiet_end` / `quiet_utc_offset` (all NULL without quiet
/// hours), `quiet_bypass`, `keyless_devices`, `ssids`, `ack_ssids` (sql/013_all_ssids.sql). Deleted with the station.
public struct StationSettings: Sendable, Equatable {
  /// The largest `mutedUntil` (2^53 − 1: the largest integer every JSON client reads exactly), epoch ms.
  public static let maximumMutedUntil: Int64 = 9_007_199_254_740_991

  /// Senders whose messages are dropped: not stored, not ACKed, not pushed (where the station has keyless devices
  /// from before its claim: stored for those, never pushed to the others; ``ClaimReach``).
  public var blocked: CallList
  /// No push before this time, epoch ms; 0 for none. Messages are still stored (and ACKed per policy).
  public var mutedUntil: Int64
  /// The daily window without pushes, or nil.
  public var quietHours: QuietHours?
  /// Senders pushed even inside the quiet hours (not while muted).
  public var quietBypass: CallList
  /// When messages are ACKed.
  public var ackPolicy: AckPolicy
  /// Whether a claimed station takes devices registered without its key (`keylessDevices`).
  public var keylessDevices: KeylessDevices
  /// Which SSIDs of its call the station collects (`ssids`): ``SSIDSelection/exact`` by default.
  public var ssids: SSIDSelection
  /// The other SSIDs whose messages the server ACKs for the station (`ackSsids`, default none), when the
  /// station collects them, its ``ackPolicy`` allows ACKs, and no station of that exact address is registered
  /// here (its own policy decides then).
  public var ackSsids: SSIDSet
  /// How long messages are kept (`retention`): ``Retention/ring`` by default.
  public var retention: Retention
  /// How long the ACK of a message waits for the station's own radio under ``AckPolicy/fallback``
  /// (`fallbackWait`, s): 20 s by default. Kept while another policy is in force.
  public var fallbackWait: FallbackWait
  /// What is pushed for a message the station's radio answered (`airAnswered`): ``AirAnswered/quiet`` by default.
  public var airAnswered: AirAnswered
  /// Whether what the station's radio or other apps send is stored as `sent` entries (`trackSent`).
  public var trackSent: Bool

  /// Settings; see the properties.
  public init(
    blocked: CallList = .empty, mutedUntil: Int64 = 0, quietHours: QuietHours? = nil,
    quietBypass: CallList = .empty, ackPolicy: AckPolicy = .never, keylessDevices: KeylessDevices = .allow,
    ssids: SSIDSelection = .exact, ackSsids: SSIDSet = .empty, retention: Retention = .ring,
    fallbackWait: FallbackWait = .default, airAnswered: AirAnswered = .quiet, trackSent: Bool = false
  ) {
    self.fallbackWait = fallbackWait
    self.airAnswered = airAnswered
    self.trackSent = trackSent
    self.retention = retention
    self.keylessDevices = keylessDevices
    self.ssids = ssids
    self.ackSsids = ackSsids
    self.blocked = blocked
    self.mutedUntil = mutedUntil
    self.quietHours = quietHours
    self.quietBypass = quietBypass
    self.ackPolicy = ackPolicy
  }

  /// A new station's settings: nothing blocked, not muted, no quiet hours, no bypass, ACKs never.
  public static let defaults = StationSettings()

  /// These settings with `update`'s fields replaced (the fields it leaves nil stay).
  public func applying(_ update: StationSettingsUpdate) -> StationSettings {
    var result = self
    if let blocked = update.blocked { result.blocked = blocked }
    if let mutedUntil = update.mutedUntil { result.mutedUntil = mutedUntil }
    if let quietHours = update.quietHours { result.quietHours = quietHours }
    if let quietBypass = update.quietBypass { result.quietBypass = quietBypass }
    if let ackPolicy = update.ackPolicy { result.ackPolicy = ackPolicy }
    if let keylessDevices = update.keylessDevices { result.keylessDevices = keylessDevices }
    if let ssids = update.ssids { result.ssids = ssids }
    if let ackSsids = update.ackSsids { result.ackSsids = ackSsids }
    if let retention = update.retention { result.retention = retention }
    if let fallbackWait = update.fallbackWait { result.fallbackWait = fallbackWait }
    if let airAnswered = update.airAnswered { result.airAnswered = airAnswered }
    if let trackSent = update.trackSent { result.trackSent = trackSent }
    return result
  }

  /// Whether the listener should follow the station's own transmissions (an exact `b/` entry on its filter):
  /// under ``AckPolicy/fallback`` or with ``trackSent``.
  public var followsOwnTransmissions: Bool { ackPolicy == .fallback || trackSent }

  /// The names of the settings (as /v1/settings spells them) whose values differ between these and `other`, in
  /// the order the answer lists them: what the audit trail records of a change.
  public func changedFields(comparedTo other: StationSettings) -> [String] {
    var fields: [String] = []
    if blocked != other.blocked { fields.append("blocked") }
    if mutedUntil != other.mutedUntil { fields.append("mutedUntil") }
    if quietHours != other.quietHours { fields.append("quietHours") }
    if quietBypass != other.quietBypass { fields.append("quietBypass") }
    if ackPolicy != other.ackPolicy { fields.append("ackPolicy") }
    if keylessDevices != other.keylessDevices { fields.append("keylessDevices") }
    if ssids != other.ssids { fields.append("ssids") }
    if ackSsids != other.ackSsids { fields.append("ackSsids") }
    if retention != other.retention { fields.append("retention") }
    if fallbackWait != other.fallbackWait { fields.append("fallbackWait") }
    if airAnswered != other.airAnswered { fields.append("airAnswered") }
    if trackSent != other.trackSent { fields.append("trackSent") }
    return fields
  }

  /// Whether a message from `sender` (its source call, any case) is dropped.
  public func blocks(_ sender: some StringProtocol) -> Bool { blocked.matches(sender) }

  /// Why a push about a message from `sender` must not go out at `now` (epoch ms), or nil when it may: a blocked
  /// sender, muted until a later time, or inside the quiet hours without the sender in `quietBypass`. Decided when the push
  /// would be sent.
  public func pushHold(from sender: some StringProtocol, now: Int64) -> PushHold? {
    if blocks(sender) { return .blocked }
    if mutedUntil > now { return .muted }
    if let quietHours, quietHours.contains(now), !quietBypass.matches(sender) { return .quietHours }
    return nil
  }

  /// Validates `mutedUntil` (epoch ms, 0 to unmute).
  /// - Throws: ``SettingsError`` for `mutedUntil`.
  public static func validMutedUntil(_ value: Int64) throws(SettingsError) -> Int64 {
    guard (0...maximumMutedUntil).contains(value) else {
      throw SettingsError(
        field: "mutedUntil",
        reason: "must be epoch milliseconds between 0 (not muted) and \(maximumMutedUntil)")
    }
    return value
  }
}

/// A partial update of ``StationSettings`` (`POST /v1/settings`): nil fields stay as they are. Every value is
/// already validated (``CallList/init(validating:field:)``, ``QuietHours/init(start:end:utcOffsetMinutes:field:)``,
/// ``StationSettings/validMutedUntil(_:)``).
public struct StationSettingsUpdate: Sendable, Equatable {
  /// New `blocked`, or nil.
  public var blocked: CallList?
  /// New `mutedUntil`, or nil.
  public var mutedUntil: Int64?
  /// New `quietHours`: `.some(nil)` turns them off, nil leaves them.
  public var quietHours: QuietHours??
  /// New `quietBypass`, or nil.
  public var quietBypass: CallList?
  /// New `ackPolicy`, or nil.
  public var ackPolicy: AckPolicy?
  /// New `keylessDevices`, or nil.
  public var keylessDevices: KeylessDevices?
  /// New `ssids`, or nil.
  public var ssids: SSIDSelection?
  /// New `ackSsids`, or nil.
  public var ackSsids: SSIDSet?
  /// New `retention`, or nil.
  public var retention: Retention?
  /// New `fallbackWait`, or nil.
  public var fallbackWait: FallbackWait?
  /// New `airAnswered`, or nil.
  public var airAnswered: AirAnswered?
  /// New `trackSent`, or nil.
  public var trackSent: Bool?

  /// An update; see the properties.
  public init(
    blocked: CallList? = nil, mutedUntil: Int64? = nil, quietHours: QuietHours?? = nil,
    quietBypass: CallList? = nil, ackPolicy: AckPolicy? = nil, keylessDevices: KeylessDevices? = nil,
    ssids: SSIDSelection? = nil, ackSsids: SSIDSet? = nil, retention: Retention? = nil,
    fallbackWait: FallbackWait? = nil, airAnswered: AirAnswered? = nil, trackSent: Bool? = nil
  ) {
    self.fallbackWait = fallbackWait
    self.airAnswered = airAnswered
    self.trackSent = trackSent
    self.retention = retention
    self.keylessDevices = keylessDevices
    self.ssids = ssids
    self.ackSsids = ackSsids
    self.blocked = blocked
    self.mutedUntil = mutedUntil
    self.quietHours = quietHours
    self.quietBypass = quietBypass
    self.ackPolicy = ackPolicy
  }

  /// Whether it changes nothing (a read of the settings).
  public var isEmpty: Bool {
    blocked == nil && mutedUntil == nil && quietHours == nil && quietBypass == nil && ackPolicy == nil
      && keylessDevices == nil && ssids == nil && ackSsids == nil && retention == nil && fallbackWait == nil
      && airAnswered == nil && trackSent == nil
  }
}
