import APRS

/// A subscription as a client asks for it: its rule, and the id of the one it keeps (nil for a new one).
public struct SubscriptionDraft: Sendable, Equatable {
  public var id: String?
  public var rule: SubscriptionRule
  public var bypass: Bool

  public init(id: String? = nil, rule: SubscriptionRule, bypass: Bool = false) {
    self.id = id
    self.rule = rule
    self.bypass = bypass
  }
}

/// The stations' subscriptions (`sql/015_subscriptions.sql`).
extension Database {
  /// A station's subscriptions, in the order given.
  public func subscriptions(of station: String) throws(StoreError) -> [Subscription] {
    let statement = try prepared(
      """
      SELECT id, kind, target, heard_after, silent_for, emergency, bypass, net_join, net_text, net_renew,
             net_digest
      FROM subscriptions WHERE station = ?1 ORDER BY position
      """)
    defer { statement.reset() }
    try statement.bind(1, station.canonicalAddress)
    var found: [Subscription] = []
    while try statement.step() {
      // A row edited by hand into something unreadable subscribes to nothing.
      if let subscription = Self.subscription(statement) { found.append(subscription) }
    }
    return found
  }

  /// Replaces a station's subscriptions with `drafts` (at most ``Subscription/maximumPerStation``): a draft with
  /// the id of one it has keeps that id (and what the listener knows of it, such as a watch's state); the others
  /// get new ids. Watches keep their states, new ones start at `now`; the entries of a kind no longer subscribed
  /// to are deleted (``settleSubscriptionChanges(of:subscriptions:now:)``). Returns the stored list; nil when
  /// the station is not registered.
  /// With `adoptingIds` (an import: ``importStation(_:now:)``) an id the station does not have yet is taken as
  /// given instead of refused.
  /// - Throws: ``StoreError/invalidArgument(_:)`` for more than the maximum, or an id the station does not have.
  public func replaceSubscriptions(
    of station: String, with drafts: [SubscriptionDraft], now: Int64, adoptingIds: Bool = false
  ) throws(StoreError) -> [Subscription]? {
    let address = station.canonicalAddress
    guard drafts.count <= Subscription.maximumPerStation else {
      throw .invalidArgument("at most \(Subscription.maximumPerStation) subscriptions")
    }
    return try writeBatch { () throws(StoreError) -> [Subscription]? in
      guard try hasStation(address) else { return nil }
      let existing = Set(try subscriptions(of: address).map(\.id))
      for draft in drafts {
        if let id = draft.id, !existing.contains(id), !adoptingIds {
          throw .invalidArgument("no subscription \(id)")
        }
      }
      let clear = try prepared("DELETE FROM subscriptions WHERE station = ?1")
      do {
        defer { clear.reset() }
        try clear.bind(1, address)
        try clear.run()
      }
      let insert = try prepared(
        """
        INSERT INTO subscriptions (station, id, position, kind, target, heard_after, silent_for, emergency, bypass,
          created_at, net_join, net_text, net_renew, net_digest)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
        """)
      var used = Set(drafts.compactMap(\.id))
      var serial = 0
      for (position, draft) in drafts.enumerated() {
        var id = draft.id ?? ""
        while id.isEmpty || (draft.id == nil && used.contains(id)) {
          id = "s" + String(now, radix: 36) + String(serial, radix: 36)
          serial += 1
        }
        used.insert(id)
        let (kind, target, watch) = Self.columns(of: draft.rule)
        defer { insert.reset() }
        try insert.bind(1, address)
        try insert.bind(2, id)
        try insert.bind(3, position)
        try insert.bind(4, kind.rawValue)
        try insert.bind(5, target)
        try insert.bind(6, watch?.heardAfter)
        try insert.bind(7, watch?.silentFor)
        try insert.bind(8, watch?.emergency ?? false)
        try insert.bind(9, draft.bypass)
        try insert.bind(10, now)
        let net: NetRule? = if case .net(let rule) = draft.rule { rule } else { nil }
        try insert.bind(11, net?.join.rawValue)
        try insert.bind(12, net?.text)
        try insert.bind(13, net?.renew ?? false)
        try insert.bind(14, net?.digestSeconds)
        try insert.run()
      }
      let stored = try subscriptions(of: address)
      try settleSubscriptionChanges(of: address, subscriptions: stored, now: now)
      return stored
    }
  }

  /// The stored columns of a rule: kind, target, and the watch's numbers.
  private static func columns(of rule: SubscriptionRule) -> (SubscriptionKind, String, WatchRule?) {
    switch rule {
    case .bulletin(let pattern): (.bulletin, pattern.text, nil)
    case .group(let call): (.group, call, nil)
    case .nws(let zones): (.nws, zones.sorted().joined(separator: " "), nil)
    case .watch(let watch): (.watch, watch.call, watch)
    case .net(let net): (.net, net.room.description, nil)
    }
  }

  /// Reads one row of `SELECT id, kind, target, heard_after, silent_for, emergency, bypass, net_join, net_text,
  /// net_renew, net_digest`, those columns from `first` on.
  static func subscription(_ row: Statement, from first: Int32 = 0) -> Subscription? {
    let target = row.text(first + 2)
    let rule: SubscriptionRule
    switch row.optionalValue(first + 1, as: SubscriptionKind.self) {
    case .bulletin:
      guard let pattern = try? BulletinPattern(target) else { return nil }
      rule = .bulletin(pattern)
    case .group: rule = .group(call: target)
    case .nws:
      let zones = Set(target.split(separator: " ").map(String.init).filter(NWSZones.isZone))
      guard !zones.isEmpty else { return nil }
      rule = .nws(zones: zones)
    case .watch:
      rule = .watch(
        WatchRule(
          call: target, heardAfter: row.optionalInt64(first + 3).map { Int($0) },
          silentFor: row.optionalInt64(first + 4).map { Int($0) }, emergency: row.bool(first + 5)))
    case .net:
      guard let room = NetRoom(target), let join = row.optionalValue(first + 7, as: NetRule.Join.self) else {
        return nil
      }
      rule = .net(
        NetRule(
          service: room.service, group: room.group, join: join, text: row.optionalText(first + 8),
          renew: row.bool(first + 9),
          digestSeconds: Int(row.optionalInt64(first + 10) ?? Int64(NetRule.defaultDigestSeconds))))
    case nil: return nil
    }
    return Subscription(id: row.text(first + 0), rule: rule, bypass: row.bool(first + 6))
  }
}
