/// A subscription of a served station, as the listener matches traffic against it.
public struct SubscriptionMatch: Hashable, Sendable {
  /// The subscribing station (canonical address).
  public var station: String
  /// The subscription (the station's first that matched).
  public var subscription: Subscription

  public init(station: String, subscription: Subscription) {
    self.station = station
    self.subscription = subscription
  }
}

/// Every live station's subscriptions, arranged for routing and for the filter (pure; the listener rebuilds it
/// when a subscription changes). Empty, every lookup is one check, so a server without subscriptions pays
/// nothing per line.
///
/// - ``matches(_:)``: the stations whose subscriptions a message-format packet matches, each once (its first
///   matching subscription, ``SubscriptionMatcher``): bulletins and NWS by scanning the few such subscriptions,
///   groups by their call.
/// - ``watches(of:)``: whether any station watches the sender of a packet (any packet: positions, status, …).
/// - ``filterEntries(budget:)``: what the `#filter` line needs: `g/` entries for bulletins (`BLN*`, or the
///   pattern's literal prefix with `*`, or an exact addressee), group calls, the weather servers' addressees
///   (`NWS*`, `SKY*`, `CWA*`, `BOM*`, only when someone subscribes to a zone), and `b/` entries for watched calls;
///   widened to fit (``FilterEntryFit``).
public struct SubscriptionIndex: Sendable, Equatable {
  /// The addressee prefixes of weather alerts (``PacketKind/weather``), as `g/` entries.
  public static let weatherEntries = ["BOM*", "CWA*", "NWS*", "SKY*"]

  /// Bulletin and NWS subscriptions of each station, in station order (few; scanned for each such packet).
  private var scanned: [ScannedStation] = []
  /// Group subscriptions by call: the stations, each with its first subscription to it.
  private var groups: [String: [SubscriptionMatch]] = [:]
  /// Watched calls (canonical), with who watches them.
  private var watched: [String: [SubscriptionMatch]] = [:]
  /// Net memberships by station, then room: the subscription (the station's first to the room).
  private var nets: [String: [NetRoom: SubscriptionMatch]] = [:]
  /// The subscriptions indexed.
  public private(set) var count = 0
  /// Whether any station subscribes to a zone (NWS): only then can a weather line continue a stored alert.
  public private(set) var hasZones = false

  /// No subscriptions.
  public static let empty = SubscriptionIndex()

  /// The index of `subscriptions` (station addresses canonical, as the store lists them), in station order.
  public init(_ subscriptions: [(station: String, Subscription)] = []) {
    var scannedLists: [String: [Subscription]] = [:]
    for (station, subscription) in subscriptions {
      count += 1
      let match = SubscriptionMatch(station: station, subscription: subscription)
      switch subscription.rule {
      case .bulletin: scannedLists[station, default: []].append(subscription)
      case .nws:
        hasZones = true
        scannedLists[station, default: []].append(subscription)
      case .group(let call):
        if !(groups[call] ?? []).contains(where: { $0.station == station }) {
          groups[call, default: []].append(match)
        }
      case .watch(let rule): watched[rule.call, default: []].append(match)
      case .net(let rule):
        let room = rule.room
        if nets[station]?[room] == nil { nets[station, default: [:]][room] = match }
      }
    }
    scanned = scannedLists.keys.sorted().map {
      ScannedStation(station: $0, matcher: SubscriptionMatcher(scannedLists[$0] ?? []))
    }
  }

  /// One station's bulletin and NWS subscriptions.
  private struct ScannedStation: Sendable, Equatable {
    var station: String
    var matcher: SubscriptionMatcher
  }

  /// Whether no station subscribes to anything.
  public var isEmpty: Bool { count == 0 }

  /// The stations whose subscriptions `message` matches, each once with its first matching subscription, in
  /// station order. Only bulletins, announcements, weather and plain messages can match.
  public func matches(_ message: AddressedPacket) -> [SubscriptionMatch] {
    guard !isEmpty else { return [] }
    switch message.kind {
    case .message:
      return groups[message.addressee] ?? []
    case .bulletin, .announcement, .weather:
      var found: [SubscriptionMatch] = []
      for entry in scanned {
        if let first = entry.matcher.matches(message).first {
          found.append(SubscriptionMatch(station: entry.station, subscription: first))
        }
      }
      return found
    default:
      return []
    }
  }

  /// The watches of `source` (a packet's sender, any case; `CALL-0` is `CALL`): each station's watch
  /// subscriptions of that call.
  public func watches(of source: String) -> [SubscriptionMatch] {
    guard !watched.isEmpty else { return [] }
    return watched[StationAddress.canonical(source)] ?? []
  }

  /// The net subscription by which `station` (canonical) is a member of `room`, nil when it is none.
  public func membership(of station: String, in room: NetRoom) -> SubscriptionMatch? {
    guard !nets.isEmpty else { return nil }
    return nets[station]?[room]
  }

  /// Whether any station is a member of some net (the router then reads messages to members for fan-out).
  public var hasNets: Bool { !nets.isEmpty }

  /// Whether any station watches some call (the router then reads every packet's sender).
  public var hasWatches: Bool { !watched.isEmpty }

  /// The `g/` (``FilterLine`` addressees) and `b/` (senders) entries the subscriptions need, together within
  /// `budget` bytes (Σ entry + 1): the `g/` entries take their share first (bulletins, weather and group calls are
  /// what most subscriptions are), widened as needed; the `b/` entries are exact calls, never widened (a `b/`
  /// prefix lets every packet of every matching sender through, toward the whole feed): the calls watched by the
  /// most subscriptions first, and those that do not fit are left out (`unwatched`: their watches see only what
  /// the filter brings anyway). Sorted.
  public func filterEntries(budget: Int) -> (addressees: [String], senders: [String], unwatched: [String]) {
    guard !isEmpty, budget > 0 else { return ([], [], []) }
    var addressees = Set(groups.keys)
    for entry in scanned {
      for subscription in entry.matcher.subscriptions {
        switch subscription.rule {
        case .bulletin(let pattern):
          addressees.insert(pattern.isExact ? pattern.text : pattern.literalPrefix + "*")
        case .nws: addressees.formUnion(Self.weatherEntries)
        case .group, .watch, .net: break
        }
      }
    }
    let senders = Set(watched.keys)
    let wanted = FilterEntryFit.bytes(addressees) + FilterEntryFit.bytes(senders)
    // Each side gets its share of the budget, in proportion to what it asks for.
    let addresseeBudget =
      wanted <= budget ? budget : budget * FilterEntryFit.bytes(addressees) / max(1, wanted)
    let fittedAddressees = FilterEntryFit.fit(addressees, budget: addresseeBudget)
    let ranked = senders.sorted {
      let (left, right) = (watched[$0]?.count ?? 0, watched[$1]?.count ?? 0)
      return left != right ? left > right : $0 < $1
    }
    let fittedSenders = FilterEntryFit.fitExact(
      ranked, budget: budget - FilterEntryFit.bytes(fittedAddressees))
    return (fittedAddressees, fittedSenders.kept, fittedSenders.leftOut)
  }
}
