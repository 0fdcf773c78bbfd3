import APRS

/// One watch as the listener tracks it: whose it is, the subscription, and its state.
public struct TrackedWatch: Sendable, Equatable {
  /// The station that watches (canonical address).
  public var station: String
  /// The watch subscription's id.
  public var subscription: String
  public var rule: WatchRule
  public var state: WatchState

  public init(station: String, subscription: String, rule: WatchRule, state: WatchState) {
    self.station = station
    self.subscription = subscription
    self.rule = rule
    self.state = state
  }
}

/// The watches' states (`watch_states`, `sql/016_subscription_entries.sql`, `emergency_at` from
/// `sql/022_weather_alerts_and_emergencies.sql`) and the subscriptions the listener
/// routes by. Times are epoch ms (silences span restarts).
extension Database {
  /// The newest change count of the subscriptions (a trigger bumps it on every insert, update and delete): the
  /// listener reloads its index only when it moved.
  public func subscriptionsVersion() throws(StoreError) -> Int64 {
    let statement = try prepared(
      "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'subscriptions_version'")
    defer { statement.reset() }
    return try statement.step() ? statement.int64(0) : 0
  }

  /// Every subscription of the stations heard at or after `heardSince` (epoch ms), by station address, each
  /// station's in its order: what the listener matches traffic against and plans its filter from.
  public func liveSubscriptions(heardSince: Int64) throws(StoreError) -> [(station: String, Subscription)] {
    let statement = try prepared(
      """
      SELECT subscriptions.id, subscriptions.kind, subscriptions.target, subscriptions.heard_after,
             subscriptions.silent_for, subscriptions.emergency, subscriptions.bypass, subscriptions.net_join,
             subscriptions.net_text, subscriptions.net_renew, subscriptions.net_digest, subscriptions.station
      FROM subscriptions JOIN stations ON stations.address = subscriptions.station
      WHERE stations.heartbeat_at >= ?1
      ORDER BY subscriptions.station, subscriptions.position
      """)
    defer { statement.reset() }
    try statement.bind(1, heardSince)
    var found: [(station: String, Subscription)] = []
    while try statement.step() {
      if let subscription = Self.subscription(statement) { found.append((statement.text(11), subscription)) }
    }
    return found
  }

  /// The watches of `call` (upper case, exact SSID) kept by stations heard since `heardSince`, with their
  /// states; a watch without a state row (none was written yet) starts at `now`. Inside the caller's write
  /// transaction (the writer's batch), so the states read are the ones its writes replace.
  public func watches(of call: String, heardSince: Int64, now: Int64) throws(StoreError) -> [TrackedWatch] {
    let statement = try prepared(
      Self.watchColumns + """
        FROM subscriptions JOIN stations ON stations.address = subscriptions.station
        LEFT JOIN watch_states ON watch_states.station = subscriptions.station
          AND watch_states.subscription = subscriptions.id
        WHERE subscriptions.kind = 'watch' AND subscriptions.target = ?1 AND stations.heartbeat_at >= ?2
        ORDER BY subscriptions.station, subscriptions.position
        """)
    defer { statement.reset() }
    try statement.bind(1, call)
    try statement.bind(2, heardSince)
    return try trackedWatches(statement, now: now)
  }

  /// The watches whose silence is due at `now` (epoch ms), at most `limit`, oldest deadline first.
  public func dueWatches(now: Int64, limit: Int = 500) throws(StoreError) -> [TrackedWatch] {
    let statement = try prepared(
      Self.watchColumns + """
        FROM watch_states JOIN subscriptions ON subscriptions.station = watch_states.station
          AND subscriptions.id = watch_states.subscription
        WHERE watch_states.silence_due_at IS NOT NULL AND watch_states.silence_due_at <= ?1
        ORDER BY watch_states.silence_due_at LIMIT ?2
        """)
    defer { statement.reset() }
    try statement.bind(1, now)
    try statement.bind(2, limit)
    return try trackedWatches(statement, now: now)
  }

  /// When the next silence is due (epoch ms), nil when none is: what the listener's clock waits for.
  public func nextWatchDeadline() throws(StoreError) -> Int64? {
    let statement = try prepared(
      "SELECT min(silence_due_at) FROM watch_states WHERE silence_due_at IS NOT NULL")
    defer { statement.reset() }
    return try statement.step() ? statement.optionalInt64(0) : nil
  }

  /// Writes a watch's state (and when its silence will be due, ``WatchTracker/nextTick(rule:state:)``).
  public func saveWatchState(_ watch: TrackedWatch) throws(StoreError) {
    let statement = try prepared(
      """
      INSERT INTO watch_states (station, subscription, last_heard_at, silence_reported, emergency_at,
        silence_due_at)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6)
      ON CONFLICT (station, subscription) DO UPDATE SET last_heard_at = excluded.last_heard_at,
        silence_reported = excluded.silence_reported, emergency_at = excluded.emergency_at,
        silence_due_at = excluded.silence_due_at
      """)
    defer { statement.reset() }
    try statement.bind(1, watch.station.canonicalAddress)
    try statement.bind(2, watch.subscription)
    try statement.bind(3, watch.state.lastHeardAt)
    try statement.bind(4, watch.state.silenceReported)
    try statement.bind(5, watch.state.emergencyAt)
    try statement.bind(6, WatchTracker.nextTick(rule: watch.rule, state: watch.state))
    try statement.run()
  }

  /// The columns of a watch row: the subscription's (as ``subscription(_:from:)`` reads a watch's), then the
  /// state's.
  private static let watchColumns = """
    SELECT subscriptions.id, subscriptions.kind, subscriptions.target, subscriptions.heard_after,
           subscriptions.silent_for, subscriptions.emergency, subscriptions.bypass, subscriptions.station,
           watch_states.last_heard_at, watch_states.silence_reported, watch_states.emergency_at

    """

  /// Rows of the watch queries above: the subscription's columns, then the state's (NULL: a watch starting at
  /// `now`).
  private func trackedWatches(_ statement: Statement, now: Int64) throws(StoreError) -> [TrackedWatch] {
    var found: [TrackedWatch] = []
    while try statement.step() {
      guard let subscription = Self.subscription(statement), case .watch(let rule) = subscription.rule else {
        continue
      }
      var state = WatchState(startingAt: now)
      if !statement.isNull(8) {
        state = WatchState(
          startingAt: statement.int64(8), silenceReported: statement.bool(9),
          emergencyAt: statement.optionalInt64(10))
      }
      found.append(
        TrackedWatch(station: statement.text(7), subscription: subscription.id, rule: rule, state: state))
    }
    return found
  }

  /// After a station's subscriptions were replaced (inside that transaction): its watches keep their states (a
  /// changed `silentFor` moves the deadline), new watches start at `now`, states of removed ones go, and the
  /// entries of a kind it no longer subscribes to are deleted (a room's entries stay: they show what the net did).
  func settleSubscriptionChanges(of station: String, subscriptions: [Subscription], now: Int64)
    throws(StoreError)
  {
    let kept = try prepared(
      """
      SELECT last_heard_at, silence_reported, emergency_at FROM watch_states
      WHERE station = ?1 AND subscription = ?2
      """)
    var watchIDs: [String] = []
    for subscription in subscriptions {
      guard case .watch(let rule) = subscription.rule else { continue }
      watchIDs.append(subscription.id)
      var state = WatchState(startingAt: now)
      do {
        defer { kept.reset() }
        try kept.bind(1, station)
        try kept.bind(2, subscription.id)
        if try kept.step() {
          state = WatchState(
            startingAt: kept.int64(0), silenceReported: kept.bool(1), emergencyAt: kept.optionalInt64(2))
        }
      }
      try saveWatchState(
        TrackedWatch(station: station, subscription: subscription.id, rule: rule, state: state))
    }
    let gone = try prepared(
      """
      DELETE FROM watch_states WHERE station = ?1
        AND subscription NOT IN (SELECT value FROM json_each(?2))
      """)
    do {
      defer { gone.reset() }
      try gone.bind(1, station)
      try gone.bind(2, Self.jsonArray(watchIDs))
      try gone.run()
    }
    let kinds = Set(subscriptions.map(\.kind.rawValue))
    let entries = try prepared(
      """
      DELETE FROM messages WHERE station = ?1 AND kind IS NOT NULL AND room IS NULL
        AND kind NOT IN (SELECT value FROM json_each(?2))
      """)
    defer { entries.reset() }
    try entries.bind(1, station)
    try entries.bind(2, Self.jsonArray(kinds.sorted()))
    try entries.run()
  }

  /// A JSON array of strings that need no escaping (ids `s…`, kind names): what `json_each` reads.
  private static func jsonArray(_ values: [String]) -> String {
    "[" + values.map { "\"" + $0 + "\"" }.joined(separator: ",") + "]"
  }
}
