/// Owned stations (docs/protocol.md "Owned stations"): the claim on a station's row, its key's hash, and the station's
/// audit trail (sql/010_station_claims.sql). The store never sees a station key, only its SHA-256; comparing a
/// presented key with it is the API's (in constant time).
extension Database {
  /// Whether `address` (any case) is stored, and claimed. One point query.
  public func stationClaim(_ address: String) throws(StoreError) -> ClaimState {
    let statement = try prepared(
      """
      SELECT claim_key_hash, claimed_at, claim_refreshed_at, claim_proof, claim_seniority, claim_replaced_hash
      FROM stations WHERE address = ?1
      """)
    defer { statement.reset() }
    try statement.bind(1, address.canonicalAddress)
    guard try statement.step() else { return .unregistered }
    guard let hash = statement.optionalText(0) else { return .unclaimed }
    let claimedAt = statement.int64(1)
    return .claimed(
      StationClaim(
        keyHash: hash, claimedAt: claimedAt, refreshedAt: statement.optionalInt64(2) ?? claimedAt,
        proof: statement.optionalText(3).flatMap(ClaimProof.init(rawValue:)) ?? .unproven,
        seniority: statement.optionalInt64(4) ?? claimedAt, replacedKeyHash: statement.optionalText(5)))
  }

  /// Claims the stored station `address` with the key whose SHA-256 is `keyHash` (lower-case hex), unless it is
  /// claimed already, and records it in the audit trail under `client`. `proof` is `.proven` for a station nobody
  /// uses (first-come) and `.provisional` for one in use: a provisional claim also waits as a ``ClaimRequest``
  /// whose codes go to the devices registered before `now`. One write transaction (joins the caller's
  /// `writeBatch`); the condition is in the UPDATE itself, so of two claims racing exactly one wins.
  public func claimStation(
    _ address: String, keyHash: String, proof: ClaimProof = .proven, client: String, now: Int64
  ) throws(StoreError) -> ClaimOutcome {
    guard keyHash.utf8.count == 64 else { throw .invalidArgument("a key hash is 64 hex characters") }
    let station = address.canonicalAddress
    return try writeBatch { () throws(StoreError) -> ClaimOutcome in
      let statement = try prepared(
        """
        UPDATE stations SET claim_key_hash = ?2, claimed_at = ?3, claim_refreshed_at = ?3, claim_proof = ?4,
          claim_seniority = ?3
        WHERE address = ?1 AND claim_key_hash IS NULL
        """)
      defer { statement.reset() }
      try statement.bind(1, station)
      try statement.bind(2, keyHash)
      try statement.bind(3, now)
      try statement.bind(4, proof)
      try statement.run()
      guard changes > 0 else {
        return try stationClaim(station) == .unregistered ? .unregistered : .alreadyClaimed
      }
      if proof == .provisional {
        try insertClaimRequest(
          ClaimRequest(station: station, keyHash: keyHash, requestedAt: now, seniority: now, client: client))
      }
      try recordAudit(
        AuditEntry(
          station: station, at: now, action: .claimed, client: client,
          detail: proof == .provisional
            ? "provisional: the station is in use; waiting for a code from one of its devices"
            : "first-come: the station was not in use"))
      return .claimed(at: now, proof: proof)
    }
  }

  /// Replaces the key of the claimed station `address`: `oldHash` must be the stored one (the caller proved the
  /// key), `newHash` is the new key's. The claim time stays; the refresh time is `now`. False when the station is
  /// not claimed with `oldHash` any more (released or rotated meanwhile): nothing changed.
  public func rotateStationKey(
    _ address: String, from oldHash: String, to newHash: String, client: String, now: Int64
  ) throws(StoreError) -> Bool {
    guard newHash.utf8.count == 64 else { throw .invalidArgument("a key hash is 64 hex characters") }
    let station = address.canonicalAddress
    return try writeBatch { () throws(StoreError) -> Bool in
      let statement = try prepared(
        "UPDATE stations SET claim_key_hash = ?3, claim_refreshed_at = ?4 WHERE address = ?1 AND claim_key_hash = ?2"
      )
      defer { statement.reset() }
      try statement.bind(1, station)
      try statement.bind(2, oldHash)
      try statement.bind(3, newHash)
      try statement.bind(4, now)
      try statement.run()
      guard changes > 0 else { return false }
      try recordAudit(AuditEntry(station: station, at: now, action: .rotated, client: client))
      return true
    }
  }

  /// Notes a request made with the key of `address`'s claim at `now` (its refresh time), so a claim in use does not
  /// lapse; a no-op for an unclaimed station. One small write.
  public func refreshClaim(_ address: String, now: Int64) throws(StoreError) {
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        "UPDATE stations SET claim_refreshed_at = ?2 WHERE address = ?1 AND claim_key_hash IS NOT NULL")
      defer { statement.reset() }
      try statement.bind(1, address.canonicalAddress)
      try statement.bind(2, now)
      try statement.run()
    }
  }

  /// Releases the claim on `address` (the operator's `--release-claim`): the station stays, with its devices and
  /// settings, and can be claimed again; its devices stop counting as the owner's. False when it was not claimed.
  @discardableResult
  public func releaseClaim(
    _ address: String, client: String = AuditEntry.operatorClient, now: Int64
  ) throws(StoreError) -> Bool {
    let station = address.canonicalAddress
    return try writeBatch { () throws(StoreError) -> Bool in
      guard try unclaim(station) else { return false }
      try recordAudit(AuditEntry(station: station, at: now, action: .released, client: client))
      return true
    }
  }

  /// Releases every claim not refreshed with its key within `expiryMs` before `now` (the station expiry), each
  /// recorded as `lapsed`. Returns how many claims lapsed. Joins the caller's transaction (maintenance runs it
  /// beside the station prune).
  @discardableResult
  public func lapseClaims(now: Int64, expiryMs: Int64) throws(StoreError) -> Int {
    try writeBatch { () throws(StoreError) -> Int in
      let select = try prepared(
        "SELECT address FROM stations WHERE claim_key_hash IS NOT NULL AND claim_refreshed_at < ?1")
      var lapsed: [String] = []
      do {
        defer { select.reset() }
        try select.bind(1, now - expiryMs)
        while try select.step() { lapsed.append(select.text(0)) }
      }
      for station in lapsed where try unclaim(station) {
        try recordAudit(
          AuditEntry(
            station: station, at: now, action: .lapsed, client: AuditEntry.operatorClient,
            detail: "no request with the key within the station expiry"))
      }
      return lapsed.count
    }
  }

  /// Drops audit entries older than ``AuditEntry/retentionMs`` before `now`; returns how many. Maintenance runs it.
  @discardableResult
  public func pruneAuditTrail(now: Int64) throws(StoreError) -> Int {
    try writeTransaction { () throws(StoreError) -> Int in
      let prune = try prepared("DELETE FROM station_audit WHERE at < ?1")
      defer { prune.reset() }
      try prune.bind(1, now - AuditEntry.retentionMs)
      try prune.run()
      return changes
    }
  }

  /// Clears the claim of `station` (canonical), makes its devices keyless and deletes its forward targets (they
  /// were the former owner's: a released or lapsed claim must not keep sending the station's messages to them);
  /// the caller holds the transaction.
  func unclaim(_ station: String) throws(StoreError) -> Bool {
    let statement = try prepared(
      """
      UPDATE stations SET claim_key_hash = NULL, claimed_at = NULL, claim_refreshed_at = NULL, claim_proof = NULL,
        claim_seniority = NULL
      WHERE address = ?1 AND claim_key_hash IS NOT NULL
      """)
    defer { statement.reset() }
    try statement.bind(1, station)
    try statement.run()
    guard changes > 0 else { return false }
    try deleteClaimRequests(of: station)
    try dropOwnersHold(station)
    return true
  }

  /// What a claim that ends (released, lapsed, replaced) leaves of its owner on `station` (canonical): its devices
  /// become keyless and its forward targets (the owner's addresses) are deleted. The caller holds the transaction.
  func dropOwnersHold(_ station: String) throws(StoreError) {
    let devices = try prepared("UPDATE devices SET keyed = 0 WHERE station = ?1 AND keyed = 1")
    do {
      defer { devices.reset() }
      try devices.bind(1, station)
      try devices.run()
    }
    let targets = try prepared("DELETE FROM forward_targets WHERE station = ?1")
    defer { targets.reset() }
    try targets.bind(1, station)
    try targets.run()
  }

  /// Adds `entry` to its station's audit trail and trims the trail to its newest ``AuditEntry/keptPerStation``.
  /// Joins the caller's transaction.
  public func recordAudit(_ entry: AuditEntry) throws(StoreError) {
    try writeTransaction { () throws(StoreError) in
      let insert = try prepared(
        "INSERT INTO station_audit (station, at, action, client, detail) VALUES (?1, ?2, ?3, ?4, ?5)")
      defer { insert.reset() }
      let station = entry.station.canonicalAddress
      try insert.bind(1, station)
      try insert.bind(2, entry.at)
      try insert.bind(3, entry.action)
      try insert.bind(4, String(entry.client.prefix(64)))
      try insert.bind(5, String(entry.detail.prefix(200)))
      try insert.run()
      let trim = try prepared(
        """
        DELETE FROM station_audit WHERE station = ?1 AND id <= (
          SELECT id FROM station_audit WHERE station = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)
        """)
      defer { trim.reset() }
      try trim.bind(1, station)
      try trim.bind(2, AuditEntry.keptPerStation)
      try trim.run()
    }
  }

  /// The audit trail of `address` (any case), newest first, at most `limit` entries. Never writes.
  public func auditTrail(of address: String, limit: Int = AuditEntry.keptPerStation) throws(StoreError)
    -> [AuditEntry]
  {
    let statement = try prepared(
      "SELECT station, at, action, client, detail FROM station_audit WHERE station = ?1 ORDER BY id DESC LIMIT ?2"
    )
    defer { statement.reset() }
    try statement.bind(1, address.canonicalAddress)
    try statement.bind(2, max(0, limit))
    var entries: [AuditEntry] = []
    while try statement.step() {
      entries.append(
        AuditEntry(
          station: statement.text(0), at: statement.int64(1), action: try statement.value(2),
          client: statement.text(3), detail: statement.text(4)))
    }
    return entries
  }
}
