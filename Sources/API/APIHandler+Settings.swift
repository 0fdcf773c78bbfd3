import APRS
import JSON
import Store

extension APIHandler {
  /// `POST /v1/settings` (docs/protocol.md "Station settings"): applies the fields given (``RequestBody/settingsUpdate()``;
  /// a bad one is a 400 naming it, and nothing changes) in one transaction and answers the whole current set,
  /// every key present, and `ownTransmissions` (``ownTransmissionsState(of:)``) while the station asks the
  /// listener to follow its own transmissions. A station that is not registered gets a 404.
  /// Only the owner of a claimed station gets here (`StationAccess.requireOwner`); a change is recorded in the
  /// station's audit trail under `client`.
  func settings(
    _ body: RequestBody, station: StationAddress, client: ClientAddress, now: Int64
  ) throws(APIError) -> APIResponse {
    let update = try body.settingsUpdate(retentionCap: database.maxUnpulledPerStation)
    let drafts = try body.subscriptionDrafts()
    let forwardDrafts = try body.forwardDrafts(
      emailAvailable: config.forwardEmail, allowPrivate: config.allowPrivateForwardEndpoints)
    if forwardDrafts?.isEmpty == false && !config.forward {
      throw .badRequest("forward: forwarding is off on this server")
    }
    let address = station.description
    if let drafts { try checkNetJoins(drafts, station: address) }
    let limits = sendLimits(client)
    let stored: (StationSettings, [Subscription], [ForwardTarget])?
    var failedField = "subscriptions"
    var refusedJoin: RefusedJoin?
    do throws(StoreError) {
      stored = try database.writeBatch {
        () throws(StoreError) -> (StationSettings, [Subscription], [ForwardTarget])? in
        guard let settings = try database.updateStationSettings(address, update, client: client.key, now: now)
        else { return nil }
        var subscriptions = try database.subscriptions(of: address)
        if let drafts {
          guard let replaced = try database.replaceSubscriptions(of: address, with: drafts, now: now) else {
            return nil
          }
          let settlement = try database.settleNets(
            address, before: subscriptions, after: replaced, limits: limits, client: client.key, now: now)
          switch settlement {
          case .settled: break
          case .refused(let room, let creation):
            refusedJoin = .limits(room, creation)
            throw .invalidArgument("the join of \(room) was refused")
          case .tooSoon(let room, let retryAfterMs):
            refusedJoin = .tooSoon(room, retryAfterMs)
            throw .invalidArgument("the join of \(room) was too soon")
          }
          subscriptions = replaced
        }
        var forward = try database.forwardTargets(of: address)
        if let forwardDrafts {
          failedField = "forward"
          guard let replaced = try database.replaceForwardTargets(of: address, with: forwardDrafts, now: now)
          else { return nil }
          if replaced != forward {
            try database.recordAudit(
              AuditEntry(station: address, at: now, action: .settings, client: client.key, detail: "forward"))
          }
          forward = replaced
        }
        return (settings, subscriptions, forward)
      }
    } catch .invalidArgument(let reason) {
      switch refusedJoin {
      case nil: break
      case .limits(_, let creation)?:
        // The send limits refused a join: nothing changed.
        try Self.throwSendRefusal(creation, config: config.send)
      case .tooSoon(let room, let retryAfterMs)?:
        throw Self.tooSoonToPost(room, retryAfterMs: retryAfterMs)
      }
      // An `id` the station does not have: nothing changed.
      throw .badRequest("\(failedField)\(reason.hasPrefix("[") ? "" : ": ")\(reason)")
    } catch {
      throw Self.apiError(for: error)
    }
    guard let (settings, subscriptions, forward) = stored else {
      throw .stationNotFound(address)
    }
    var writer = JSONWriter(
      capacity: 128 + (settings.blocked.calls.count + settings.quietBypass.calls.count) * 12
        + subscriptions.count * 64)
    writer.beginObject()
    Self.writeSettings(settings, to: &writer)
    let memberships = try netMemberships(of: address, subscriptions)
    Self.writeSubscriptions(subscriptions, memberships: memberships, now: now, to: &writer)
    Self.writeForward(forward, to: &writer)
    Self.writeRetention(settings.retention, to: &writer)
    if settings.followsOwnTransmissions {
      writer.key("ownTransmissions")
      writer.string(ownTransmissionsState(of: address))
    }
    writer.endObject()
    return .ok(writer, station: address)
  }

  /// Whether the listener follows the station's own transmissions, as it last published
  /// (``Store/ListenerStatus/ownFollowed``): `followed`, `fellBack` (its filter has no room: ACKed as under
  /// `server`, its radio's sends not stored) or `pending` (not planned yet, or no listener published; a read
  /// that fails says `pending` too: the settings themselves were stored).
  func ownTransmissionsState(of address: String) -> String {
    guard let status = try? database.listenerStatus() else { return "pending" }
    if status.ownFollowed.contains(address) { return "followed" }
    if status.ownFellBack.contains(address) { return "fellBack" }
    return "pending"
  }

  /// The settings' keys, each present: `blocked` ([] when none), `mutedUntil` (0 when not muted), `quietHours`
  /// (null when none), `quietBypass`, `ackPolicy`, `keylessDevices`, `ssids` (`"exact"`, `"all"` or the sorted
  /// list of SSIDs), `ackSsids` (sorted, [] when none), `fallbackWait` (s), `airAnswered`, `trackSent`.
  static func writeSettings(_ settings: StationSettings, to writer: inout JSONWriter) {
    writer.key("blocked")
    writer.beginArray()
    for call in settings.blocked.calls { writer.string(call) }
    writer.endArray()
    writer.key("mutedUntil")
    writer.int(settings.mutedUntil)
    writer.key("quietHours")
    if let quiet = settings.quietHours {
      writer.beginObject()
      writer.key("start")
      writer.int(quiet.start)
      writer.key("end")
      writer.int(quiet.end)
      writer.key("utcOffsetMinutes")
      writer.int(quiet.utcOffsetMinutes)
      writer.endObject()
    } else {
      writer.null()
    }
    writer.key("quietBypass")
    writer.beginArray()
    for call in settings.quietBypass.calls { writer.string(call) }
    writer.endArray()
    writer.key("ackPolicy")
    writer.string(settings.ackPolicy.rawValue)
    writer.key("keylessDevices")
    writer.string(settings.keylessDevices.rawValue)
    writer.key("ssids")
    switch settings.ssids {
    case .exact: writer.string("exact")
    case .all: writer.string("all")
    case .list(let set):
      writer.beginArray()
      for ssid in set.ssids { writer.int(Int64(ssid)) }
      writer.endArray()
    }
    writer.key("ackSsids")
    writer.beginArray()
    for ssid in settings.ackSsids.ssids { writer.int(Int64(ssid)) }
    writer.endArray()
    writer.key("fallbackWait")
    writer.int(Int64(settings.fallbackWait.seconds))
    writer.key("airAnswered")
    writer.string(settings.airAnswered.rawValue)
    writer.key("trackSent")
    writer.bool(settings.trackSent)
  }

  /// `retention`: `{"mode":"ring"}` or `{"mode":"untilPulled","max":N}`.
  static func writeRetention(_ retention: Retention, to writer: inout JSONWriter) {
    writer.key("retention")
    writer.beginObject()
    writer.key("mode")
    switch retention {
    case .ring:
      writer.string("ring")
    case .untilPulled(let max):
      writer.string("untilPulled")
      writer.key("max")
      writer.int(max)
    }
    writer.endObject()
  }

  /// The memberships of the station's nets, by subscription id (none for a net not joined yet).
  private func netMemberships(of station: String, _ subscriptions: [Subscription]) throws(APIError)
    -> [String: NetMembership]
  {
    var found: [String: NetMembership] = [:]
    for subscription in subscriptions {
      guard case .net(let rule) = subscription.rule else { continue }
      let room = rule.room
      if let membership = try store({ () throws(StoreError) in
        try database.netMembership(of: station, room: room)
      }) {
        found[subscription.id] = membership
      }
    }
    return found
  }

  /// `subscriptions`: each with its `id`, `kind`, the kind's fields and `bypass` ([] when none). A net's carries
  /// its `membership` when `memberships` has it (the settings answer; an export has none).
  static func writeSubscriptions(
    _ subscriptions: [Subscription], memberships: [String: NetMembership] = [:], now: Int64 = 0,
    to writer: inout JSONWriter
  ) {
    writer.key("subscriptions")
    writer.beginArray()
    for subscription in subscriptions {
      writer.beginObject()
      writer.key("id")
      writer.string(subscription.id)
      writer.key("kind")
      writer.string(subscription.kind.rawValue)
      switch subscription.rule {
      case .bulletin(let pattern):
        writer.key("match")
        writer.string(pattern.text)
      case .group(let call):
        writer.key("call")
        writer.string(call)
      case .nws(let zones):
        writer.key("zones")
        writer.beginArray()
        for zone in zones.sorted() { writer.string(zone) }
        writer.endArray()
      case .watch(let watch):
        writer.key("call")
        writer.string(watch.call)
        writer.key("heardAfter")
        if let seconds = watch.heardAfter { writer.int(Int64(seconds)) } else { writer.null() }
        writer.key("silentFor")
        if let seconds = watch.silentFor { writer.int(Int64(seconds)) } else { writer.null() }
        writer.key("emergency")
        writer.bool(watch.emergency)
      case .net(let net):
        writer.key("server")
        writer.string(net.service.call)
        writer.key("group")
        writer.string(net.group)
        writer.key("room")
        writer.string(net.room.description)
        writer.key("join")
        writer.string(net.join.rawValue)
        if let text = net.text {
          writer.key("text")
          writer.string(text)
        }
        writer.key("renew")
        writer.bool(net.renew)
        writer.key("digest")
        writer.int(Int64(net.digestSeconds))
        if let membership = memberships[subscription.id] {
          writer.key("membership")
          writeMembership(membership, service: net.service, now: now, to: &writer)
        }
      }
      writer.key("bypass")
      writer.bool(subscription.bypass)
      writer.endObject()
    }
    writer.endArray()
  }

  /// `{"state","joinedAt","renewAt"}` of a net's membership (docs/protocol.md "Joining: the `net` subscription"):
  /// `joining` while the last join or renewal waits for the service's ACK, `joined` once it ACKed, `lapsed` past
  /// the service's lapse without a renewal, `unanswered` when the service never ACKed it (expired, rejected or
  /// cancelled).
  static func writeMembership(
    _ membership: NetMembership, service: NetService, now: Int64, to writer: inout JSONWriter
  ) {
    // The service counts its lapse from the last join, renewal or post.
    let since = max(membership.joinedAt ?? now, membership.lastPostAt ?? 0)
    let lapsed = service.membershipMs.map { lapse in since + lapse <= now } ?? false
    let state =
      switch membership.joinState {
      case .pending?: "joining"
      case .acked?, .completed?: lapsed ? "lapsed" : "joined"
      case nil: lapsed ? "lapsed" : "joined"
      case .rejected?, .expired?, .cancelled?: "unanswered"
      }
    writer.beginObject()
    writer.key("state")
    writer.string(state)
    writer.key("joinedAt")
    if let at = membership.joinedAt { writer.int(at) } else { writer.null() }
    writer.key("renewAt")
    if let at = membership.renewAt { writer.int(at) } else { writer.null() }
    writer.endObject()
  }

  /// Why a settings change that joins a net was refused (nothing changed).
  private enum RefusedJoin {
    /// The send limits refused the join.
    case limits(NetRoom, SendCreation)
    /// A join by post inside the service's least time between posts (ms to wait).
    case tooSoon(NetRoom, Int64)
  }
}
