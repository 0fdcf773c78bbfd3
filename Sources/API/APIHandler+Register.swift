import APRS
import JSON
import Store

extension APIHandler {
  /// `POST /v1/register`: create or refresh the station and its device, apply an avatar update,
  /// and (with `wantHistory`) return the messages newer than `since`.
  func register(_ body: RequestBody, station: StationAddress, now: Int64) throws(APIError) -> APIResponse {
    let device = try DeviceFields(body)
    let ackMessages = try body.bool("ackMessages") ?? false
    let wantHistory = try body.bool("wantHistory") ?? false
    let since = try body.int("since", in: 0...Int64.max) ?? 0
    let avatar = try AvatarUpdate(body)
    let avatarResult = try refresh(
      station, device: device, ackMessages: ackMessages, isRegistration: true, avatar: avatar,
      limit: ("registrations", config.registrationsPerHour), now: now)
    let result = try store { () throws(StoreError) in
      try database.sync(station: station.description, since: since, now: now)
    }
    var writer = JSONWriter(capacity: 512 + result.messages.count * 128)
    writer.beginObject()
    if wantHistory { writeMessages(result.messages, to: &writer) }
    writer.key("serverTime")
    writer.int(result.serverTime)
    writeAvatarEcho(avatarResult, to: &writer)
    writeAvatarHashes(wantHistory ? result.avatarHashes : [:], to: &writer)
    writer.endObject()
    return .ok(writer, station: station.description)
  }

  /// `POST /v1/heartbeat`: refresh (or re-create) the station and its device; apply an avatar update.
  func heartbeat(_ body: RequestBody, station: StationAddress, now: Int64) throws(APIError) -> APIResponse {
    let device = try DeviceFields(body)
    let avatar = try AvatarUpdate(body)
    let avatarResult = try refresh(
      station, device: device, ackMessages: nil, isRegistration: false, avatar: avatar,
      limit: ("heartbeats", config.heartbeatsPerHour), now: now)
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
    case limited(retryAfterMs: Int64)
    case done(AvatarResult)
  }

  /// In ONE write transaction (one commit): the request's rate limit, the station and device
  /// upsert, and the avatar update within its own rate limit. Over the request's limit nothing
  /// else is written and the answer is a 429; over the avatar limit only the avatar is refused.
  private func refresh(
    _ station: StationAddress, device: DeviceFields, ackMessages: Bool?, isRegistration: Bool,
    avatar: AvatarUpdate, limit: (what: String, perHour: Int), now: Int64
  ) throws(APIError) -> AvatarResult {
    let address = station.description
    let upsert = StationUpsert(
      address: address, base: station.base, ssid: station.ssid, platform: device.platform,
      pushToken: device.pushToken, ackMessages: ackMessages, isRegistration: isRegistration)
    let outcome = try store { () throws(StoreError) -> RefreshOutcome in
      try database.writeBatch { () throws(StoreError) -> RefreshOutcome in
        let decision = try database.consumeRate(
          key: "\(limit.what):\(address)", limit: limit.perHour, windowMs: Self.rateWindowMs, now: now)
        if case .limited(let retryAfterMs) = decision { return .limited(retryAfterMs: retryAfterMs) }
        let record = try database.upsertStation(upsert, now: now)
        switch avatar {
        case .none:
          return .done(AvatarResult(hash: record.avatarHash))
        case .rejected(let reason):
          return .done(AvatarResult(hash: record.avatarHash, refusal: reason))
        case .set, .clear:
          let avatarDecision = try database.consumeRate(
            key: "avatar uploads:\(address)", limit: config.avatarUploadsPerHour, windowMs: Self.rateWindowMs,
            now: now)
          if case .limited(let retryAfterMs) = avatarDecision {
            let refusal = "too many avatar uploads; retry in \(Self.seconds(retryAfterMs)) s"
            return .done(AvatarResult(hash: record.avatarHash, refusal: refusal))
          }
          if case .set(let icon, let image, let hash) = avatar {
            try database.setAvatar(address, icon: icon, image: image, hash: hash, now: now)
            return .done(AvatarResult(hash: hash))
          }
          try database.setAvatar(address, icon: nil, image: nil, hash: "", now: now)
          return .done(AvatarResult(hash: ""))
        }
      }
    }
    switch outcome {
    case .limited(let retryAfterMs):
      throw .rateLimited(what: limit.what, retryAfterSeconds: Self.seconds(retryAfterMs))
    case .done(let result):
      return result
    }
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
