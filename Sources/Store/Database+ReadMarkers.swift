/// Read markers (`sql/018_read_markers.sql`): what a station has read, shared by all its devices.
extension Database {
  /// The peer name that stands for every conversation (`peer:"*"`).
  public static let everyPeer = "*"

  /// Marks `station`'s conversation with `peer` (a station address, or ``everyPeer``) read up to `upTo` (a
  /// message timestamp; a marker never moves back). `upTo` past every timestamp given so far (the later of the
  /// timestamps' sequence and `now`) is taken as that bound: a marker in the future would hide the messages still
  /// to come, and could never be moved back. The change is stamped from the message timestamps' sequence, so syncs
  /// and held long polls see it after their cursor. Returns the marker as it stands and the stamp (nil when nothing
  /// changed: the marker was already there or further); nil when the station is not registered.
  @discardableResult
  public func markRead(station: String, peer: String, upTo: Int64, now: Int64) throws(StoreError) -> ReadMark?
  {
    let address = station.canonicalAddress
    let who = peer == Self.everyPeer ? peer : peer.canonicalAddress
    return try writeBatch { () throws(StoreError) -> ReadMark? in
      guard try hasStation(address) else { return nil }
      let last = try lastMessageTimestamp()
      let wanted = min(upTo, max(last, now))
      let current = try prepared("SELECT up_to FROM read_markers WHERE station = ?1 AND peer = ?2")
      do {
        defer { current.reset() }
        try current.bind(1, address)
        try current.bind(2, who)
        if try current.step(), current.int64(0) >= wanted {
          return ReadMark(upTo: current.int64(0), stamp: nil)
        }
      }
      let stamp = max(now, last + 1)
      let upsert = try prepared(
        """
        INSERT INTO read_markers (station, peer, up_to, changed_at) VALUES (?1, ?2, ?3, ?4)
        ON CONFLICT (station, peer) DO UPDATE SET up_to = excluded.up_to, changed_at = excluded.changed_at
        """)
      do {
        defer { upsert.reset() }
        try upsert.bind(1, address)
        try upsert.bind(2, who)
        try upsert.bind(3, wanted)
        try upsert.bind(4, stamp)
        try upsert.run()
      }
      try setMetaValue(Self.lastMessageTimestampKey, String(stamp))
      return ReadMark(upTo: wanted, stamp: stamp)
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

/// A read marker after ``Database/markRead(station:peer:upTo:now:)``.
public struct ReadMark: Sendable, Equatable {
  /// The marker as it stands (a message timestamp, epoch ms).
  public var upTo: Int64
  /// The cursor the change is stamped at; nil when nothing changed.
  public var stamp: Int64?

  public init(upTo: Int64, stamp: Int64?) {
    self.upTo = upTo
    self.stamp = stamp
  }
}
