import APRS
import Logging
import Platform
import Store

/// The registration watcher: keeps the ``StationRegistry`` equal to the live registered stations and plans the
/// `#filter` line when they change, with work proportional to what changed.
///
/// - At start it reads every live station once (one snapshot, straight into the registry's tries).
/// - Then it sleeps on its ``Platform/WakeSignal`` until the responder says the stations changed
///   (``CompanionFiles/ListenerWake/registrations``, through ``CompanionFiles/WakeSocket``), or ``pollMs`` passed (the long
///   fallback look with the wake socket, `[listener] registrationPoll` without it), and looks at
///   `PRAGMA data_version`. When the database changed it reads
///   the station change log (`station_changes`, written by triggers on `stations`) after the last row it read,
///   and looks those stations up: live ones are added, others removed. A registration, heartbeat or
///   unregistration costs it one row and one lookup, whatever the number of stations.
/// - Expiry needs no rows: on each check (and at least once a minute) the stations whose last heartbeat fell
///   between the previous expiry boundary and the new one are removed, one index range.
/// - Rows it read are deleted now and then. If rows it never read are gone (the log keeps its newest 100,000
///   rows by itself) or the log went back (a restored backup), it reads the whole set again, once.
/// - The few stations that collect other SSIDs of their call (setting `ssids`) are read on each check (a partial
///   index), for routing and the filter's extra `g/` entries.
/// - The live stations' subscriptions (``SubscriptionIndex``: routing, and the filter's `BLN*`, group, `NWS*` and
///   `b/` entries) are read again when one changed (a counter the store's triggers bump) or the stations did.
/// - Only when the planned line differs from the last one does it hand it to the connection.
final class RegistrationWatcher: @unchecked Sendable {
  /// At least this often the expiry boundary moves even when the database did not change (ms).
  static let expiryRecheckMs: Int64 = 60_000
  /// Change rows read per query.
  static let changeBatch = 10_000
  /// Rows it read are deleted at most this often (ms).
  static let pruneIntervalMs: Int64 = 60_000

  /// What the watcher did since it started (for tests and logs).
  struct Work: Equatable {
    /// Times it read every live station.
    var fullLoads = 0
    /// Stations read by those full loads.
    var stationsLoaded = 0
    /// Change-log rows read.
    var changesRead = 0
    /// Stations read because their heartbeat crossed the expiry boundary.
    var expiriesRead = 0
  }

  let database: Database
  let expiryMs: Int64
  let trackOutgoing: Bool
  let pollMs: Int64
  /// The shortest gap between two looks (ms): a wake within it waits for its end, so a stream of heartbeats costs
  /// at most one look per gap, while the first wake after a quiet spell is looked at at once.
  let debounceMs: Int64
  let registry: StationRegistry
  let logger: Logger
  let stopped: Latch
  let clock: EpochClock
  private(set) var work = Work()
  private var version: Int64?
  private var loaded = false
  private var lastCheck: Int64 = 0
  /// Every change-log row up to this one has been applied.
  private(set) var cursor: Int64 = 0
  /// The expiry boundary in effect (epoch ms): stations heard at or after it are live.
  private(set) var cutoff: Int64 = .min
  private var prunedThrough: Int64 = 0
  private var lastPrune: Int64 = .min / 2
  private var line: FilterLine?
  /// The subscriptions' change count the index was read at.
  private var subscriptionsVersion: Int64?

  init(
    database: Database, expiryMs: Int64, trackOutgoing: Bool, pollMs: Int64, registry: StationRegistry,
    logger: Logger, stopped: Latch, clock: @escaping EpochClock = epochMilliseconds, debounceMs: Int64 = 0
  ) {
    self.debounceMs = debounceMs
    self.database = database
    self.expiryMs = expiryMs
    self.trackOutgoing = trackOutgoing
    self.pollMs = pollMs
    self.registry = registry
    self.logger = logger
    self.stopped = stopped
    self.clock = clock
  }

  /// Brings the registry up to date; returns the new filter line when it differs from the last one handed out
  /// (always one after the first check), nil otherwise.
  func check(force: Bool = false) throws(StoreError) -> FilterLine? {
    let now = monotonicMilliseconds()
    let dataVersion = try database.dataVersion()
    guard force || !loaded || dataVersion != version || now - lastCheck >= Self.expiryRecheckMs else {
      return nil
    }
    version = dataVersion
    lastCheck = now
    let before = registry.count
    let changed = try database.readSnapshot { () throws(StoreError) -> Bool in
      let boundary = max(cutoff, clock() - expiryMs)
      let log = try database.stationChangeLog()
      guard loaded, log.continues(from: cursor) else {
        if loaded {
          logger.warn(
            "station changes were pruned before the listener read them; reading every station again",
            ["readThrough": String(cursor), "newest": String(log.newest)])
        }
        try loadEverything(cutoff: boundary, log: log)
        try loadCoverage(heardSince: boundary)
        try loadSubscriptions(heardSince: boundary, force: true)
        return true
      }
      var changed = try expire(until: boundary)
      while true {
        let rows = try database.stationChanges(after: cursor, limit: Self.changeBatch, heardSince: cutoff)
        if rows.isEmpty { break }
        work.changesRead += rows.count
        if apply(rows) { changed = true }
        cursor = rows[rows.count - 1].seq
        if rows.count < Self.changeBatch { break }
      }
      if try loadCoverage(heardSince: cutoff) { changed = true }
      if try loadSubscriptions(heardSince: cutoff, force: changed) { changed = true }
      return changed
    }
    pruneIfDue(now: now)
    guard changed || line == nil else { return nil }
    let planned = registry.plan()
    guard planned != line else { return nil }
    line = planned
    logger.info(
      "registered stations changed",
      [
        "stations": String(registry.count), "before": String(before),
        "filterBytes": String(planned.byteCount),
        "filterEntries": String(planned.entryCount), "filterExactStations": String(planned.exactStationCount),
        "allSSIDStations": String(registry.collectingCount),
        "subscriptions": String(registry.subscriptionIndex.count),
        "ownFollowed": String(registry.ownTransmissions.followed.count),
      ])
    let fellBack = registry.ownTransmissions.fellBack
    if !fellBack.isEmpty {
      // Exact b/ entries only: a prefix would let every packet of every matching sender through.
      logger.warn(
        "stations fell back to ackPolicy server: the filter has no room to follow their own transmissions",
        ["count": String(fellBack.count), "stations": fellBack.prefix(10).joined(separator: " ")])
    }
    let unwatched = registry.unwatchedCalls
    if !unwatched.isEmpty {
      // Watches are exact b/ entries: a prefix would let every packet of every matching sender through.
      logger.warn(
        "watched calls left off the filter: it has no room for them as they are",
        ["count": String(unwatched.count), "calls": unwatched.prefix(10).joined(separator: " ")])
    }
    return planned
  }

  /// Looks at the registrations on every wake and every ``pollMs`` until `wake` is stopped, handing new filter
  /// lines to `deliver`.
  func run(wake: WakeSignal, deliver: (FilterLine) -> Void) {
    var failing = false
    var lastLook = Int64.min / 2
    while wake.wait(timeoutMs: pollMs) != .stopped {
      while monotonicMilliseconds() < lastLook + debounceMs {
        if wake.wait(timeoutMs: lastLook + debounceMs - monotonicMilliseconds()) == .stopped { return }
      }
      lastLook = monotonicMilliseconds()
      do throws(StoreError) {
        if let line = try check() { deliver(line) }
        failing = false
      } catch {
        if !failing { logger.warn("cannot read registrations; retrying", ["error": error.description]) }
        failing = true
      }
    }
  }

  // MARK: Steps

  /// Reads every live station into a fresh registry; the log's newest row is where reading goes on.
  private func loadEverything(cutoff boundary: Int64, log: StationChangeLog) throws(StoreError) {
    // Counted first (in the same snapshot), so the keys are gathered without growing and copying their buffer.
    var loader = FilterPlanner.Loader(capacity: try database.liveStationCount(heardSince: boundary))
    try database.forEachLiveStation(heardSince: boundary) { loader.add(address: $0) }
    if loader.rejected > 0 {
      logger.warn(
        "stations whose address cannot be filtered are left out", ["count": String(loader.rejected)])
    }
    work.fullLoads += 1
    work.stationsLoaded += loader.count
    registry.replace(with: loader.planner(trackingSenders: trackOutgoing))
    cursor = log.newest
    cutoff = boundary
    loaded = true
  }

  /// Reads the live stations that collect other SSIDs of their call (setting `ssids`) and those that asked to
  /// have their own transmissions followed (`ackPolicy:"fallback"`, `trackSent`), a few rows each through a
  /// partial index, into the registry; true when that changed them.
  @discardableResult
  private func loadCoverage(heardSince boundary: Int64) throws(StoreError) -> Bool {
    let coverage = SSIDCoverage(try database.stationsCollectingOtherSSIDs(heardSince: boundary))
    let own = OwnTransmissions(try database.stationsFollowingOwnTransmissions(heardSince: boundary))
    let ownChanged = registry.replaceOwnTransmissions(with: own)
    return registry.replaceCoverage(with: coverage) || ownChanged
  }

  /// Reads the live stations' subscriptions into the registry when they changed since the last read (or
  /// `force`: the stations did); true when that changed the index.
  @discardableResult
  private func loadSubscriptions(heardSince boundary: Int64, force: Bool) throws(StoreError) -> Bool {
    let version = try database.subscriptionsVersion()
    guard force || version != subscriptionsVersion else { return false }
    subscriptionsVersion = version
    // The live subscriptions first (an index keeps a station's first net of a room), then the rooms left lately.
    let left = try database.recentlyLeftNets(since: clock() - Database.netLeaveGraceMs)
    return registry.replaceSubscriptions(
      with: SubscriptionIndex(try database.liveSubscriptions(heardSince: boundary) + left))
  }

  /// Moves the expiry boundary to `boundary`, removing the stations last heard before it and at or after the
  /// previous one; true when one was removed.
  private func expire(until boundary: Int64) throws(StoreError) -> Bool {
    guard boundary > cutoff else { return false }
    var expired: [String] = []
    try database.forEachStation(heardFrom: cutoff, before: boundary) { expired.append($0) }
    cutoff = boundary
    guard !expired.isEmpty else { return false }
    work.expiriesRead += expired.count
    let track = trackOutgoing
    return registry.update { planner in
      var removed = false
      for address in expired {
        if planner.remove(address: address) == true { removed = true }
        if track { planner.remove(address: address, from: .senders) }
      }
      return removed
    }
  }

  /// Applies change rows in order; true when the set changed.
  private func apply(_ rows: [StationChange]) -> Bool {
    let track = trackOutgoing
    return registry.update { planner in
      var changed = false
      for row in rows {
        if row.isLive {
          if planner.insert(address: row.address) == true { changed = true }
          if track { planner.insert(address: row.address, into: .senders) }
        } else {
          if planner.remove(address: row.address) == true { changed = true }
          if track { planner.remove(address: row.address, from: .senders) }
        }
      }
      return changed
    }
  }

  /// Deletes the rows read, at most once per ``pruneIntervalMs``; a failure waits for the next time.
  private func pruneIfDue(now: Int64) {
    guard cursor > prunedThrough, now - lastPrune >= Self.pruneIntervalMs else { return }
    lastPrune = now
    do throws(StoreError) {
      try database.pruneStationChanges(through: cursor)
      prunedThrough = cursor
    } catch {
      logger.warn("cannot prune station changes", ["error": error.description])
    }
  }
}
