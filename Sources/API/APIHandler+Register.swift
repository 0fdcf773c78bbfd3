import APRS
import JSON
import Store

extension APIHandler {
  /// `POST /v1/register`: create or refresh the station and its device, apply an avatar update,
  /// and (with `wantHistory`) return the messages newer than `since`. Without history nothing is
  /// read and `serverTime` is `since` unchanged (docs/protocol.md: the app stores it as its cursor).
  ///
  /// On a claimed station without the key (`access` `.guest`) the device joins the keyless pool and `ackMessages`
  /// is ignored; the answer is the same.
  func register(_ caller: Caller) throws(APIError) -> APIResponse {
    let (body, station, access, client, now) = (
      caller.body, caller.station, caller.devices, caller.client, caller.now
    )
    let device = try DeviceFields(body, allowPrivateEndpoints: config.allowPrivatePushEndpoints)
    // Sets the ACK policy (`server` or `never`); left out, the stored policy stays (a new station: `never`).
    let ackMessages = try body.bool("ackMessages")
    let wantHistory = try body.bool("wantHistory") ?? false
    let since = try body.int("since", in: 0...Int64.max) ?? 0
    let wants = try body.wants()
    let avatar = try AvatarUpdate(body)
    let avatarResult = try refresh(
      station, device: device, ackMessages: ackMessages, isRegistration: true, avatar: avatar, access: access,
      client: client, now: now, wants: wants)
    let history: SyncResult? =
      wantHistory
      ? try store { () throws(StoreError) in
        try database.sync(
          station: station.description, since: since, now: now, countsAsPull: access != .guest,
          wants: wants)
      } : nil
    if let history, access.isOwner { markPulled(by: device.pushToken, station: station.description, history) }
    if let history { noteSync(history) }
    var writer = JSONWriter(capacity: 512 + (history?.messages.count ?? 0) * 128)
    writer.beginObject()
    if let history { writeMessages(history.messages, wants: wants, to: &writer) }
    writer.key("serverTime")
    writer.int(history?.serverTime ?? since)
    writeAvatarEcho(avatarResult, to: &writer)
    writeAvatarHashes(history?.avatarHashes ?? [:], to: &writer)
    if let history, wants.contains(.inbox) { Self.writeInbox(history, to: &writer) }
    writer.endObject()
    return .ok(writer, station: station.description)
  }

  /// `POST /v1/heartbeat`: refresh (or re-create) the station and its device; apply an avatar update.
  func heartbeat(_ caller: Caller) throws(APIError) -> APIResponse {
    let (body, station, access, client, now) = (
      caller.body, caller.station, caller.devices, caller.client, caller.now
    )
    let device = try DeviceFields(body, allowPrivateEndpoints: config.allowPrivatePushEndpoints)
    let avatar = try AvatarUpdate(body)
    let avatarResult = try refresh(
      station, device: device, ackMessages: nil, isRegistration: false, avatar: avatar, access: access,
      client: client, now: now)
    var writer = JSONWriter(capacity: 128)
    writer.beginObject()
    writeAvatarEcho(avatarResult, to: &writer)
    writer.endObject()
    return .ok(writer, station: station.description)
  }

  /// The avatar hash the server now holds for the caller, and why an upload was refused, if it was.
  struct AvatarResult {
    var hash: String
    var refusal: String?
  }

  /// What a refresh's one transaction came to.
  private enum RefreshOutcome {
    case limited(what: String, retryAfterMs: Int64)
    case full(String)
    case done(AvatarResult)
  }

  /// In ONE write transaction (one commit), in this order:
  /// 1. a station not stored yet (a heartbeat that re-creates one counts) must fit `maxStations`
  ///    (else 503) and the client's `newStationsPerAddressPerHour`, `newStationsPerNetworkPerHour` and
  ///    `newStationsPerWideNetworkPerHour` (else 429; `admitNewStation`);
  /// 2. the station's own rate limit (`registrationsPerHour` or `heartbeatsPerHour`, else 429);
  /// 3. the station and device upsert, then the station's devices trimmed to `devicesPerStation` (on a
  ///    claimed station: the owner's devices to `devicesPerStation`, the keyless ones to
  ///    `keylessDevicesPerStation`, each class apart, so keyless ones never push out the owner's; a keyless
  ///    device on a station whose owner set `keylessDevices:"deny"` is a 403);
  /// 4. the avatar update within `avatarBytesTotal`, the station's `avatarUploadsPerHour` and the
  ///    address's `avatarUploadsPerAddressPerHour`: past any of them only the avatar is refused.
  /// A refused request writes nothing but its hit counter (`/metrics`). `wants` (register's `want`) is stored with
  /// the device; nil (a heartbeat) keeps what the device's last register opted in to.
  func refresh(
    _ station: StationAddress, device: DeviceFields, ackMessages: Bool?, isRegistration: Bool,
    avatar: AvatarUpdate, access: StationAccess, client: ClientAddress, now: Int64, wants: Wants? = nil
  ) throws(APIError) -> AvatarResult {
    let address = station.description
    // `deny` refuses new keyless tokens only: a device registered before (the app that was there when a claim
    // was made) keeps refreshing, so a claim cannot cut off a phone that already gets the station's pushes.
    if access == .guest, let token = device.pushToken,
      try store({ () throws(StoreError) -> Bool in
        guard try database.stationSettings(address)?.keylessDevices == .deny else { return false }
        return try !database.hasDevice(token: token, station: address)
      })
    {
      throw .forbidden(
        "\(address) is claimed and its owner takes no new devices without the station key (keylessDevices: deny)"
      )
    }
    let upsert = StationUpsert(
      address: address, base: station.base, ssid: station.ssid, platform: device.platform,
      pushToken: device.pushToken, ackMessages: access == .guest ? nil : ackMessages,
      isRegistration: isRegistration, webPushKeys: device.webPushKeys, keyed: access.isOwner,
      client: client.key, wants: wants, deviceAckMessages: ackMessages)
    let devicePool: (keep: Int, keyed: Bool?) =
      switch access {
      case .unclaimed: (config.devicesPerStation, nil)
      case .owner: (config.devicesPerStation, true)
      case .guest: (config.keylessDevicesPerStation, false)
      // Never reached: the router hands a waiting claim's requests the keyless access of the station.
      case .provisional: (config.keylessDevicesPerStation, false)
      }
    let outcome = try store { () throws(StoreError) -> RefreshOutcome in
      try database.writeBatch { () throws(StoreError) -> RefreshOutcome in
        let existing = try database.hasStation(address)
        if !existing {
          if try database.stationCount() >= config.maxStations {
            try database.countLimitHit(.maxStations)
            return .full(
              "the server is full: it holds its maximum of \(config.maxStations) stations; no new station"
                + " can register until some expire")
          }
          if let refusal = try admitNewStation(from: client, now: now) {
            return .limited(what: refusal.what, retryAfterMs: refusal.retryAfterMs)
          }
        }
        let budget = try refreshBudget(
          address, device: device, access: access, client: client, isRegistration: isRegistration,
          existing: existing)
        let refusals = try database.consumeRates(budget.counts, windowMs: Self.rateWindowMs, now: now)
        if let widest = refusals.last {
          try database.countLimitHit(budget.name)
          return .limited(
            what: budget.what[widest.index], retryAfterMs: refusals.map(\.retryAfterMs).max() ?? 0)
        }
        let record = try database.upsertStation(upsert, now: now)
        if let token = upsert.pushToken, !token.isEmpty {
          // The keyless pool of a claimed station spares the devices it had before the claim.
          let since = access == .guest ? try database.stationClaim(address).claim?.claimedAt : nil
          let replaced = try database.trimDevices(
            of: address, keeping: max(1, devicePool.keep), sparing: token, keyed: devicePool.keyed,
            registeredSince: since, freshSince: now - Self.freshDeviceMs)
          try database.countLimitHit(
            access == .guest ? .keylessDevicesPerStation : .devicesPerStation, replaced)
        }
        return .done(
          try applyAvatar(
            access.guards(avatar, of: address), to: address, holding: record.avatarHash, client: client,
            now: now))
      }
    }
    switch outcome {
    case .limited(let what, let retryAfterMs):
      throw .rateLimited(what: what, retryAfterSeconds: Self.seconds(retryAfterMs))
    case .full(let reason):
      throw .full(reason)
    case .done(let result):
      return result
    }
  }

  /// A device refreshed within this long (ms, a day: the app heartbeats every 6 hours) is live: a full station
  /// pushes out its stale devices first, then the youngest, never a live phone older than the newcomers.
  static let freshDeviceMs: Int64 = 86_400_000

  /// The budgets a register or heartbeat is counted in (`registrationsPerHour` or `heartbeatsPerHour`, each per
  /// hour), so that no stranger spends the owner's or a known device's (docs/design.md "Who may do what"):
  /// - with the key of a governing claim: the owner's own budget of the station;
  /// - a refresh of a push token the station already has: that device's own budget;
  /// - anything else (a new token, none, on a station stored already): the station's keyless budget, and the
  ///   client's keyless budgets across stations, 4 times the limit per address (IPv4 address, IPv6 /64) and 16
  ///   times per network (IPv4 /24, IPv6 /48), so that one client cannot spend every station's.
  /// Inside the caller's transaction (it reads the station's devices).
  private func refreshBudget(
    _ address: String, device: DeviceFields, access: StationAccess, client: ClientAddress,
    isRegistration: Bool,
    existing: Bool
  ) throws(StoreError) -> (counts: [RateCount], what: [String], name: LimitName) {
    let (what, prefix, perHour, name): (String, String, Int, LimitName) =
      isRegistration
      ? ("registrations", RateKey.registrations, config.registrationsPerHour, .registrationsPerHour)
      : ("heartbeats", RateKey.heartbeats, config.heartbeatsPerHour, .heartbeatsPerHour)
    if access.isOwner {
      return ([RateCount(key: prefix + "key:" + address, limit: perHour)], [what], name)
    }
    // `DeviceFields` holds the token as the store keeps it.
    if existing, let token = device.pushToken, try database.hasDevice(token: token, station: address) {
      let digest = SHA256.hex(token).prefix(16)
      return ([RateCount(key: prefix + "device:" + address + ":" + digest, limit: perHour)], [what], name)
    }
    var counts = [RateCount(key: prefix + address, limit: perHour)]
    var whats = [what]
    guard existing else { return (counts, whats, name) }
    counts.append(RateCount(key: prefix + "keyless from:" + client.key, limit: perHour * 4))
    whats.append("keyless \(what) from this address")
    if let network = client.network {
      counts.append(
        RateCount(key: prefix + "keyless from network:" + network.description, limit: perHour * 16))
      whats.append("keyless \(what) from this network (\(network))")
    }
    return (counts, whats, name)
  }

  /// Applies an avatar update inside the refresh's transaction; `current` is the hash stored now.
  /// Anything past a limit leaves the stored avatar as it is and says why.
  private func applyAvatar(
    _ avatar: AvatarUpdate, to address: String, holding current: String, client: ClientAddress, now: Int64
  ) throws(StoreError) -> AvatarResult {
    switch avatar {
    case .none:
      return AvatarResult(hash: current)
    case .rejected(let reason):
      return AvatarResult(hash: current, refusal: reason)
    case .set, .clear:
      break
    }
    if case .set(_, let image?, _) = avatar {
      let incoming = Int64(image.utf8.count)
      let replaced = try database.avatarImageBytes(of: address)
      if incoming > replaced, try database.storedAvatarBytes() - replaced + incoming > config.avatarBytesTotal
      {
        try database.countLimitHit(.avatarBytesTotal)
        return AvatarResult(
          hash: current, refusal: "the server's avatar storage is full; the avatar was not stored")
      }
    }
    let perStation = try database.consumeRate(
      key: "avatar uploads:\(address)", limit: config.avatarUploadsPerHour, windowMs: Self.rateWindowMs,
      now: now)
    if case .limited(let retryAfterMs) = perStation {
      try database.countLimitHit(.avatarUploadsPerHour)
      return AvatarResult(
        hash: current, refusal: "too many avatar uploads; retry in \(Self.seconds(retryAfterMs)) s")
    }
    let perAddress = try database.consumeRate(
      key: "avatar uploads from:\(client.key)", limit: config.avatarUploadsPerAddressPerHour,
      windowMs: Self.rateWindowMs, now: now)
    if case .limited(let retryAfterMs) = perAddress {
      try database.countLimitHit(.avatarUploadsPerAddressPerHour)
      return AvatarResult(
        hash: current,
        refusal: "too many avatar uploads from this address; retry in \(Self.seconds(retryAfterMs)) s")
    }
    if case .set(let icon, let image, let hash) = avatar {
      try database.setAvatar(address, icon: icon, image: image, hash: hash, now: now)
      return AvatarResult(hash: hash)
    }
    try database.setAvatar(address, icon: nil, image: nil, hash: "", now: now)
    return AvatarResult(hash: "")
  }

  private func writeAvatarEcho(_ result: AvatarResult, to writer: inout JSONWriter) {
    writer.key("avatarHash")
    writer.string(result.hash)
    if let refusal = result.refusal {
      writer.key("avatarError")
      writer.string(refusal)
    }
  }
}
