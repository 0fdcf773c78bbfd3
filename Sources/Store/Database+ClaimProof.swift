/// Proving a claim where a station is in use (docs/design.md "Who may do what"; sql/020_claim_proof.sql): the
/// requests that wait for a code, the rounds of codes the push sender pushes to the station's older devices (their
/// salted hashes only), and the proof that makes a claim govern the station or take it back.
extension Database {
  /// Whether someone already uses `address`: the station was stored more than ``ClaimRequest/graceMs`` before
  /// `now` and has a device, a stored message or a register or heartbeat within `expiryMs`. A station the claimant
  /// registered moments ago (the web client registers, then claims) is not in use; one deleted (a whole-station
  /// unregister) but heard within `expiryMs` still is (`station_tombstones`), so wiping a station and claiming
  /// it at once is no first-come claim. Two point queries.
  public func stationInUse(_ address: String, now: Int64, expiryMs: Int64) throws(StoreError) -> Bool {
    let statement = try prepared(
      """
      SELECT 1 FROM stations s WHERE s.address = ?1 AND coalesce(s.created_at, s.registered_at) < ?2 AND (
        s.heartbeat_at >= ?3
        OR EXISTS (SELECT 1 FROM devices d WHERE d.station = s.address AND d.refreshed_at >= ?3)
        OR EXISTS (SELECT 1 FROM messages m WHERE m.station = s.address))
      UNION ALL
      SELECT 1 FROM station_tombstones t WHERE t.address = ?1 AND t.created_at < ?2 AND t.last_heard_at >= ?3
      """)
    defer { statement.reset() }
    try statement.bind(1, address.canonicalAddress)
    try statement.bind(2, now - ClaimRequest.graceMs)
    try statement.bind(3, now - expiryMs)
    return try statement.step()
  }

  /// The devices of `address` that would get a round of codes: push devices registered before `seniority` and
  /// refreshed since `refreshedSince` (epoch ms), oldest first.
  public func claimCodeRecipients(_ address: String, before seniority: Int64, refreshedSince: Int64)
    throws(StoreError) -> [DeviceRecord]
  {
    try devices(of: address, refreshedSince: refreshedSince)
      .filter { $0.registeredAt < seniority }
      .sorted { $0.registeredAt < $1.registeredAt }
  }

  /// Adds `request` (replacing one of the same key) within the caller's transaction, unless the station has
  /// ``ClaimRequest/pendingPerStation`` other requests waiting: then the oldest of the same client's goes, else the
  /// oldest whose codes expired with no round due, else nothing is added (false). So nobody pushes out a request
  /// whose codes are live but its own: a squatter cannot void the real user's take-back by asking again.
  @discardableResult
  func insertClaimRequest(_ request: ClaimRequest) throws(StoreError) -> Bool {
    let station = request.station.canonicalAddress
    let client = String(request.client.prefix(64))
    let count = try prepared("SELECT count(*) FROM claim_requests WHERE station = ?1 AND key_hash <> ?2")
    let waiting: Int
    do {
      defer { count.reset() }
      try count.bind(1, station)
      try count.bind(2, request.keyHash)
      _ = try count.step()
      waiting = Int(count.int64(0))
    }
    if waiting >= ClaimRequest.pendingPerStation {
      let evict = try prepared(
        """
        DELETE FROM claim_requests WHERE station = ?1 AND key_hash = (
          SELECT key_hash FROM claim_requests WHERE station = ?1 AND key_hash <> ?2
            AND (client = ?3 OR (codes_due = 0 AND coalesce(codes_expire_at, 0) < ?4))
          ORDER BY client = ?3 DESC, requested_at LIMIT 1)
        """)
      defer { evict.reset() }
      try evict.bind(1, station)
      try evict.bind(2, request.keyHash)
      try evict.bind(3, client)
      try evict.bind(4, request.requestedAt)
      try evict.run()
      guard changes > 0 else { return false }
    }
    let insert = try prepared(
      """
      INSERT OR REPLACE INTO claim_requests (station, key_hash, requested_at, seniority, client, codes_due)
      VALUES (?1, ?2, ?3, ?4, ?5, 1)
      """)
    defer { insert.reset() }
    try insert.bind(1, station)
    try insert.bind(2, request.keyHash)
    try insert.bind(3, request.requestedAt)
    try insert.bind(4, request.seniority)
    try insert.bind(5, client)
    try insert.run()
    return true
  }

  /// Asks for the station to be taken back from its claim by the key whose SHA-256 is `request.keyHash`: codes go
  /// to the devices registered before `request.seniority`. One write transaction (joins the caller's batch).
  /// False when the station has as many requests with live codes waiting as it takes
  /// (``insertClaimRequest(_:)``): nothing was added.
  public func requestClaim(_ request: ClaimRequest) throws(StoreError) -> Bool {
    guard request.keyHash.utf8.count == 64 else { throw .invalidArgument("a key hash is 64 hex characters") }
    return try writeBatch { () throws(StoreError) -> Bool in try insertClaimRequest(request) }
  }

  /// Deletes every request of `station` (canonical) within the caller's transaction.
  func deleteClaimRequests(of station: String) throws(StoreError) {
    let delete = try prepared("DELETE FROM claim_requests WHERE station = ?1")
    defer { delete.reset() }
    try delete.bind(1, station)
    try delete.run()
  }

  /// Withdraws the request of `keyHash` on `address`; false when there was none.
  public func withdrawClaimRequest(_ address: String, keyHash: String) throws(StoreError) -> Bool {
    try writeTransaction { () throws(StoreError) -> Bool in
      let delete = try prepared("DELETE FROM claim_requests WHERE station = ?1 AND key_hash = ?2")
      defer { delete.reset() }
      try delete.bind(1, address.canonicalAddress)
      try delete.bind(2, keyHash)
      try delete.run()
      return changes > 0
    }
  }

  private static let requestColumns =
    "station, key_hash, requested_at, seniority, client, codes_due, codes_pushed, codes_expire_at, wrong"

  private func readRequest(_ statement: Statement) -> ClaimRequest {
    ClaimRequest(
      station: statement.text(0), keyHash: statement.text(1), requestedAt: statement.int64(2),
      seniority: statement.int64(3), client: statement.text(4), codesDue: statement.int64(5) != 0,
      codesPushed: Int(statement.int64(6)), codesExpireAt: statement.optionalInt64(7),
      wrong: Int(statement.int64(8)))
  }

  /// The request of the key whose SHA-256 is `keyHash` on `address`, if one waits. Never writes.
  public func claimRequest(_ address: String, keyHash: String) throws(StoreError) -> ClaimRequest? {
    let statement = try prepared(
      "SELECT \(Self.requestColumns) FROM claim_requests WHERE station = ?1 AND key_hash = ?2")
    defer { statement.reset() }
    try statement.bind(1, address.canonicalAddress)
    try statement.bind(2, keyHash)
    return try statement.step() ? readRequest(statement) : nil
  }

  /// The requests of `address`, oldest first (the operator's view). Never writes.
  public func claimRequests(of address: String) throws(StoreError) -> [ClaimRequest] {
    let statement = try prepared(
      "SELECT \(Self.requestColumns) FROM claim_requests WHERE station = ?1 ORDER BY requested_at")
    defer { statement.reset() }
    try statement.bind(1, address.canonicalAddress)
    var requests: [ClaimRequest] = []
    while try statement.step() { requests.append(readRequest(statement)) }
    return requests
  }

  /// The requests whose round of codes the push sender is to push, oldest first, at most `limit`. Never writes.
  public func dueClaimRequests(limit: Int = 100) throws(StoreError) -> [ClaimRequest] {
    let statement = try prepared(
      "SELECT \(Self.requestColumns) FROM claim_requests WHERE codes_due = 1 ORDER BY requested_at LIMIT ?1")
    defer { statement.reset() }
    try statement.bind(1, max(0, limit))
    var requests: [ClaimRequest] = []
    while try statement.step() { requests.append(readRequest(statement)) }
    return requests
  }

  /// Starts a round of `request`'s codes: the round's salted hashes replace the last round's, valid until
  /// `expiresAt`, its wrong count starts again and the request is no longer due. The push sender calls it before
  /// it pushes the codes, so a code that reaches a device can be checked. False when the request is gone.
  public func beginClaimCodes(_ request: ClaimRequest, codes: [ClaimCode], expiresAt: Int64)
    throws(StoreError)
    -> Bool
  {
    try writeTransaction { () throws(StoreError) -> Bool in
      let update = try prepared(
        """
        UPDATE claim_requests SET codes_due = 0, codes_pushed = codes_pushed + 1, codes_expire_at = ?3, wrong = 0
        WHERE station = ?1 AND key_hash = ?2
        """)
      do {
        defer { update.reset() }
        try update.bind(1, request.station)
        try update.bind(2, request.keyHash)
        try update.bind(3, expiresAt)
        try update.run()
      }
      guard changes > 0 else { return false }
      try deleteClaimCodes(request.station, keyHash: request.keyHash)
      let insert = try prepared(
        """
        INSERT OR REPLACE INTO claim_codes (station, key_hash, token, registered_at, salt, code_hash)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6)
        """)
      for code in codes {
        defer { insert.reset() }
        try insert.bind(1, request.station)
        try insert.bind(2, request.keyHash)
        try insert.bind(3, code.token)
        try insert.bind(4, code.registeredAt)
        try insert.bind(5, code.salt)
        try insert.bind(6, code.codeHash)
        try insert.run()
      }
      return true
    }
  }

  /// The current round's codes of the request of `keyHash` on `address` (hashes only). Never writes.
  public func claimCodes(_ address: String, keyHash: String) throws(StoreError) -> [ClaimCode] {
    let statement = try prepared(
      "SELECT token, registered_at, salt, code_hash FROM claim_codes WHERE station = ?1 AND key_hash = ?2")
    defer { statement.reset() }
    try statement.bind(1, address.canonicalAddress)
    try statement.bind(2, keyHash)
    var codes: [ClaimCode] = []
    while try statement.step() {
      codes.append(
        ClaimCode(
          token: statement.text(0), registeredAt: statement.int64(1), salt: statement.text(2),
          codeHash: statement.text(3)))
    }
    return codes
  }

  /// Takes one of the current round's ``ClaimRequest/wrongCodesAllowed`` tries of the request of `keyHash` on
  /// `address` before the code is compared, in one write transaction, so that guesses racing each other are held
  /// to the limit too: the try's number (1…) and the round's codes, or nil when the round has no try left (or no
  /// codes). A wrong code on the last try voids the round (``voidClaimCodes(_:keyHash:)``).
  public func takeClaimAttempt(_ address: String, keyHash: String) throws(StoreError)
    -> (attempt: Int, codes: [ClaimCode])?
  {
    let station = address.canonicalAddress
    return try writeTransaction { () throws(StoreError) -> (attempt: Int, codes: [ClaimCode])? in
      let update = try prepared(
        """
        UPDATE claim_requests SET wrong = wrong + 1
        WHERE station = ?1 AND key_hash = ?2 AND wrong < ?3 RETURNING wrong
        """)
      let attempt: Int
      do {
        defer { update.reset() }
        try update.bind(1, station)
        try update.bind(2, keyHash)
        try update.bind(3, ClaimRequest.wrongCodesAllowed)
        guard try update.step() else { return nil }
        attempt = Int(update.int64(0))
      }
      let codes = try claimCodes(station, keyHash: keyHash)
      return codes.isEmpty ? nil : (attempt, codes)
    }
  }

  /// Voids the current round's codes of the request of `keyHash` on `address` (its tries are used up).
  public func voidClaimCodes(_ address: String, keyHash: String) throws(StoreError) {
    try writeTransaction { () throws(StoreError) in
      try deleteClaimCodes(address.canonicalAddress, keyHash: keyHash)
    }
  }

  /// Deletes the round's codes of the request of `keyHash` on `station` (canonical); the caller holds the
  /// transaction (a void, or a new round that replaces them).
  private func deleteClaimCodes(_ station: String, keyHash: String) throws(StoreError) {
    let delete = try prepared("DELETE FROM claim_codes WHERE station = ?1 AND key_hash = ?2")
    defer { delete.reset() }
    try delete.bind(1, station)
    try delete.bind(2, keyHash)
    try delete.run()
  }

  /// Asks for another round of codes for the request of `keyHash` on `address`; false when there is no request or
  /// it had its ``ClaimRequest/roundsPerRequest``.
  public func resendClaimCodes(_ address: String, keyHash: String) throws(StoreError) -> Bool {
    try writeTransaction { () throws(StoreError) -> Bool in
      let update = try prepared(
        """
        UPDATE claim_requests SET codes_due = 1
        WHERE station = ?1 AND key_hash = ?2 AND codes_due = 0 AND codes_pushed < ?3
        """)
      defer { update.reset() }
      try update.bind(1, address.canonicalAddress)
      try update.bind(2, keyHash)
      try update.bind(3, ClaimRequest.roundsPerRequest)
      try update.run()
      return changes > 0
    }
  }

  /// Proves the request of `keyHash` on `address` with the code of the device `token`, registered at
  /// `seniority`; the caller checked the code. In one write transaction:
  /// - the station's own provisional claim (or an unproven one of the same key) becomes proven;
  /// - another claim is replaced: the key becomes the station's, its devices keyless, its forward targets gone
  ///   (they were the replaced owner's addresses), and its key hash is kept so its 401 says why;
  /// - the device that proved it is the new claim's (keyed); the station's requests are all done;
  /// - the audit trail records `proven` (and `replaced`) under `client`.
  public func proveClaim(
    _ address: String, keyHash: String, token: String, seniority: Int64, client: String, now: Int64
  ) throws(StoreError) -> ProofOutcome {
    let station = address.canonicalAddress
    return try writeBatch { () throws(StoreError) -> ProofOutcome in
      guard try claimRequest(station, keyHash: keyHash) != nil,
        case .claimed(let claim) = try stationClaim(station)
      else { return .gone }
      let outcome: ProofOutcome
      if claim.keyHash == keyHash {
        outcome = .proven
      } else {
        outcome = .replaced(previousKeyHash: claim.keyHash)
        try dropOwnersHold(station)
      }
      let update = try prepared(
        """
        UPDATE stations SET claim_key_hash = ?2, claim_proof = 'proven', claim_seniority = ?3,
          claim_refreshed_at = ?4,
          claimed_at = CASE WHEN claim_key_hash = ?2 THEN claimed_at ELSE ?4 END,
          claim_replaced_hash = CASE WHEN claim_key_hash = ?2 THEN claim_replaced_hash ELSE claim_key_hash END
        WHERE address = ?1
        """)
      do {
        defer { update.reset() }
        try update.bind(1, station)
        try update.bind(2, keyHash)
        try update.bind(3, seniority)
        try update.bind(4, now)
        try update.run()
      }
      let adopt = try prepared("UPDATE devices SET keyed = 1 WHERE station = ?1 AND token = ?2")
      do {
        defer { adopt.reset() }
        try adopt.bind(1, station)
        try adopt.bind(2, token)
        try adopt.run()
      }
      try deleteClaimRequests(of: station)
      try recordAudit(
        AuditEntry(
          station: station, at: now, action: .proven, client: client,
          detail: "a code pushed to a device registered at \(seniority) ms"))
      if case .replaced = outcome {
        try recordAudit(
          AuditEntry(
            station: station, at: now, action: .replaced, client: client,
            detail:
              "the station was taken back from a \(claim.proof.rawValue) claim made at \(claim.claimedAt) ms")
        )
      }
      return outcome
    }
  }

  /// The operator approves the claim of `address` (`aprs-cloud stations CALL --approve-claim`): it becomes proven
  /// and nobody can take it back (seniority 0); its requests are done. False when the station is not claimed.
  public func approveClaim(_ address: String, now: Int64) throws(StoreError) -> Bool {
    let station = address.canonicalAddress
    return try writeBatch { () throws(StoreError) -> Bool in
      let update = try prepared(
        """
        UPDATE stations SET claim_proof = 'proven', claim_seniority = 0, claim_refreshed_at = ?2
        WHERE address = ?1 AND claim_key_hash IS NOT NULL
        """)
      do {
        defer { update.reset() }
        try update.bind(1, station)
        try update.bind(2, now)
        try update.run()
      }
      guard changes > 0 else { return false }
      try deleteClaimRequests(of: station)
      try recordAudit(
        AuditEntry(
          station: station, at: now, action: .proven, client: AuditEntry.operatorClient,
          detail: "approved by the operator"))
      return true
    }
  }

  /// Deletes the requests whose codes are past use (the last round expired, or the request was made without a
  /// round, more than a day before `now`) and releases the provisional claims that were not proven within a day,
  /// each recorded as `lapsed`. Returns how many requests went. Maintenance runs it.
  @discardableResult
  public func pruneClaimRequests(now: Int64) throws(StoreError) -> Int {
    try writeBatch { () throws(StoreError) -> Int in
      let dayAgo = now - 86_400_000
      let select = try prepared(
        "SELECT address FROM stations WHERE claim_proof = 'provisional' AND claimed_at < ?1")
      var lapsed: [String] = []
      do {
        defer { select.reset() }
        try select.bind(1, dayAgo)
        while try select.step() { lapsed.append(select.text(0)) }
      }
      for station in lapsed where try unclaim(station) {
        try recordAudit(
          AuditEntry(
            station: station, at: now, action: .lapsed, client: AuditEntry.operatorClient,
            detail: "a provisional claim not proven within a day"))
      }
      let prune = try prepared(
        "DELETE FROM claim_requests WHERE coalesce(codes_expire_at, requested_at) < ?1")
      defer { prune.reset() }
      try prune.bind(1, dayAgo)
      try prune.run()
      return changes
    }
  }

  /// Drops what is remembered of deleted stations (their tombstones) and of devices (their tokens' first
  /// registrations) last heard more than `expiryMs` before `now`; returns how many rows went. Maintenance runs it.
  @discardableResult
  public func pruneStationHistory(now: Int64, expiryMs: Int64) throws(StoreError) -> Int {
    try writeTransaction { () throws(StoreError) -> Int in
      var pruned = 0
      for sql in [
        "DELETE FROM station_tombstones WHERE last_heard_at < ?1",
        "DELETE FROM devices_seen WHERE last_seen_at < ?1",
      ] {
        let prune = try prepared(sql)
        defer { prune.reset() }
        try prune.bind(1, now - expiryMs)
        try prune.run()
        pruned += changes
      }
      return pruned
    }
  }
}
