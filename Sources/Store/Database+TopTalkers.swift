/// Who did the most in the last hour (`aprs-cloud stations --top`): the operator's first look for an abuser
/// before `aprs-cloud ban`. Read-only; every count comes from rows the server keeps anyway (the rate-limit
/// windows, the sends, the devices), so nothing extra is recorded per request.
public struct TopTalkers: Sendable, Equatable {
  /// One line of a list: a station address or a client address key, and its count.
  public struct Entry: Sendable, Equatable {
    public var name: String
    public var count: Int

    public init(_ name: String, _ count: Int) {
      self.name = name
      self.count = count
    }
  }

  /// Stations by registrations in their current hourly window (`registrationsPerHour`).
  public var registrations: [Entry] = []
  /// Stations by heartbeats in their current hourly window.
  public var heartbeats: [Entry] = []
  /// Stations by messages sent through `/v1/send` in the last hour.
  public var sends: [Entry] = []
  /// Stations by push tokens registered in the last hour.
  public var devices: [Entry] = []
  /// Client addresses (IPv4, IPv6 /64) by new stations in their current hourly window.
  public var newStationsByAddress: [Entry] = []
  /// Client addresses by claims in their current hourly window.
  public var claimsByAddress: [Entry] = []

  public init() {}
}

extension Database {
  /// The `limit` biggest of each list in ``TopTalkers`` as of `now` (ms).
  public func topTalkers(now: Int64, limit: Int = 10) throws(StoreError) -> TopTalkers {
    let hourAgo = now - 3_600_000
    var top = TopTalkers()
    try readTransaction { () throws(StoreError) in
      func windows(_ prefix: String) throws(StoreError) -> [TopTalkers.Entry] {
        try entries(
          """
          SELECT substr(key, length(?1) + 1), count FROM rate_limits
          WHERE key >= ?1 AND key < ?1 || char(1114111) AND expires_at > ?2 ORDER BY count DESC, key LIMIT ?3
          """, prefix: prefix, since: now, limit: limit)
      }
      top.registrations = try windows(RateKey.registrations)
      top.heartbeats = try windows(RateKey.heartbeats)
      top.newStationsByAddress = try windows(RateKey.newStationsFromAddress)
      top.claimsByAddress = try windows(RateKey.claimsFromAddress)
      top.sends = try entries(
        """
        SELECT station, count(*) AS n FROM sends WHERE created_at > ?2 GROUP BY station
        ORDER BY n DESC, station LIMIT ?3
        """, prefix: nil, since: hourAgo, limit: limit)
      top.devices = try entries(
        """
        SELECT station, count(*) AS n FROM devices WHERE registered_at > ?2 GROUP BY station
        ORDER BY n DESC, station LIMIT ?3
        """, prefix: nil, since: hourAgo, limit: limit)
    }
    return top
  }

  /// Runs a query of (name, count) rows: `?1` the key prefix (when the query has one), `?2` the time, `?3` the
  /// limit.
  private func entries(_ sql: String, prefix: String?, since time: Int64, limit: Int) throws(StoreError)
    -> [TopTalkers.Entry]
  {
    let statement = try prepared(sql)
    defer { statement.reset() }
    if let prefix { try statement.bind(1, prefix) }
    try statement.bind(2, time)
    try statement.bind(3, limit)
    var found: [TopTalkers.Entry] = []
    while try statement.step() { found.append(TopTalkers.Entry(statement.text(0), statement.int(1))) }
    return found
  }
}
