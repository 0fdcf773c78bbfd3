/// Stations and their devices: register and heartbeat, avatars, push tokens, and the station lists the
/// listener's filter and `aprs-cloud stations` read.
extension Database {
  /// Registers or heartbeats a station and returns it as stored.
  ///
  /// Creates the station if it is missing (a heartbeat re-creates a station the server lost)
  /// and sets `heartbeat_at = now`; a registration also sets `registered_at = now`. A non-nil
  /// `ackMessages` is recorded as the value register last carried, and sets the ACK policy (`server` or
  /// `never`, see `AckPolicy`) only when it differs from the value recorded before (for a station with none
  /// recorded: unless its policy is `device`), so a policy chosen in /v1/settings survives the app's
  /// launches; a policy it changes is recorded in the audit trail under `upsert.client`. Nil keeps all of it.
  /// `keyed` (the request proved the station key) refreshes the claim and makes the device the owner's
  /// (a keyed device stays keyed). A nil `platform` keeps the stored
  /// one. A non-empty `pushToken` upserts its device row (one per station and token): a known token only has its
  /// refresh time (and its Web Push keys, and with `upsert.wants` what it opted in to) updated. A token may be
  /// registered for several stations while each of its registrations carries `want:["ssids"]` (``Wants/ssids``;
  /// a heartbeat carries what the device's last register did); otherwise it moves to this station as it always
  /// did: its rows for other stations that do not want `ssids`, or all of them when this one does not, go. An iOS token is stored lower case (`DeviceToken.stored`), so every spelling of it is
  /// one row.
  public func upsertStation(_ upsert: StationUpsert, now: Int64) throws(StoreError) -> StationRecord {
    let address = upsert.address.canonicalAddress
    let base = upsert.base.canonicalAddress
    guard !address.isEmpty, !base.isEmpty else { throw .invalidArgument("empty station address or base") }
    guard (0...15).contains(upsert.ssid) else { throw .invalidArgument("ssid \(upsert.ssid) is not 0–15") }
    var token = upsert.pushToken.flatMap { $0.isEmpty ? nil : $0 }
    if token != nil, upsert.platform == nil {
      throw .invalidArgument("a push token needs a platform")
    }
    if let given = token, let platform = upsert.platform {
      token = DeviceToken.stored(given, platform: platform)
    }
    return try writeBatch { () throws(StoreError) in
      let upsertRow = try prepared(
        """
        INSERT INTO stations
          (address, base, ssid, platform, ack_messages, ack_policy, registered_at, heartbeat_at,
           register_ack_messages, created_at)
        VALUES (?1, ?2, ?3, ?4, coalesce(?5, 0), CASE WHEN ?5 THEN 'server' ELSE 'never' END, ?6, ?6, ?5,
          coalesce((SELECT min(created_at, ?6) FROM station_tombstones WHERE address = ?1), ?6))
        ON CONFLICT (address) DO UPDATE SET
          base = excluded.base,
          ssid = excluded.ssid,
          platform = coalesce(excluded.platform, stations.platform),
          ack_messages = CASE WHEN \(Self.registerAckApplies) THEN ?5 ELSE stations.ack_messages END,
          ack_policy = CASE WHEN \(Self.registerAckApplies)
            THEN CASE WHEN ?5 THEN 'server' ELSE 'never' END ELSE stations.ack_policy END,
          register_ack_messages = coalesce(?5, stations.register_ack_messages),
          registered_at = CASE WHEN ?7 THEN excluded.registered_at ELSE stations.registered_at END,
          heartbeat_at = excluded.heartbeat_at,
          claim_refreshed_at = CASE WHEN ?8 AND stations.claim_key_hash IS NOT NULL
            THEN excluded.heartbeat_at ELSE stations.claim_refreshed_at END
        """)
      defer { upsertRow.reset() }
      try upsertRow.bind(1, address)
      try upsertRow.bind(2, base)
      try upsertRow.bind(3, upsert.ssid)
      try upsertRow.bind(4, upsert.platform)
      try upsertRow.bind(5, upsert.ackMessages)
      try upsertRow.bind(6, now)
      try upsertRow.bind(7, upsert.isRegistration)
      try upsertRow.bind(8, upsert.keyed)
      let policyBefore = upsert.ackMessages == nil ? nil : try ackPolicy(of: address)
      try upsertRow.run()
      if let policyBefore, let policyAfter = try ackPolicy(of: address), policyAfter != policyBefore {
        try recordAudit(
          AuditEntry(
            station: address, at: now, action: .ackPolicy, client: upsert.client,
            detail: "register's ackMessages: \(policyBefore.rawValue) → \(policyAfter.rawValue)"))
      }

      if let token, let platform = upsert.platform {
        var wants = upsert.wants ?? []
        if upsert.wants == nil, let stored = try deviceWants(token: token, station: address) {
          wants = stored
        }
        let move = try prepared(
          "DELETE FROM devices WHERE token = ?1 AND station <> ?2 AND (NOT ?3 OR wants & ?4 = 0)")
        do {
          defer { move.reset() }
          try move.bind(1, token)
          try move.bind(2, address)
          try move.bind(3, wants.contains(.ssids))
          try move.bind(4, Wants.ssids.rawValue)
          try move.run()
        }
        let device = try prepared(
          """
          INSERT INTO devices
            (token, station, platform, registered_at, refreshed_at, push_p256dh, push_auth, keyed, wants,
             ack_messages)
          VALUES (?1, ?2, ?3,
            coalesce((SELECT first_registered_at FROM devices_seen WHERE station = ?2 AND token = ?1), ?4),
            ?4, ?5, ?6, ?7, ?8, ?9)
          ON CONFLICT (station, token) DO UPDATE SET
            keyed = max(devices.keyed, excluded.keyed),
            ack_messages = coalesce(excluded.ack_messages, devices.ack_messages),
            platform = excluded.platform,
            refreshed_at = excluded.refreshed_at,
            push_p256dh = excluded.push_p256dh,
            push_auth = excluded.push_auth,
            wants = excluded.wants
          """)
        defer { device.reset() }
        let keys = platform.isWebPush ? upsert.webPushKeys : nil
        try device.bind(1, token)
        try device.bind(2, address)
        try device.bind(3, platform)
        try device.bind(4, now)
        try device.bind(5, keys?.p256dhText)
        try device.bind(6, keys?.authText)
        try device.bind(7, upsert.keyed)
        try device.bind(8, wants.rawValue)
        try device.bind(9, upsert.deviceAckMessages)
        try device.run()
        // The token's first registration here outlives its device row (evicted, unregistered, wiped with the
        // station): a phone that comes back is as old as it was, the seniority claims are proven and taken back by.
        let seen = try prepared(
          """
          INSERT INTO devices_seen (station, token, first_registered_at, last_seen_at) VALUES (?1, ?2, ?3, ?3)
          ON CONFLICT (station, token) DO UPDATE SET last_seen_at = excluded.last_seen_at
          """)
        defer { seen.reset() }
        try seen.bind(1, address)
        try seen.bind(2, token)
        try seen.bind(3, now)
        try seen.run()
      }
      guard let record = try station(address) else {
        throw .sqlite(code: 0, message: "station \(address) vanished inside its own transaction")
      }
      return record
    }
  }

  /// Whether `station` (any case) has the device `token` (as stored: ``DeviceToken/stored(_:platform:)``). One point
  /// query.
  public func hasDevice(token: String, station: String) throws(StoreError) -> Bool {
    try deviceWants(token: token, station: station.canonicalAddress) != nil
  }

  /// What the device `token` of `station` (canonical) opted in to, nil when it is not registered there.
  private func deviceWants(token: String, station: String) throws(StoreError) -> Wants? {
    let statement = try prepared("SELECT wants FROM devices WHERE token = ?1 AND station = ?2")
    defer { statement.reset() }
    try statement.bind(1, token)
    try statement.bind(2, station)
    return try statement.step() ? Wants(rawValue: statement.int(0)) : nil
  }

  /// The SQL condition under which register's `ackMessages` (`?5`) changes the stored ACK policy inside the
  /// station upsert (`stations` is the row as it was): see ``upsertStation(_:now:)``.
  static let registerAckApplies = """
    ?5 IS NOT NULL AND ((stations.register_ack_messages IS NULL AND stations.ack_policy <> 'device')
      OR stations.register_ack_messages <> ?5)
    """

  /// The stored ACK policy of `address` (canonical), nil when the station is not stored.
  private func ackPolicy(of address: String) throws(StoreError) -> AckPolicy? {
    let statement = try prepared("SELECT ack_policy FROM stations WHERE address = ?1")
    defer { statement.reset() }
    try statement.bind(1, address)
    return try statement.step() ? statement.optionalValue(0) : nil
  }

  /// The station stored under `address` (any case), or nil.
  public func station(_ address: String) throws(StoreError) -> StationRecord? {
    let statement = try prepared(
      """
      SELECT address, base, ssid, platform, ack_messages, avatar_hash, avatar_cleared_at,
             registered_at, heartbeat_at, last_sync_cursor, last_sync_at
      FROM stations WHERE address = ?1
      """)
    defer { statement.reset() }
    try statement.bind(1, address.canonicalAddress)
    guard try statement.step() else { return nil }
    return StationRecord(
      address: statement.text(0), base: statement.text(1), ssid: statement.int(2),
      platform: statement.optionalValue(3), ackMessages: statement.bool(4),
      avatarHash: statement.text(5), avatarClearedAt: statement.optionalInt64(6),
      registeredAt: statement.int64(7), heartbeatAt: statement.int64(8),
      lastSyncCursor: statement.int64(9), lastSyncAt: statement.optionalInt64(10))
  }

  /// Stores a station's avatar. `icon` and `image` both nil means the user cleared it: the
  /// clear time (`now`) is kept and nothing else (distinct from never set). Otherwise `hash`
  /// (non-empty) is stored with them and any clear time is forgotten. Returns false when the
  /// station is unknown (nothing is stored).
  @discardableResult
  public func setAvatar(
    _ address: String, icon: String?, image: String?, hash: String, now: Int64
  ) throws(StoreError) -> Bool {
    let cleared = icon == nil && image == nil
    guard cleared || !hash.isEmpty else { throw .invalidArgument("an avatar needs a hash") }
    return try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        """
        UPDATE stations SET avatar_icon = ?2, avatar_image = ?3, avatar_hash = ?4,
          avatar_updated_at = ?5, avatar_cleared_at = CASE WHEN ?6 THEN ?5 END
        WHERE address = ?1
        """)
      defer { statement.reset() }
      try statement.bind(1, address.canonicalAddress)
      try statement.bind(2, icon)
      try statement.bind(3, image)
      try statement.bind(4, cleared ? nil : hash)
      try statement.bind(5, now)
      try statement.bind(6, cleared)
      try statement.run()
      return changes > 0
    }
  }

  /// The stored avatars of `addresses` (any case), keyed by upper-case address. Stations
  /// without one (never set, cleared, unknown) are left out. Reads one snapshot.
  public func avatars(for addresses: [String]) throws(StoreError) -> [String: Avatar] {
    guard !addresses.isEmpty else { return [:] }
    return try readTransaction { () throws(StoreError) in
      let statement = try prepared(
        "SELECT avatar_icon, avatar_image, avatar_hash FROM stations WHERE address = ?1 AND avatar_hash IS NOT NULL"
      )
      var found: [String: Avatar] = [:]
      for address in Set(addresses.map(\.canonicalAddress)) {
        defer { statement.reset() }
        try statement.bind(1, address)
        if try statement.step() {
          found[address] = Avatar(
            icon: statement.optionalText(0), image: statement.optionalText(1), hash: statement.text(2))
        }
      }
      return found
    }
  }

  /// Drops a station with its devices, avatar, messages and pending pushes (all cascade) and its
  /// dedup rows, so a message to the station registered anew is stored again (and only then
  /// ACKed). Returns false when it was not registered.
  @discardableResult
  public func deleteStation(_ address: String) throws(StoreError) -> Bool {
    let station = address.canonicalAddress
    return try writeTransaction { () throws(StoreError) in
      try deleteDedupRows(station: station)
      let statement = try prepared("DELETE FROM stations WHERE address = ?1")
      defer { statement.reset() }
      try statement.bind(1, station)
      try statement.run()
      return changes > 0
    }
  }

  /// Drops a station as ``deleteStation(_:)`` does and records the whole-station unregister in its audit trail
  /// (which outlives it) under `client`, in one transaction. Returns false when it was not registered.
  @discardableResult
  public func unregisterStation(_ address: String, client: String, now: Int64) throws(StoreError) -> Bool {
    try writeBatch { () throws(StoreError) -> Bool in
      guard try deleteStation(address) else { return false }
      try recordAudit(AuditEntry(station: address, at: now, action: .unregistered, client: client))
      return true
    }
  }

  /// Drops one device of a station (unregister with a push token); the station stays. An iOS
  /// token matches in any case (it is stored lower case). Returns false when that token was not
  /// registered for that station.
  @discardableResult
  public func deleteDevice(token: String, station: String) throws(StoreError) -> Bool {
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        "DELETE FROM devices WHERE (token = ?1 OR (platform = 'ios' AND token = ?3)) AND station = ?2")
      defer { statement.reset() }
      try statement.bind(1, token)
      try statement.bind(2, station.canonicalAddress)
      try statement.bind(3, DeviceToken.stored(token, platform: .ios))
      try statement.run()
      return changes > 0
    }
  }

  /// Drops a token the push provider called invalid, unless it was refreshed (registered or
  /// heartbeated) at or after `refreshedBefore`: APNs says when it learned the token was dead,
  /// and a token the app sent again after that may be alive. Returns true when it was deleted.
  @discardableResult
  public func deleteDevice(token: String, refreshedBefore: Int64) throws(StoreError) -> Bool {
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared("DELETE FROM devices WHERE token = ?1 AND refreshed_at < ?2")
      defer { statement.reset() }
      try statement.bind(1, token)
      try statement.bind(2, refreshedBefore)
      try statement.run()
      return changes > 0
    }
  }

  /// Drops a token wherever it is registered (the push provider called it invalid).
  /// Returns false when it was not registered.
  @discardableResult
  public func deleteDevice(token: String) throws(StoreError) -> Bool {
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared("DELETE FROM devices WHERE token = ?1")
      defer { statement.reset() }
      try statement.bind(1, token)
      try statement.run()
      return changes > 0
    }
  }

  /// The devices of a station, most recently refreshed first. With `refreshedSince`, only
  /// tokens refreshed at or after that time (expired tokens are not used for pushes). A token
  /// stored with a platform this build does not know is left out.
  public func devices(of address: String, refreshedSince: Int64 = .min) throws(StoreError) -> [DeviceRecord] {
    let statement = try prepared(
      """
      SELECT token, station, platform, registered_at, refreshed_at, apns_environment, push_p256dh, push_auth, keyed,
             wants
      FROM devices WHERE station = ?1 AND refreshed_at >= ?2 ORDER BY refreshed_at DESC, id DESC
      """)
    defer { statement.reset() }
    try statement.bind(1, address.canonicalAddress)
    try statement.bind(2, refreshedSince)
    var devices: [DeviceRecord] = []
    while try statement.step() {
      guard let platform: DevicePlatform = statement.optionalValue(2) else { continue }
      devices.append(
        DeviceRecord(
          token: statement.text(0), station: statement.text(1), platform: platform,
          registeredAt: statement.int64(3), refreshedAt: statement.int64(4),
          apnsEnvironment: platform == .ios ? statement.optionalValue(5) : nil,
          webPushKeys: platform.isWebPush
            ? webPushKeys(statement.optionalText(6), statement.optionalText(7)) : nil,
          keyed: statement.bool(8), wants: Wants(rawValue: statement.int(9))))
    }
    return devices
  }

  /// Stored subscription keys, nil when either is missing or unreadable.
  private func webPushKeys(_ p256dh: String?, _ auth: String?) -> WebPushKeys? {
    guard let p256dh, let auth else { return nil }
    return WebPushKeys(p256dh: p256dh, auth: auth)
  }

  /// The avatar of `address` (any case) for a push: stored, cleared (a known station that
  /// cleared it), or none (never set, or not a known station).
  public func pushAvatar(of address: String) throws(StoreError) -> PushAvatar {
    let statement = try prepared(
      "SELECT avatar_icon, avatar_image, avatar_hash, avatar_cleared_at FROM stations WHERE address = ?1")
    defer { statement.reset() }
    try statement.bind(1, address.canonicalAddress)
    guard try statement.step() else { return .none }
    if !statement.isNull(2) {
      return .stored(
        Avatar(icon: statement.optionalText(0), image: statement.optionalText(1), hash: statement.text(2)))
    }
    return statement.isNull(3) ? .none : .cleared
  }

  /// Every registered station with its device count, for `aprs-cloud stations`, by address.
  /// With `includeExpired` false only the live ones (heard within `expiryMs` before `now`).
  /// Never writes, so it is safe on a read-only connection.
  public func stationSummaries(
    now: Int64, expiryMs: Int64, includeExpired: Bool = true
  ) throws(StoreError) -> [StationSummary] {
    let statement = try prepared(
      """
      SELECT stations.address, stations.platform, stations.registered_at, stations.heartbeat_at,
             stations.last_sync_at, stations.avatar_hash IS NOT NULL, stations.avatar_cleared_at IS NOT NULL,
             stations.ack_messages,
             (SELECT count(*) FROM devices WHERE devices.station = stations.address),
             (SELECT count(*) FROM messages WHERE messages.station = stations.address)
      FROM stations WHERE ?2 OR stations.heartbeat_at >= ?1 ORDER BY stations.address
      """)
    defer { statement.reset() }
    try statement.bind(1, now - expiryMs)
    try statement.bind(2, includeExpired)
    var summaries: [StationSummary] = []
    while try statement.step() {
      let avatar: StationSummary.AvatarState =
        statement.bool(5) ? .set : statement.bool(6) ? .cleared : .none
      summaries.append(
        StationSummary(
          address: statement.text(0), platform: statement.optionalValue(1), registeredAt: statement.int64(2),
          heartbeatAt: statement.int64(3), lastSyncAt: statement.optionalInt64(4), avatar: avatar,
          ackMessages: statement.bool(7), devices: statement.int(8), messages: statement.int(9),
          live: statement.int64(3) >= now - expiryMs))
    }
    return summaries
  }

  /// Stations heard from (register or heartbeat) within `expiryMs` before `now`, by address:
  /// the ones the listener's filter should hold.
  public func liveStations(now: Int64, expiryMs: Int64) throws(StoreError) -> [LiveStation] {
    let statement = try prepared(
      "SELECT address, ack_messages FROM stations WHERE heartbeat_at >= ?1 ORDER BY address")
    defer { statement.reset() }
    try statement.bind(1, now - expiryMs)
    var stations: [LiveStation] = []
    while try statement.step() {
      stations.append(LiveStation(address: statement.text(0), ackMessages: statement.bool(1)))
    }
    return stations
  }
}
