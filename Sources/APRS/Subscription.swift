/// One subscription of a station (docs/protocol.md "Opt-in answers", setting `subscriptions`): traffic that is not a
/// message to the station itself, stored as an entry of its own type and pushed at low priority. Pure value;
/// what matches it is decided by ``SubscriptionMatcher`` and, for watches, ``WatchTracker``.
public struct Subscription: Hashable, Sendable {
  /// The most subscriptions one station may hold.
  public static let maximumPerStation = 20

  /// Assigned by the server when the subscription is added (`s` + 1–8 base-36 digits); stable while it exists.
  public var id: String
  /// What is subscribed to.
  public var rule: SubscriptionRule
  /// Pushed also inside quiet hours and while muted (`bypass:true`). Emergencies of a watch bypass quiet hours
  /// always (not mute).
  public var bypass: Bool

  public init(id: String, rule: SubscriptionRule, bypass: Bool = false) {
    self.id = id
    self.rule = rule
    self.bypass = bypass
  }

  /// The rule's kind.
  public var kind: SubscriptionKind { rule.kind }
}

/// The kinds of subscription, as the wire and the stored entries' `type` name them.
public enum SubscriptionKind: String, Hashable, Sendable, CaseIterable {
  /// Bulletins and announcements (`BLN…`).
  case bulletin
  /// Messages to a tactical, group or net call.
  case group
  /// NWS, SKY, CWA and BOM messages naming a zone.
  case nws
  /// A station heard, silent, or in an emergency.
  case watch
  /// A group of a net service (ANSRVR, CQSRVR) the station is a member of: the service's fan-out and answers
  /// become the entries of its room (``NetRule``).
  case net
}

/// What a subscription matches.
public enum SubscriptionRule: Hashable, Sendable {
  /// Bulletins and announcements whose addressee matches the pattern (`BLN*`, `BLN?WX`).
  case bulletin(BulletinPattern)
  /// Messages to this call (upper case, `CALL-0` as `CALL`), from anyone.
  case group(call: String)
  /// Weather messages whose zone list names one of these zones (canonical, ``NWSZones``: `OHC081`, `PAC125`,
  /// the BOM `TAS_MW002`), and the lines that continue them (``WeatherAlertIdentity``).
  case nws(zones: Set<String>)
  /// A watched station.
  case watch(WatchRule)
  /// A net membership.
  case net(NetRule)

  public var kind: SubscriptionKind {
    switch self {
    case .bulletin: .bulletin
    case .group: .group
    case .nws: .nws
    case .watch: .watch
    case .net: .net
    }
  }
}

/// A watched call and what to report about it.
public struct WatchRule: Hashable, Sendable {
  /// The longest `heardAfter` and `silentFor`: 30 days (s).
  public static let maximumSeconds = 30 * 86_400
  /// The shortest: 5 minutes (s). Shorter would push on every beacon of a station beaconing every few minutes.
  public static let minimumSeconds = 300

  /// The watched station (upper case, exact SSID; `CALL-0` as `CALL`).
  public var call: String
  /// Push when the call is heard after at least this much silence (s); nil: never.
  public var heardAfter: Int?
  /// Push once when the call has been silent this long (s); nil: never.
  public var silentFor: Int?
  /// Push when the call reports an emergency: the Mic-E code, or `EMERGENCY` anywhere in a packet; a repeat
  /// within ``WatchTracker/emergencyWindowMs`` is the same one.
  public var emergency: Bool

  public init(call: String, heardAfter: Int? = nil, silentFor: Int? = nil, emergency: Bool = false) {
    self.call = call
    self.heardAfter = heardAfter
    self.silentFor = silentFor
    self.emergency = emergency
  }
}
