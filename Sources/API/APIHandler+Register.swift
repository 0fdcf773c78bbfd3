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
    try checkRate("registrations", station: station, perHour: config.registrationsPerHour, now: now)
    let avatarResult = try refresh(
      station, device: device, ackMessages: ackMessages, isRegistration: true, avatar: avatar, now: now)
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
    try checkRate("heartbeats", station: station, perHour: config.heartbeatsPerHour, now: now)
    let avatarResult = try refresh(
      station, device: device, ackMessages: nil, isRegistration: false, avatar: avatar, now: now)
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

  /// Upserts the station and device, then applies the avatar update within its rate limit.
  private func refresh(
    _ station: StationAddress, device: DeviceFields, ackMessages: Bool?, isRegistration: Bool,
    avatar: AvatarUpdate, now: Int64
  ) throws(APIError) -> AvatarResult {
    let upsert = StationUpsert(
      address: station.description, base: station.base, ssid: station.ssid, platform: device.platform,
      pushToken: device.pushToken, ackMessages: ackMessages, isRegistration: isRegistration)
    let record = try store { () throws(StoreError) in try database.upsertStation(upsert, now: now) }
    var update = avatar
    switch avatar {
    case .set, .clear:
      do {
        try checkRate("avatar uploads", station: station, perHour: config.avatarUploadsPerHour, now: now)
      } catch .rateLimited(let what, let seconds) {
        update = .rejected(reason: "too many \(what); retry in \(seconds) s")
      }
    case .none, .rejected:
      break
    }
    switch update {
    case .set(let icon, let image, let hash):
      try store { () throws(StoreError) in
        try database.setAvatar(station.description, icon: icon, image: image, hash: hash, now: now)
      }
      return AvatarResult(hash: hash)
    case .clear:
      try store { () throws(StoreError) in
        try database.setAvatar(station.description, icon: nil, image: nil, hash: "", now: now)
      }
      return AvatarResult(hash: "")
    case .none:
      return AvatarResult(hash: record.avatarHash)
    case .rejected(let reason):
      return AvatarResult(hash: record.avatarHash, refusal: reason)
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
