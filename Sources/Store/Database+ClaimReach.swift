/// Whom a governing claim governs (``ClaimReach``; sql/021_earlier_devices.sql).
extension Database {
  /// The reach of the claim governing `address` (any case): nil when no claim governs it (unclaimed, or its claim
  /// is provisional: the station's settings then act as stored, for every device). One point query.
  public func claimReach(_ address: String) throws(StoreError) -> ClaimReach? {
    let statement = try prepared(
      """
      SELECT s.claimed_at, count(d.id), coalesce(max(d.ack_messages), 0)
      FROM stations s LEFT JOIN devices d
        ON d.station = s.address AND d.keyed = 0 AND d.registered_at < s.claimed_at
      WHERE s.address = ?1 AND s.claim_key_hash IS NOT NULL AND s.claim_proof <> 'provisional'
        AND s.claimed_at IS NOT NULL
      GROUP BY s.address
      """)
    defer { statement.reset() }
    try statement.bind(1, address.canonicalAddress)
    guard try statement.step() else { return nil }
    return ClaimReach(
      claimedAt: statement.int64(0), earlierDevices: statement.int(1), earlierWantAcks: statement.bool(2))
  }

  /// The reach of each governed station among `addresses` (upper case), by address; others are left out. One point
  /// query per distinct address, inside the caller's transaction when there is one (the listener's writer reads it
  /// beside the addressees' settings, so both hold at its commit).
  public func claimReaches(of addresses: some Sequence<String>) throws(StoreError) -> [String: ClaimReach] {
    try readTransaction { () throws(StoreError) in
      var found: [String: ClaimReach] = [:]
      var asked = Set<String>()
      for address in addresses where asked.insert(address).inserted {
        if let reach = try claimReach(address) { found[address] = reach }
      }
      return found
    }
  }
}
