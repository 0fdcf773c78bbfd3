import APRS

/// What settling a station's nets did (``Database/settleNets(_:before:after:limits:client:now:)``).
public enum NetSettlement: Sendable, Equatable {
  /// Every join and leave is on its way (the rooms joined and left, in order).
  case settled(joined: [NetRoom], left: [NetRoom])
  /// The send limits refused the join of `room` (the caller rolls the whole change back and answers 429).
  case refused(room: NetRoom, SendCreation)
  /// A join by post inside the service's least time between posts since the station's last post to the room
  /// (ms to wait; the caller rolls back and answers 429).
  case tooSoon(room: NetRoom, retryAfterMs: Int64)
}

/// One membership the listener renews now (``Database/dueNetRenewals(now:activeSince:)``).
public struct NetRenewal: Sendable, Equatable {
  /// The member (canonical).
  public var station: String
  /// The net subscription.
  public var subscription: Subscription
  /// Its rule.
  public var rule: NetRule
}

/// Nets and rooms (sql/025_nets.sql, docs/protocol.md "Nets and rooms"): a station's memberships, joined, renewed
/// and left through its own sends (`createSend`: the send limits, the transmit budget and the retries until the
/// service ACKs apply to them as to any message), and the bookkeeping of its room posts and digest pushes.
extension Database {
  /// How long before a membership lapses the listener renews it (ms): an hour, so a renewal retried for its
  /// whole schedule still lands in time.
  public static let netRenewMarginMs: Int64 = 3_600_000
  /// How recently a member must have been active (a register, heartbeat or sync) for its membership to be
  /// renewed (ms): a day. A phone nobody opened for a day lets its nets lapse.
  public static let netActiveWindowMs: Int64 = 86_400_000

  /// The limits of a leave: none refuses it (stopping never hurts, and each leave follows a join that was
  /// limited), but it is counted in every window as a send.
  static let leaveLimits = SendLimits(
    perMinute: .max / 4, inFlight: .max / 4, perAddressPerMinute: .max / 4, globalPerMinute: .max / 4)

  /// Joins the nets `after` has and `before` had not, and leaves those `before` had and `after` has not, inside
  /// the caller's write transaction (after the subscriptions were stored):
  /// - a join is the rule's ``NetRule/joinText`` sent to the service as the station's send under `limits`; it
  ///   starts (or restarts) the station's membership (`net_memberships`), to be renewed before the service lets it
  ///   lapse when ``NetRule/renew`` is set and the service has a lapse (``NetService/membershipMs``); a `post`
  ///   join counts as a post (the service's least time between posts);
  /// - a leave cancels the room's sends still in flight (a join or renewal that no longer should land) and sends
  ///   the service's leave (``NetService/leaveText(group:)``), never refused by the limits (``leaveLimits``);
  /// - a net kept changes only its renewal (``NetRule/renew`` switched).
  /// Each join and leave writes an audit entry (`net`) under `client`. Returns ``NetSettlement/refused(room:_:)``
  /// as soon as the limits refuse a join, ``NetSettlement/tooSoon(room:retryAfterMs:)`` for a join by post inside
  /// the service's least time between posts (CQSRVR: a leave and a rejoin cannot skip it): the caller must roll
  /// back.
  public func settleNets(
    _ station: String, before: [Subscription], after: [Subscription], limits: SendLimits, client: String,
    now: Int64
  ) throws(StoreError) -> NetSettlement {
    let address = station.canonicalAddress
    let old = Self.netRules(before)
    let new = Self.netRules(after)
    var joined: [NetRoom] = []
    var left: [NetRoom] = []
    for (room, (subscription, rule)) in new.sorted(by: { $0.key.description < $1.key.description }) {
      guard old[room] == nil else {
        try updateRenewal(address, room: room, subscription: subscription.id, rule: rule)
        continue
      }
      guard let text = rule.joinText else { continue }
      if rule.join == .post, let interval = room.service.postIntervalMs,
        let last = try lastPost(address, room: room), now < last + interval
      {
        return .tooSoon(room: room, retryAfterMs: last + interval - now)
      }
      let send = NewSend(
        station: address, addressee: room.service.call, text: text, clientId: nil,
        entry: .room(room, subscription: subscription.id))
      let creation = try createSend(send, limits: limits, now: now)
      guard case .created = creation else { return .refused(room: room, creation) }
      try startMembership(
        address, room: room, subscription: subscription.id, rule: rule, messageID: lastSendID, now: now,
        posted: rule.join == .post)
      try recordAudit(
        AuditEntry(station: address, at: now, action: .net, client: client, detail: "\(room) join: \(text)"))
      joined.append(room)
    }
    for (room, (subscription, _)) in old.sorted(by: { $0.key.description < $1.key.description })
    where new[room] == nil {
      try leave(address, room: room, subscription: subscription.id, client: client, now: now)
      left.append(room)
    }
    return .settled(joined: joined, left: left)
  }

  /// The station's last post to `room` through this server (epoch ms), a member or not any more.
  private func lastPost(_ station: String, room: NetRoom) throws(StoreError) -> Int64? {
    let statement = try prepared("SELECT last_post_at FROM net_memberships WHERE station = ?1 AND room = ?2")
    defer { statement.reset() }
    try statement.bind(1, station)
    try statement.bind(2, room.description)
    return try statement.step() ? statement.optionalInt64(0) : nil
  }

  /// The net subscriptions of a list by room (the first for a room).
  public static func netRules(_ subscriptions: [Subscription]) -> [NetRoom: (Subscription, NetRule)] {
    var rules: [NetRoom: (Subscription, NetRule)] = [:]
    for subscription in subscriptions {
      guard case .net(let rule) = subscription.rule else { continue }
      let room = rule.room
      if rules[room] == nil { rules[room] = (subscription, rule) }
    }
    return rules
  }

  /// The message id of the send `createSend` stored last on this connection.
  private var lastSendID: Int64 {
    get throws(StoreError) {
      let statement = try prepared("SELECT max(message_id) FROM sends")
      defer { statement.reset() }
      guard try statement.step() else { throw .corrupt("no send was stored") }
      return statement.int64(0)
    }
  }

  /// When a membership started at `at` is renewed: its lapse less ``netRenewMarginMs``; nil when it is not
  /// renewed.
  static func renewAt(_ rule: NetRule, from at: Int64) -> Int64? {
    guard rule.renew, let lapse = rule.service.membershipMs else { return nil }
    return at + max(lapse - netRenewMarginMs, lapse / 2)
  }

  private func startMembership(
    _ station: String, room: NetRoom, subscription: String, rule: NetRule, messageID: Int64, now: Int64,
    posted: Bool
  ) throws(StoreError) {
    let statement = try prepared(
      """
      INSERT INTO net_memberships (station, room, subscription, joined_at, join_message_id, renew_at, last_post_at,
        left_at)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, CASE WHEN ?7 THEN ?4 END, NULL)
      ON CONFLICT (station, room) DO UPDATE SET subscription = excluded.subscription,
        joined_at = excluded.joined_at, join_message_id = excluded.join_message_id,
        renew_at = excluded.renew_at, last_post_at = coalesce(excluded.last_post_at, last_post_at), left_at = NULL
      """)
    defer { statement.reset() }
    try statement.bind(1, station)
    try statement.bind(2, room.description)
    try statement.bind(3, subscription)
    try statement.bind(4, now)
    try statement.bind(5, messageID)
    try statement.bind(6, Self.renewAt(rule, from: now))
    try statement.bind(7, posted)
    try statement.run()
  }

  private func updateRenewal(_ station: String, room: NetRoom, subscription: String, rule: NetRule)
    throws(StoreError)
  {
    let statement = try prepared(
      """
      UPDATE net_memberships SET subscription = ?3,
        renew_at = CASE WHEN ?4 IS NULL THEN NULL ELSE coalesce(renew_at, ?4 + joined_at) END
      WHERE station = ?1 AND room = ?2 AND left_at IS NULL
      """)
    defer { statement.reset() }
    try statement.bind(1, station)
    try statement.bind(2, room.description)
    try statement.bind(3, subscription)
    try statement.bind(4, Self.renewAt(rule, from: 0))
    try statement.run()
  }

  private func leave(_ station: String, room: NetRoom, subscription: String, client: String, now: Int64)
    throws(StoreError)
  {
    let pending = try prepared(
      """
      SELECT sends.message_id FROM sends JOIN messages ON messages.id = sends.message_id
      WHERE sends.station = ?1 AND sends.state = 'pending' AND messages.room = ?2
      """)
    var ids: [Int64] = []
    do {
      defer { pending.reset() }
      try pending.bind(1, station)
      try pending.bind(2, room.description)
      while try pending.step() { ids.append(pending.int64(0)) }
    }
    for id in ids { _ = try finishSend(id: id, state: .cancelled, now: now) }
    if let text = room.service.leaveText(group: room.group) {
      let send = NewSend(
        station: station, addressee: room.service.call, text: text, clientId: nil,
        entry: .room(room, subscription: subscription))
      _ = try createSend(send, limits: Self.leaveLimits, now: now)
      try recordAudit(
        AuditEntry(station: station, at: now, action: .net, client: client, detail: "\(room) leave: \(text)"))
    }
    let statement = try prepared(
      """
      INSERT INTO net_memberships (station, room, left_at) VALUES (?1, ?2, ?3)
      ON CONFLICT (station, room) DO UPDATE SET left_at = excluded.left_at, renew_at = NULL, subscription = NULL
      """)
    defer { statement.reset() }
    try statement.bind(1, station)
    try statement.bind(2, room.description)
    try statement.bind(3, now)
    try statement.run()
  }

  // MARK: The listener

  /// The memberships due for renewal at `now` of claimed stations active since `activeSince` (a register,
  /// heartbeat or sync), at most `limit`, oldest due first. A station whose claim ended renews nothing: no key
  /// holder is left to stop it. A membership of a station not active stays due: it
  /// lapses at the service, and is renewed as soon as the station is active again.
  public func dueNetRenewals(now: Int64, activeSince: Int64, limit: Int = 100) throws(StoreError)
    -> [NetRenewal]
  {
    let statement = try prepared(
      """
      SELECT net_memberships.station, subscriptions.id, subscriptions.kind, subscriptions.target,
             subscriptions.heard_after, subscriptions.silent_for, subscriptions.emergency, subscriptions.bypass,
             subscriptions.net_join, subscriptions.net_text, subscriptions.net_renew, subscriptions.net_digest
      FROM net_memberships
      JOIN stations ON stations.address = net_memberships.station
      JOIN subscriptions ON subscriptions.station = net_memberships.station
        AND subscriptions.id = net_memberships.subscription
      WHERE net_memberships.renew_at IS NOT NULL AND net_memberships.renew_at <= ?1
        AND net_memberships.left_at IS NULL AND stations.claim_key_hash IS NOT NULL
        AND max(stations.heartbeat_at, coalesce(stations.last_sync_at, 0)) >= ?2
      ORDER BY net_memberships.renew_at LIMIT ?3
      """)
    defer { statement.reset() }
    try statement.bind(1, now)
    try statement.bind(2, activeSince)
    try statement.bind(3, limit)
    var due: [NetRenewal] = []
    while try statement.step() {
      let station = statement.text(0)
      guard let subscription = Self.subscription(statement, from: 1), case .net(let rule) = subscription.rule
      else { continue }
      due.append(NetRenewal(station: station, subscription: subscription, rule: rule))
    }
    return due
  }

  /// Renews one membership (in ONE write transaction): the service's silent join (or, for a service without one,
  /// nothing: its membership does not lapse) sent as the station's send under `limits`, the membership restarted
  /// at `now`, and an audit entry (`net`, client `listener`). A renewal the limits refuse waits
  /// ``Database/sendRateWindowMs`` and is tried again. Returns the send's creation (nil when nothing was sent).
  @discardableResult
  public func renewNet(_ renewal: NetRenewal, limits: SendLimits, now: Int64) throws(StoreError)
    -> SendCreation?
  {
    let room = renewal.rule.room
    return try writeBatch { () throws(StoreError) -> SendCreation? in
      // Still due and still this subscription's (a leave or a change may have committed since it was read).
      let due = try prepared(
        """
        SELECT 1 FROM net_memberships
        WHERE station = ?1 AND room = ?2 AND subscription = ?3 AND left_at IS NULL AND renew_at <= ?4
        """)
      do {
        defer { due.reset() }
        try due.bind(1, renewal.station)
        try due.bind(2, room.description)
        try due.bind(3, renewal.subscription.id)
        try due.bind(4, now)
        guard try due.step() else { return nil }
      }
      guard let text = room.service.silentJoinText(group: room.group) else {
        try setRenewAt(renewal.station, room: room, nil)
        return nil
      }
      let send = NewSend(
        station: renewal.station, addressee: room.service.call, text: text, clientId: nil,
        entry: .room(room, subscription: renewal.subscription.id))
      let creation = try createSend(send, limits: limits, now: now)
      guard case .created = creation else {
        try setRenewAt(renewal.station, room: room, now + Self.sendRateWindowMs)
        return creation
      }
      try startMembership(
        renewal.station, room: room, subscription: renewal.subscription.id, rule: renewal.rule,
        messageID: try lastSendID, now: now, posted: false)
      try recordAudit(
        AuditEntry(
          station: renewal.station, at: now, action: .net, client: "listener",
          detail: "\(room) renew: \(text)"))
      return creation
    }
  }

  private func setRenewAt(_ station: String, room: NetRoom, _ at: Int64?) throws(StoreError) {
    let statement = try prepared("UPDATE net_memberships SET renew_at = ?3 WHERE station = ?1 AND room = ?2")
    defer { statement.reset() }
    try statement.bind(1, station)
    try statement.bind(2, room.description)
    try statement.bind(3, at)
    try statement.run()
  }

  /// The earliest renewal due, epoch ms; nil when none is (the listener's clock sleeps until then). With
  /// `activeSince`, only memberships of stations active since then (as ``dueNetRenewals(now:activeSince:limit:)``
  /// takes them): a due membership of an inactive station is no event to wake for (it would be due at once, again
  /// and again), and is renewed at the sender's next look after the station is active again.
  public func nextNetRenewal(activeSince: Int64? = nil) throws(StoreError) -> Int64? {
    let statement = try prepared(
      """
      SELECT min(net_memberships.renew_at) FROM net_memberships
      JOIN stations ON stations.address = net_memberships.station
      JOIN subscriptions ON subscriptions.station = net_memberships.station
        AND subscriptions.id = net_memberships.subscription
      WHERE net_memberships.renew_at IS NOT NULL AND net_memberships.left_at IS NULL
        AND stations.claim_key_hash IS NOT NULL
        AND (?1 IS NULL OR max(stations.heartbeat_at, coalesce(stations.last_sync_at, 0)) >= ?1)
      """)
    defer { statement.reset() }
    try statement.bind(1, activeSince)
    guard try statement.step() else { return nil }
    return statement.optionalInt64(0)
  }

  /// A station's membership of `room`, as the API shows it: when it joined (its last join or renewal), when it is
  /// renewed, and the state of that join's send; nil when it is not a member.
  public func netMembership(of station: String, room: NetRoom) throws(StoreError) -> NetMembership? {
    let statement = try prepared(
      """
      SELECT net_memberships.joined_at, net_memberships.renew_at, sends.state, net_memberships.last_post_at
      FROM net_memberships LEFT JOIN sends ON sends.message_id = net_memberships.join_message_id
      WHERE net_memberships.station = ?1 AND net_memberships.room = ?2 AND net_memberships.left_at IS NULL
        AND net_memberships.joined_at IS NOT NULL
      """)
    defer { statement.reset() }
    try statement.bind(1, station.canonicalAddress)
    try statement.bind(2, room.description)
    guard try statement.step() else { return nil }
    return NetMembership(
      joinedAt: statement.optionalInt64(0), renewAt: statement.optionalInt64(1),
      joinState: statement.optionalValue(2, as: SendState.self), lastPostAt: statement.optionalInt64(3))
  }
}

/// A station's membership of a room (``Database/netMembership(of:room:)``).
public struct NetMembership: Sendable, Equatable {
  /// When the last join or renewal was accepted (epoch ms).
  public var joinedAt: Int64?
  /// When the listener renews it (epoch ms); nil: not renewed.
  public var renewAt: Int64?
  /// Where the last join's or renewal's send stands (`acked`: the service has it).
  public var joinState: SendState?
  /// The station's last post to the room through this server (epoch ms).
  public var lastPostAt: Int64?

  public init(joinedAt: Int64?, renewAt: Int64?, joinState: SendState?, lastPostAt: Int64?) {
    self.joinedAt = joinedAt
    self.renewAt = renewAt
    self.joinState = joinState
    self.lastPostAt = lastPostAt
  }
}

/// What ``Database/createRoomPost(_:room:limits:client:now:)`` did.
public enum RoomPostCreation: Sendable, Equatable {
  /// The post is a send on its way (or the replay of one with the same `clientId`).
  case sent(SendCreation)
  /// The station is no member of the room (no net subscription of it).
  case notMember
  /// The service's least time between posts has not passed since the station's last post (ms to wait).
  case tooSoon(retryAfterMs: Int64)
}

extension Database {
  /// Posts `send` (its text already the service's post, ``NetService/postText(group:text:)``) to `room` in ONE
  /// write transaction: the station must be a member; the service's least time between posts
  /// (``NetService/postIntervalMs``: CQSRVR's 30 minutes) must have passed since its last post through this server
  /// (a join by post counts); then it is a send under `limits` like any other, shown as the room's `sent` entry,
  /// its time recorded and an audit entry (`net`) written under `client`.
  public func createRoomPost(_ send: NewSend, room: NetRoom, limits: SendLimits, client: String, now: Int64)
    throws(StoreError) -> RoomPostCreation
  {
    let station = send.station.canonicalAddress
    return try writeBatch { () throws(StoreError) -> RoomPostCreation in
      guard let member = Self.netRules(try subscriptions(of: station))[room] else { return .notMember }
      if let interval = room.service.postIntervalMs, let last = try lastPost(station, room: room),
        now < last + interval
      {
        if let clientId = send.clientId, try sendID(station: station, clientId: clientId) != nil {
          return .sent(try createSend(send, limits: limits, now: now))
        }
        return .tooSoon(retryAfterMs: last + interval - now)
      }
      var post = send
      post.entry = .room(room, subscription: member.0.id)
      let creation = try createSend(post, limits: limits, now: now)
      guard case .created = creation else { return .sent(creation) }
      let statement = try prepared(
        """
        INSERT INTO net_memberships (station, room, subscription, last_post_at) VALUES (?1, ?2, ?3, ?4)
        ON CONFLICT (station, room) DO UPDATE SET last_post_at = excluded.last_post_at
        """)
      do {
        defer { statement.reset() }
        try statement.bind(1, station)
        try statement.bind(2, room.description)
        try statement.bind(3, member.0.id)
        try statement.bind(4, now)
        try statement.run()
      }
      try recordAudit(
        AuditEntry(station: station, at: now, action: .net, client: client, detail: "\(room) post"))
      return .sent(creation)
    }
  }
}

extension Database {
  /// How long the push of a new entry of `room` waits (ms), inside `storeMessages`' transaction: the room's
  /// digest (the subscription's `digest`, s). An entry while a digest is open joins it (held until it is due, so
  /// the push engine sends the window's entries as one push: their count and the last sender); an entry with no
  /// digest open opens one, due `digest` from now. So a room pushes at most once per `digest`; with `digest` 0 every
  /// entry is pushed at once.
  func roomDigestHold(_ station: String, room: NetRoom, subscription: String, now: Int64) throws(StoreError)
    -> Int64
  {
    let digest = try prepared(
      """
      SELECT net_digest FROM subscriptions WHERE station = ?1 AND id = ?2 AND kind = 'net'
      """)
    var digestMs = Int64(NetRule.defaultDigestSeconds) * 1000
    do {
      defer { digest.reset() }
      try digest.bind(1, station)
      try digest.bind(2, subscription)
      if try digest.step(), let seconds = digest.optionalInt64(0) { digestMs = seconds * 1000 }
    }
    guard digestMs > 0 else { return 0 }
    let open = try prepared("SELECT digest_due_at FROM net_memberships WHERE station = ?1 AND room = ?2")
    var due: Int64?
    do {
      defer { open.reset() }
      try open.bind(1, station)
      try open.bind(2, room.description)
      if try open.step() { due = open.optionalInt64(0) }
    }
    if let due, due >= now { return due - now }
    let next = now + digestMs
    let record = try prepared(
      """
      INSERT INTO net_memberships (station, room, subscription, digest_due_at) VALUES (?1, ?2, ?3, ?4)
      ON CONFLICT (station, room) DO UPDATE SET digest_due_at = excluded.digest_due_at
      """)
    defer { record.reset() }
    try record.bind(1, station)
    try record.bind(2, room.description)
    try record.bind(3, subscription)
    try record.bind(4, next)
    try record.run()
    return digestMs
  }
}

extension Database {
  /// The memberships in force (joined and not left), by service: what `/metrics` shows
  /// (`aprs_cloud_net_members`). Every service is present, 0 when it has none.
  public func netMemberCounts() throws(StoreError) -> [NetService: Int] {
    let statement = try prepared(
      """
      SELECT substr(room, 1, instr(room, '/') - 1), count(*) FROM net_memberships
      WHERE left_at IS NULL AND joined_at IS NOT NULL GROUP BY 1
      """)
    defer { statement.reset() }
    var counts = Dictionary(uniqueKeysWithValues: NetService.allCases.map { ($0, 0) })
    while try statement.step() {
      if let service = NetService(rawValue: statement.text(0)) { counts[service] = Int(statement.int64(1)) }
    }
    return counts
  }
}

extension Database {
  /// How long after a leave the service's answers and late copies are still read as the room's entries (ms): the
  /// 12 hours of ANSRVR's lapse, the longest a service may still fan out to a member that left.
  public static let netLeaveGraceMs: Int64 = 12 * 3_600_000

  /// The rooms stations left at or after `since` (epoch ms), as net subscriptions without an id, for the
  /// listener's index beside the live ones: the service's answer to a leave (`Removed from MYTEST`, `N:HOTG …`)
  /// and copies still in flight are then the room's entries, not direct messages the shipping app would show.
  public func recentlyLeftNets(since: Int64) throws(StoreError) -> [(station: String, Subscription)] {
    let statement = try prepared(
      "SELECT station, room FROM net_memberships WHERE left_at IS NOT NULL AND left_at >= ?1 ORDER BY station"
    )
    defer { statement.reset() }
    try statement.bind(1, since)
    var found: [(station: String, Subscription)] = []
    while try statement.step() {
      guard let room = NetRoom(statement.text(1)) else { continue }
      let join: NetRule.Join = room.service.silentJoinText(group: room.group) == nil ? .post : .silent
      let rule = NetRule(service: room.service, group: room.group, join: join, renew: false)
      found.append((statement.text(0), Subscription(id: "", rule: .net(rule))))
    }
    return found
  }
}
