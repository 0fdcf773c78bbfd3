/// Read markers (`sql/018_read_markers.sql`): what a station has read, shared by all its devices.
extension Database {
  /// The peer name that stands for every conversation (`peer:"*"`).
  public static let everyPeer = "*"

  /// Marks `station`'s conversation with `peer` (a station address, or ``everyPeer``) read up to `upTo` (a
  /// message timestamp; a marker never moves back). The change is stamped from the message timestamps'
  /// sequence, so syncs and held long polls see it after their cursor. Returns the stamp, or nil when nothing
  /// changed (the marker was already there or further) or the station is not registered.
  @discardableResult
  public func markRead(station: String, peer: String, upTo: Int64, now: Int64) throws(StoreError) -> Int64? {
    let address = station.canonicalAddress
    let who = peer == Self.everyPeer ? peer : peer.canonicalAddress
    return try writeBatch { () throws(StoreError) -> Int64? in
      guard try hasStation(address) else { return nil }
      let current = try prepared("SELECT up_to FROM read_markers WHERE station = ?1 AND peer = ?2")
      do {
        defer { current.reset() }
        try current.bind(1, address)
        try current.bind(2, who)
        if try current.step(), current.int64(0) >= upTo { return nil }
      }
      let stamp = max(now, try lastMessageTimestamp() + 1)
      let upsert = try prepared(
        """
        INSERT INTO read_markers (station, peer, up_to, changed_at) VALUES (?1, ?2, ?3, ?4)
        ON CONFLICT (station, peer) DO UPDATE SET up_to = excluded.up_to, changed_at = excluded.changed_at
        """)
      do {
        defer { upsert.reset() }
        try upsert.bind(1, address)
        try upsert.bind(2, who)
        try upsert.bind(3, upTo)
        try upsert.bind(4, stamp)
        try upsert.run()
      }
      try setMetaValue(Self.lastMessageTimestampKey, String(stamp))
      return stamp
    }
  }

  /// The markers of `station` changed after `since` (a sync cursor), by peer.
  public func readMarkers(station: String, changedAfter since: Int64) throws(StoreError) -> [String: Int64] {
    let statement = try prepared(
      "SELECT peer, up_to FROM read_markers WHERE station = ?1 AND changed_at > ?2 ORDER BY peer")
    defer { statement.reset() }
    try statement.bind(1, station.canonicalAddress)
    try statement.bind(2, since)
    var markers: [String: Int64] = [:]
    while try statement.step() { markers[statement.text(0)] = statement.int64(1) }
    return markers
  }
}
