import APRS

/// What makes a stored entry a subscription entry (`sql/016_subscription_entries.sql`): the kind of the
/// subscription it matched (its wire `type`), that subscription's id, and for a watch what happened and where.
/// Only requests with `want:["subscriptions"]` (``Wants/subscriptions``) see such entries.
public struct SubscriptionEntry: Sendable, Hashable {
  /// The subscription's kind: the entry's `type` (`bulletin`, `group`, `nws`, `watch`).
  public var kind: SubscriptionKind
  /// The id of the subscription it matched (the first, when several of the station's did).
  public var subscription: String
  /// For a watch: what it reports; nil for the other kinds.
  public var event: WatchEventName?
  /// The position the packet reported (degrees, north positive), when it had one.
  public var latitude: Double?
  /// The position the packet reported (degrees, east positive), when it had one.
  public var longitude: Double?
  /// For a net's entry (kind ``SubscriptionKind/net``): its room (`messages.room`). Only requests with
  /// `want:["rooms"]` (``Wants/rooms``) see such entries.
  public var room: NetRoom?

  public init(
    kind: SubscriptionKind, subscription: String, event: WatchEventName? = nil, latitude: Double? = nil,
    longitude: Double? = nil, room: NetRoom? = nil
  ) {
    self.kind = kind
    self.subscription = subscription
    self.event = event
    self.latitude = latitude
    self.longitude = longitude
    self.room = room
  }

  /// A room entry of `room`, matched by the net subscription `subscription`.
  public static func room(_ room: NetRoom, subscription: String) -> SubscriptionEntry {
    SubscriptionEntry(kind: .net, subscription: subscription, room: room)
  }

  /// The kind `messages.kind` stores: a net's entry is stored as `group` with its room beside (sql/025_nets.sql:
  /// the column's CHECK stays as it was).
  public var storedKind: SubscriptionKind { kind == .net ? .group : kind }

  /// Whether its push goes out at once at high priority and through quiet hours (not through a mute): a watched
  /// station's emergency. Every other subscription entry is pushed at low priority.
  public var isUrgent: Bool { event == .emergency }
}

/// What a watch entry reports, as stored (`messages.event`) and shown (`event`).
public enum WatchEventName: String, Sendable, Hashable, CaseIterable {
  /// Heard again after at least `heardAfter` s of silence.
  case heard
  /// Silent for `silentFor` s.
  case silent
  /// Reported an emergency (the Mic-E code, or `EMERGENCY` anywhere in a packet), once per window.
  case emergency
}

/// The rings a station's entries are kept in, each trimmed to the ring size on its own (`messages.ring`): what
/// clients that did not ask for an opt-in see is never pushed out by entries they do not see.
public enum EntryRing: Int, Sendable, CaseIterable {
  /// Messages to the station itself: what every client sees.
  case direct = 0
  /// Messages to other SSIDs of its call (`want:["ssids"]`).
  case otherSSIDs = 1
  /// Subscription entries (`want:["subscriptions"]`).
  case subscriptions = 2
  /// Room entries (`want:["rooms"]`): stored with the subscription ring's number, seen and trimmed as a ring of
  /// their own (``Database/roomRingFactor`` times the ring size). The store's queries read it as
  /// `messages.ring + (messages.room IS NOT NULL)`.
  case rooms = 3

  /// The ring number its rows are stored with (`messages.ring`): room entries carry the subscription ring's (and
  /// `room`).
  public var storedRing: EntryRing { self == .rooms ? .subscriptions : self }

  /// The ring an entry with these fields is seen in.
  public static func of(to: String?, entry: SubscriptionEntry?) -> EntryRing {
    guard let entry else { return to != nil ? .otherSSIDs : .direct }
    return entry.room != nil ? .rooms : .subscriptions
  }
}

extension Wants {
  /// The rings a request with these wants sees, as a bit mask over ``EntryRing`` raw values (bit `1 << ring`):
  /// what the store's queries bind.
  public var ringMask: Int {
    var mask = 1 << EntryRing.direct.rawValue
    if contains(.ssids) { mask |= 1 << EntryRing.otherSSIDs.rawValue }
    if contains(.subscriptions) { mask |= 1 << EntryRing.subscriptions.rawValue }
    if contains(.rooms) { mask |= 1 << EntryRing.rooms.rawValue }
    return mask
  }
}
