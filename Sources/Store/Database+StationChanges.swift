/// The listener's view of the station set, read incrementally: every live station once at start, then only
/// what the change log (`station_changes`, sql/006_station_changes.sql) says changed, and the stations whose
/// heartbeat crossed the expiry boundary since the last look. Wrap each round in `readSnapshot` so its reads
/// agree with each other.
extension Database {
  /// Calls `body` with the address (upper case) of every station heard (register or heartbeat) at or after
  /// `cutoff` (epoch ms), in no particular order, without collecting them: the listener's start, at any
  /// number of stations.
  public func forEachLiveStation(heardSince cutoff: Int64, _ body: (String) -> Void) throws(StoreError) {
    let statement = try prepared("SELECT address FROM stations WHERE heartbeat_at >= ?1")
    defer { statement.reset() }
    try statement.bind(1, cutoff)
    while try statement.step() { body(statement.text(0)) }
  }

  /// How many stations were heard (register or heartbeat) at or after `cutoff` (epoch ms): one count over the
  /// `stations_heartbeat` index, so a full read can reserve its memory once.
  public func liveStationCount(heardSince cutoff: Int64) throws(StoreError) -> Int {
    let statement = try prepared("SELECT count(*) FROM stations WHERE heartbeat_at >= ?1")
    defer { statement.reset() }
    try statement.bind(1, cutoff)
    return try statement.step() ? statement.int(0) : 0
  }

  /// Where the change log stands: the newest `seq` ever given (0 before the first change) and the oldest
  /// row still kept (nil when the log is empty).
  public func stationChangeLog() throws(StoreError) -> StationChangeLog {
    let newest = try prepared("SELECT seq FROM sqlite_sequence WHERE name = 'station_changes'")
    defer { newest.reset() }
    let oldest = try prepared("SELECT min(seq) FROM station_changes")
    defer { oldest.reset() }
    let newestSeq = try newest.step() ? newest.int64(0) : 0
    let oldestSeq = try oldest.step() ? oldest.optionalInt64(0) : nil
    return StationChangeLog(newest: newestSeq, oldest: oldestSeq)
  }

  /// Up to `limit` rows of the change log after `seq`, oldest first, each with whether its station is live
  /// now (registered and heard at or after `cutoff`, epoch ms); several rows may name one station.
  public func stationChanges(after seq: Int64, limit: Int, heardSince cutoff: Int64) throws(StoreError)
    -> [StationChange]
  {
    let statement = try prepared(
      """
      SELECT c.seq, c.address, coalesce(s.heartbeat_at >= ?2, 0) FROM station_changes c
      LEFT JOIN stations s ON s.address = c.address
      WHERE c.seq > ?1 ORDER BY c.seq LIMIT ?3
      """)
    defer { statement.reset() }
    try statement.bind(1, seq)
    try statement.bind(2, cutoff)
    try statement.bind(3, limit)
    var changes: [StationChange] = []
    while try statement.step() {
      changes.append(
        StationChange(seq: statement.int64(0), address: statement.text(1), isLive: statement.bool(2)))
    }
    return changes
  }

  /// Calls `body` with the address of every station last heard at or after `from` and before `to` (epoch
  /// ms): when the expiry boundary moves from `from` to `to`, the stations that just expired. One range of
  /// the `stations_heartbeat` index, never a scan of every station.
  public func forEachStation(heardFrom from: Int64, before to: Int64, _ body: (String) -> Void)
    throws(StoreError)
  {
    guard from < to else { return }
    let statement = try prepared(
      "SELECT address FROM stations WHERE heartbeat_at >= ?1 AND heartbeat_at < ?2")
    defer { statement.reset() }
    try statement.bind(1, from)
    try statement.bind(2, to)
    while try statement.step() { body(statement.text(0)) }
  }

  /// Deletes the change log's rows up to and including `seq` (the listener read them); returns how many.
  @discardableResult
  public func pruneStationChanges(through seq: Int64) throws(StoreError) -> Int {
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared("DELETE FROM station_changes WHERE seq <= ?1")
      defer { statement.reset() }
      try statement.bind(1, seq)
      try statement.run()
      return changes
    }
  }

  /// Which of `addresses` (upper case) are registered stations that want their messages ACKed once stored
  /// (`ack_policy` `server`, ``AckPolicy``). One point query per address: the listener asks for the few
  /// stations of one batch, inside its write transaction, so the answer holds at its commit.
  public func stationsWantingAcks(_ addresses: some Sequence<String>) throws(StoreError) -> Set<String> {
    let statement = try prepared("SELECT 1 FROM stations WHERE address = ?1 AND ack_policy = 'server'")
    var wanting = Set<String>()
    for address in addresses where !wanting.contains(address) {
      defer { statement.reset() }
      try statement.bind(1, address)
      if try statement.step() { wanting.insert(address) }
    }
    return wanting
  }
}

/// Where the station change log stands (`Database.stationChangeLog()`).
public struct StationChangeLog: Sendable, Equatable {
  /// The newest `seq` ever given; 0 before the first change.
  public var newest: Int64
  /// The oldest row still kept; nil when the log is empty.
  public var oldest: Int64?

  public init(newest: Int64, oldest: Int64?) {
    self.newest = newest
    self.oldest = oldest
  }

  /// Whether a reader that read every row up to `seq` can go on from there: no row after it is gone, and
  /// the log did not go back (a restored backup).
  public func continues(from seq: Int64) -> Bool {
    if newest < seq { return false }
    if newest == seq { return true }
    guard let oldest else { return false }
    return oldest <= seq + 1
  }
}

/// One row of the station change log, with the station's state when it was read.
public struct StationChange: Sendable, Equatable {
  /// The row's position in the log.
  public var seq: Int64
  /// The station's address, upper case.
  public var address: String
  /// Registered and heard within the expiry window now.
  public var isLive: Bool

  public init(seq: Int64, address: String, isLive: Bool) {
    self.seq = seq
    self.address = address
    self.isLive = isLive
  }
}
