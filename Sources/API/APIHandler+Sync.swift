import APRS
import JSON
import Store

extension APIHandler {
  /// The longest `wait` a sync may ask for, in seconds (docs/protocol.md, "Long poll").
  public static let maxWaitSeconds: Int64 = 300

  /// How long a client whose address holds `[server] maxParkedPerAddress` long polls is told to
  /// wait before the next (`Retry-After`, seconds): a slot frees whenever one of them is answered.
  public static let parkRefusedRetryAfterSeconds = 10

  /// `POST /v1/sync`: the caller's messages newer than `since`, the cursor to send next time,
  /// and the avatar hashes of the peers in them. An unregistered station gets an empty list. With
  /// `wait` (0–300 s) and nothing to show, the shell is told to hold the request (`SyncPark`,
  /// with `client`, the address it counts against, and whether it is the owner's: keyless long polls
  /// of a claimed station never answer the owner's early). A keyless sync of a claimed station reads only: it
  /// marks nothing pulled (so earns no `device`-policy ACK) and leaves the cursor pushes count from. With
  /// `want:["ssids"]` the answer also holds the entries for other SSIDs of the call, each with `to`; without it
  /// the answer is exactly what it was before they existed.
  func sync(_ caller: Caller) throws(APIError) -> APIAnswer {
    let (body, station, access, client, now) = (
      caller.body, caller.station, caller.devices, caller.client, caller.now
    )
    let since = try body.int("since", in: 0...Int64.max) ?? 0
    let wait = try body.int("wait", in: 0...Self.maxWaitSeconds) ?? 0
    let wants = try body.wants()
    let pull = access != .guest
    let token = try body.string("pushToken", maxLength: 4096).flatMap { $0.isEmpty ? nil : $0 }
    let puller = access.isOwner ? token : nil
    let result = try store { () throws(StoreError) in
      try database.sync(
        station: station.description, since: since, now: now, countsAsPull: pull,
        wants: wants)
    }
    noteSync(result)
    if wait > 0 && !hasVisibleMessages(result) {
      var park = SyncPark(
        station: station.description, since: since, seen: result.newestTimestamp,
        deadline: now + wait * 1000, client: client.key, owner: access.isOwner, countsAsPull: pull,
        wants: wants)
      park.puller = puller
      return .park(park)
    }
    markPulled(by: puller, station: station.description, result)
    return .response(syncResponse(result, station: station.description, wants: wants))
  }

  /// Reads a held sync again (docs/protocol.md, "Long poll"): its messages, when there are any now; or,
  /// when there are none, `.park` again (with what this read saw) unless `final` (the wait ran out,
  /// the server is stopping) or the deadline has passed, in which case `messages:[]` and the usual
  /// `serverTime`. Never throws: a storage failure is an error response.
  public func resumeSync(_ park: SyncPark, final: Bool) -> APIAnswer {
    let now = clock()
    let result: SyncResult
    do throws(APIError) {
      result = try store { () throws(StoreError) in
        try database.sync(
          station: park.station, since: park.since, now: now, countsAsPull: park.countsAsPull,
          wants: park.wants)
      }
    } catch {
      return .response(.error(error, station: park.station))
    }
    noteSync(result)
    if !final && now < park.deadline && !hasVisibleMessages(result) {
      var again = park
      again.seen = result.newestTimestamp
      return .park(again)
    }
    markPulled(by: park.puller, station: park.station, result)
    return .response(syncResponse(result, station: park.station, wants: park.wants))
  }

  /// A sync the shell would not hold because its client address holds `[server]
  /// maxParkedPerAddress` long polls already: its messages if some came meanwhile, else 429 with
  /// `Retry-After` (`parkRefusedRetryAfterSeconds`), so the client backs off rather than polling
  /// at once. Never throws: a storage failure is an error response.
  public func refusedSync(_ park: SyncPark) -> APIResponse {
    let result: SyncResult
    do throws(APIError) {
      result = try store { () throws(StoreError) in
        try database.sync(
          station: park.station, since: park.since, now: clock(), countsAsPull: park.countsAsPull,
          wants: park.wants)
      }
    } catch {
      return .error(error, station: park.station)
    }
    noteSync(result)
    if hasVisibleMessages(result) {
      markPulled(by: park.puller, station: park.station, result)
      return syncResponse(result, station: park.station, wants: park.wants)
    }
    return .error(
      .rateLimited(
        what: "long polls held for this client address", retryAfterSeconds: Self.parkRefusedRetryAfterSeconds),
      station: park.station)
  }

  /// Whether the answer would list a message (sent messages count only when `includeSent`), or (for
  /// `want:["inbox"]`) a read marker that changed.
  func hasVisibleMessages(_ result: SyncResult) -> Bool {
    !result.read.isEmpty || result.messages.contains { config.includeSent || $0.direction == .received }
  }

  /// `{"messages":[…],"serverTime":…,"avatars":{…}}`; with `want:["inbox"]` also `more`, `dropped` and
  /// `oldestTimestamp` (``writeInbox(_:to:)``).
  func syncResponse(_ result: SyncResult, station: String, wants: Wants = []) -> APIResponse {
    var writer = JSONWriter(capacity: 128 + result.messages.count * 128)
    writer.beginObject()
    writeMessages(result.messages, wants: wants, to: &writer)
    writer.key("serverTime")
    writer.int(result.serverTime)
    writeAvatarHashes(result.avatarHashes, to: &writer)
    if wants.contains(.inbox) { Self.writeInbox(result, to: &writer) }
    writer.endObject()
    return .ok(writer, station: station)
  }

  /// The inbox keys (`want:["inbox"]`): `more` (true when the page is full: sync again from `serverTime`),
  /// `dropped` (messages evicted before they were pulled, after `since`), `oldestTimestamp` (the oldest message
  /// still held, or null).
  static func writeInbox(_ result: SyncResult, to writer: inout JSONWriter) {
    writer.key("more")
    writer.bool(result.more)
    writer.key("dropped")
    writer.int(result.dropped)
    writer.key("oldestTimestamp")
    if let oldest = result.oldestHeld { writer.int(oldest) } else { writer.null() }
    writer.key("read")
    writer.beginObject()
    for peer in result.read.keys.sorted() {
      writer.key(peer)
      writer.int(result.read[peer] ?? 0)
    }
    writer.endObject()
  }

  /// Marks what an answer carried as pulled by the owner's device `token` (best effort: a storage fault leaves
  /// the messages kept a little longer, never lost).
  func markPulled(by token: String?, station: String, _ result: SyncResult) {
    guard let token, !result.messages.isEmpty else { return }
    try? database.markDevicePulled(station: station, token: token, through: result.serverTime)
  }

  /// `messages`: oldest first, each exactly the keys of docs/protocol.md ("Messages"); `seqId` is a
  /// string or null, never a number.
  func writeMessages(_ messages: [StoredMessage], wants: Wants = [], to writer: inout JSONWriter) {
    writer.key("messages")
    writer.beginArray()
    for message in messages where config.includeSent || message.direction == .received {
      Self.writeMessage(message, wants: wants, to: &writer)
    }
    writer.endArray()
  }

  /// One `messages` entry. A message sent through `/v1/send` also carries `state` and, when given, `clientId`
  /// (docs/protocol.md "Sending messages"); received entries never do. An entry for another SSID of the call carries
  /// `to` (its addressee); only requests with `want:["ssids"]` are given such entries. A subscription entry (only
  /// for `want:["subscriptions"]`) has its kind as `type` (`bulletin`, `group`, `nws`, `watch`), its
  /// `subscription` id, `to` the addressee it was sent to (not for a watch), and for a watch its `event`
  /// (`heard`, `silent`, `emergency`) and, when the packet had one, `latitude` and `longitude` (degrees). With
  /// `want:["answeredBy"]` a received message the station's own radio answered carries `answeredBy:"air"`; with
  /// `want:["sent"]` the entries of what the station's radio sent (`trackSent`) carry `state` (`sent`, `acked`,
  /// `rejected`). A net's entry (only for `want:["rooms"]`) has `type:"net"` and its `room` (`ANSRVR/HOTG`).
  static func writeMessage(_ message: StoredMessage, wants: Wants = [], to writer: inout JSONWriter) {
    writer.beginObject()
    writer.key("direction")
    writer.string(message.direction.rawValue)
    writer.key("type")
    writer.string(message.entry?.kind.rawValue ?? "message")
    writer.key("peer")
    writer.string(message.peer)
    writer.key("text")
    writer.string(message.text)
    writer.key("timestamp")
    writer.int(message.timestamp)
    writer.key("seqId")
    writer.stringOrNull(message.msgno)
    if let to = message.to {
      writer.key("to")
      writer.string(to)
    }
    if let entry = message.entry {
      writer.key("subscription")
      writer.string(entry.subscription)
      if let room = entry.room {
        writer.key("room")
        writer.string(room.description)
      }
      if let event = entry.event {
        writer.key("event")
        writer.string(event.rawValue)
      }
      if let latitude = entry.latitude, let longitude = entry.longitude {
        writer.key("latitude")
        writer.fixed(latitude, decimals: 6)
        writer.key("longitude")
        writer.fixed(longitude, decimals: 6)
      }
    }
    if wants.contains(.answeredBy), let answeredBy = message.answeredBy {
      writer.key("answeredBy")
      writer.string(answeredBy.rawValue)
    }
    if message.direction == .sent, let heard = message.heardState {
      // What the station's radio sent (`trackSent`, only for `want:["sent"]`): where it stands.
      writer.key("state")
      writer.string(heard.rawValue)
    }
    if message.direction == .sent, let state = message.state {
      writer.key("state")
      writer.string(state.rawValue)
      if let clientId = message.clientId {
        writer.key("clientId")
        writer.string(clientId)
      }
    }
    writer.endObject()
  }

  /// `avatars`: peer → avatar hash, sorted by peer so answers are stable.
  func writeAvatarHashes(_ hashes: [String: String], to writer: inout JSONWriter) {
    writer.key("avatars")
    writer.beginObject()
    for peer in hashes.keys.sorted() {
      writer.key(peer)
      writer.string(hashes[peer]!)
    }
    writer.endObject()
  }

  /// `POST /v1/unregister`: drop the station (devices, avatar, messages, settings), or with `pushToken` only
  /// that device. Answers `{}`. Dropping a claimed station needs its key (else 403, nothing changes) and is
  /// recorded in its audit trail; one's own token needs only the passcode, as the shipping app sends it.
  func unregister(_ caller: Caller) throws(APIError) -> APIResponse {
    let (body, station, access, client, now) = (
      caller.body, caller.station, caller.devices, caller.client, caller.now
    )
    let token = try body.string("pushToken", maxLength: 4096).flatMap { $0.isEmpty ? nil : $0 }
    if token == nil, access == .guest {
      try access.requireOwner(station.description, for: "unregistering the whole station")
    }
    try store { () throws(StoreError) in
      if let token {
        _ = try database.deleteDevice(token: token, station: station.description)
      } else {
        _ = try database.unregisterStation(station.description, client: client.key, now: now)
      }
    }
    var writer = JSONWriter(capacity: 2)
    writer.beginObject()
    writer.endObject()
    return .ok(writer, station: station.description)
  }

  /// Most stations one `/v1/avatars` call may ask about.
  static let maxAvatarStations = 50

  /// `POST /v1/avatars`: the stored avatars of up to 50 stations; stations without one are left out.
  /// The answer stays within `maxAvatarsAnswerBytes`: images that do not fit (taken in the order the
  /// stations were asked for) are sent as `null`, their `icon` and `hash` stay, and the answer says
  /// `"truncated":true` (the client asks again for those, fewer at a time).
  func avatars(_ body: RequestBody, station: StationAddress) throws(APIError) -> APIResponse {
    guard let value = body["stations"] else { throw .badRequest("stations is required (an array)") }
    guard case .array(let elements) = value else {
      throw .badRequest("stations must be an array of station addresses, not \(value.typeName)")
    }
    guard elements.count <= Self.maxAvatarStations else {
      throw .badRequest("stations holds \(elements.count) entries; at most \(Self.maxAvatarStations)")
    }
    var addresses: [String] = []
    for (index, element) in elements.enumerated() {
      guard case .string(let text) = element, text.utf8.count <= 32 else {
        throw .badRequest("stations[\(index)] must be a station address string")
      }
      do {
        addresses.append(try StationAddress(parsing: text).description)
      } catch {
        throw .badRequest("stations[\(index)]: \(error)")
      }
    }
    let found = try store { () throws(StoreError) in try database.avatars(for: addresses) }
    // Every entry with its image left out, and room for `,"truncated":true`: what must fit anyway.
    var size = Self.avatarsAnswer(found, images: []).bytes.count + Self.truncatedMarkBytes
    var images: Set<String> = []
    var truncated = false
    var seen: Set<String> = []
    for address in addresses where seen.insert(address).inserted {
      guard let image = found[address]?.image else { continue }
      var quoted = JSONWriter(capacity: image.utf8.count + 2)
      quoted.string(image)
      let extra = quoted.bytes.count - 4  // instead of `null`
      if size + extra <= config.maxAvatarsAnswerBytes {
        size += extra
        images.insert(address)
      } else {
        truncated = true
      }
    }
    let writer = Self.avatarsAnswer(found, images: images, truncated: truncated)
    return .ok(writer, station: station.description)
  }

  /// The bytes `,"truncated":true` adds to an answer.
  static let truncatedMarkBytes = #","truncated":true"#.utf8.count

  /// `{"avatars":{…}}` with every avatar of `found` by address, its image only when its address is in
  /// `images`, and `"truncated":true` when asked.
  static func avatarsAnswer(_ found: [String: Avatar], images: Set<String>, truncated: Bool = false)
    -> JSONWriter
  {
    var writer = JSONWriter(capacity: 64 + found.count * 96)
    writer.beginObject()
    writer.key("avatars")
    writer.beginObject()
    for address in found.keys.sorted() {
      let avatar = found[address]!
      writer.key(address)
      writer.beginObject()
      writer.key("icon")
      writer.stringOrNull(avatar.icon)
      writer.key("image")
      writer.stringOrNull(images.contains(address) ? avatar.image : nil)
      writer.key("hash")
      writer.string(avatar.hash)
      writer.endObject()
    }
    writer.endObject()
    if truncated {
      writer.key("truncated")
      writer.bool(true)
    }
    writer.endObject()
    return writer
  }
}
