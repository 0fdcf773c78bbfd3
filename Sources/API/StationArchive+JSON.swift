import APRS
import JSON
import Store

/// The export document (docs/protocol.md, `POST /v1/export`; docs/operating.md "Moving a station to another server"): one
/// JSON object, written by `POST /v1/export` and `aprs-cloud stations CALL --export FILE`, read back by
/// `aprs-cloud import FILE`:
///
/// `{"format":"aprs-cloud-export","version":1,"station":"N0CALL-7","exportedAt":<ms>,
///   "claim":{"keyHash":"<64 hex>","claimedAt":<ms>}|null, "settings":{…the /v1/settings answer…},
///   "read":{"<peer>":<ms>,…}, "entries":[…sync entries, every ring, oldest first…]}`
///
/// Entries have exactly the keys of a sync answer's `messages` (with `to`, subscription keys, and for sends
/// `state` and `clientId`), whatever `want` a client would have needed to see them.
extension StationArchive {
  /// The document's `format`.
  public static let documentFormat = "aprs-cloud-export"
  /// The document's `version`; a reader refuses any other.
  public static let documentVersion: Int64 = 1
  /// The largest export document read back, bytes: ``maximumEntries`` of the longest entries fit.
  public static let maximumDocumentBytes = 128 << 20

  /// The document, stamped `exportedAt` (epoch ms).
  public func jsonDocument(exportedAt: Int64) -> [UInt8] {
    var writer = JSONWriter(capacity: 512 + entries.count * 160)
    writer.beginObject()
    writer.key("format")
    writer.string(Self.documentFormat)
    writer.key("version")
    writer.int(Self.documentVersion)
    writer.key("station")
    writer.string(station)
    writer.key("exportedAt")
    writer.int(exportedAt)
    writer.key("claim")
    if let claim {
      writer.beginObject()
      writer.key("keyHash")
      writer.string(claim.keyHash)
      writer.key("claimedAt")
      writer.int(claim.claimedAt)
      writer.endObject()
    } else {
      writer.null()
    }
    writer.key("settings")
    writer.beginObject()
    APIHandler.writeSettings(settings, to: &writer)
    APIHandler.writeSubscriptions(subscriptions, to: &writer)
    APIHandler.writeRetention(settings.retention, to: &writer)
    writer.endObject()
    writer.key("read")
    writer.beginObject()
    for peer in readMarkers.keys.sorted() {
      writer.key(peer)
      writer.int(readMarkers[peer] ?? 0)
    }
    writer.endObject()
    writer.key("entries")
    writer.beginArray()
    for entry in entries { APIHandler.writeMessage(entry, to: &writer) }
    writer.endArray()
    writer.endObject()
    return writer.bytes
  }

  /// Reads a document ``jsonDocument(exportedAt:)`` wrote. `retentionCap` is this server's
  /// `[server] maxUnpulledPerStation` (a larger `retention.max` is refused, as `/v1/settings` would).
  /// - Throws: ``APIError/badRequest(_:)`` naming what is wrong (`entries[3].timestamp`, `settings.blocked[1]`).
  public init(document bytes: [UInt8], retentionCap: Int) throws(APIError) {
    guard bytes.count <= Self.maximumDocumentBytes else {
      throw .badRequest("the document is larger than \(Self.maximumDocumentBytes) bytes")
    }
    let value: JSONValue
    do {
      value = try JSONParser.parse(
        bytes, maxMembers: Self.maximumEntries, maxValues: Self.maximumEntries * 16 + 1_024)
    } catch {
      throw .badRequest(error.description)
    }
    guard case .object(let object) = value else {
      throw .badRequest("the document must be a JSON object, not \(value.typeName)")
    }
    let document = RequestBody(object: object)
    guard try document.string("format", maxLength: 32) == Self.documentFormat else {
      throw .badRequest(#"format must be "\#(Self.documentFormat)": this is not an aprs-cloud export"#)
    }
    guard try document.int("version", in: 0...Int64.max) == Self.documentVersion else {
      throw .badRequest("version must be \(Self.documentVersion): the document is from another version")
    }
    let stationText = try document.requiredString("station", maxLength: 16)
    let station: StationAddress
    do throws(CallsignError) {
      station = try StationAddress(parsing: stationText)
    } catch {
      throw .badRequest("station must be a station address (CALL or CALL-SSID)")
    }
    let claim = try Self.claim(document["claim"])
    guard case .object(let settingsObject)? = document["settings"] else {
      throw .badRequest("settings must be an object (the /v1/settings answer)")
    }
    let settingsBody = RequestBody(object: settingsObject)
    let settings: StationSettings
    let subscriptions: [Subscription]
    do throws(APIError) {
      settings = StationSettings.defaults.applying(
        try settingsBody.settingsUpdate(retentionCap: retentionCap))
      subscriptions = try (settingsBody.subscriptionDrafts() ?? []).enumerated().map {
        (index, draft) throws(APIError) -> Subscription in
        guard let id = draft.id, !id.isEmpty else {
          throw .badRequest("subscriptions[\(index)].id is required")
        }
        return Subscription(id: id, rule: draft.rule, bypass: draft.bypass)
      }
    } catch {
      throw .badRequest("settings: \(error.message)")
    }
    let entries = try Self.entries(document["entries"])
    self.init(
      station: station.description, claim: claim, settings: settings, subscriptions: subscriptions,
      readMarkers: try Self.readMarkers(document["read"]), entries: entries)
  }

  private static let maximumTimestamp: Int64 = 9_007_199_254_740_991

  private static func claim(_ value: JSONValue?) throws(APIError) -> ArchivedClaim? {
    guard let value else { return nil }
    guard case .object(let object) = value else {
      throw .badRequest("claim must be an object or null, not \(value.typeName)")
    }
    let body = RequestBody(object: object)
    let hash = try body.requiredString("keyHash", maxLength: 64)
    guard hash.utf8.count == 64,
      hash.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
    else {
      throw .badRequest("claim.keyHash must be 64 lower-case hex digits (the station key's SHA-256)")
    }
    guard let claimedAt = try body.int("claimedAt", in: 0...maximumTimestamp) else {
      throw .badRequest("claim.claimedAt is required (epoch ms)")
    }
    return ArchivedClaim(keyHash: hash, claimedAt: claimedAt)
  }

  private static func readMarkers(_ value: JSONValue?) throws(APIError) -> [String: Int64] {
    guard let value else { return [:] }
    guard case .object(let object) = value else {
      throw .badRequest("read must be an object of peer to timestamp, not \(value.typeName)")
    }
    var markers: [String: Int64] = [:]
    for (peer, member) in object.members {
      guard case .number(let number) = member, let upTo = number.int64, (0...maximumTimestamp).contains(upTo)
      else {
        throw .badRequest("read.\(peer) must be a message timestamp (epoch ms)")
      }
      if peer == Database.everyPeer {
        markers[peer] = upTo
      } else {
        do throws(CallsignError) {
          markers[try StationAddress(parsing: peer).description] = upTo
        } catch {
          throw .badRequest(#"read: "\#(peer)" is not a station address or "*""#)
        }
      }
    }
    return markers
  }

  private static func entries(_ value: JSONValue?) throws(APIError)
    -> [StoredMessage]
  {
    guard let value else { return [] }
    guard case .array(let items) = value else {
      throw .badRequest("entries must be an array, not \(value.typeName)")
    }
    guard items.count <= maximumEntries else {
      throw .badRequest("entries holds \(items.count) entries; at most \(maximumEntries)")
    }
    var entries: [StoredMessage] = []
    entries.reserveCapacity(items.count)
    var previous = Int64.min
    for (index, item) in items.enumerated() {
      let entry: StoredMessage
      do throws(APIError) {
        entry = try Self.entry(item)
      } catch {
        throw .badRequest("entries[\(index)].\(error.message)")
      }
      guard entry.timestamp > previous else {
        throw .badRequest(
          "entries[\(index)].timestamp must be after the one before (entries are oldest first)")
      }
      previous = entry.timestamp
      entries.append(entry)
    }
    return entries
  }

  /// One entry; an error's message starts with the field it names (the caller prefixes `entries[N].`).
  private static func entry(_ value: JSONValue) throws(APIError) -> StoredMessage {
    guard case .object(let object) = value else {
      throw .badRequest("entry must be an object, not \(value.typeName)")
    }
    let body = RequestBody(object: object)
    guard let direction = MessageDirection(rawValue: try body.requiredString("direction", maxLength: 16))
    else {
      throw .badRequest(#"direction must be "received" or "sent""#)
    }
    let typeText = try body.string("type", maxLength: 16) ?? "message"
    let kind = SubscriptionKind(rawValue: typeText)
    guard typeText == "message" || kind != nil else {
      throw .badRequest(#"type must be "message", "bulletin", "group", "nws" or "watch""#)
    }
    let peer = try body.requiredString("peer", maxLength: 16)
    guard !peer.isEmpty, peer.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
      throw .badRequest("peer must be an APRS address (printable ASCII, no spaces)")
    }
    let text = try body.requiredString("text", maxLength: 512)
    guard let timestamp = try body.int("timestamp", in: 1...maximumTimestamp) else {
      throw .badRequest("timestamp is required (epoch ms)")
    }
    let msgno = try body.string("seqId", maxLength: 16)
    var to: String?
    if let addressee = try body.string("to", maxLength: 16) {
      guard !addressee.isEmpty, addressee.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
        throw .badRequest("to must be an APRS address")
      }
      to = StationAddress.canonical(addressee)
    }
    var entry: SubscriptionEntry?
    if let kind {
      // An entry may outlive its subscription (removing one of two bulletin patterns keeps the kind's entries).
      let subscription = try body.requiredString("subscription", maxLength: 16)
      var event: WatchEventName?
      if let name = try body.string("event", maxLength: 16) {
        guard let known = WatchEventName(rawValue: name) else {
          throw .badRequest(#"event must be "heard", "silent" or "emergency""#)
        }
        event = known
      }
      var room: NetRoom?
      if kind == .net {
        // A net's entry names its room (`SERVICE/GROUP`).
        guard let given = try body.string("room", maxLength: 32), let parsed = NetRoom(given) else {
          throw .badRequest("room is required for a net entry: SERVICE/GROUP, such as ANSRVR/HOTG")
        }
        room = parsed
      }
      entry = SubscriptionEntry(
        kind: kind, subscription: subscription, event: event,
        latitude: try Self.degrees(body, "latitude", limit: 90),
        longitude: try Self.degrees(body, "longitude", limit: 180), room: room)
    }
    var state: SendState?
    var clientId: String?
    if direction == .sent, let stateText = try body.string("state", maxLength: 16) {
      guard let known = SendState(rawValue: stateText) else {
        throw .badRequest(
          "state must be one of \(SendState.allCases.map(\.rawValue).joined(separator: ", "))")
      }
      // A bulletin or announcement (`/v1/send` to `BLN…`) has no number.
      let bulletin = msgno == nil && BulletinSchedule(addressee: peer) != nil
      guard
        bulletin
          || msgno.map({
            (1...5).contains($0.utf8.count)
              && $0.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) }
              )
          }) == true
      else {
        throw .badRequest(
          "seqId of a sent message with a state must be 1 to 5 letters or digits (null only for a bulletin)")
      }
      state = known
      // `/v1/send`'s rule: at most 64 characters (Unicode scalars).
      clientId = try body.string("clientId", maxLength: 256)
      if let clientId, clientId.unicodeScalars.count > 64 {
        throw .badRequest("clientId is longer than 64 characters")
      }
    }
    return StoredMessage(
      direction: direction, peer: peer, text: text, msgno: msgno, timestamp: timestamp, state: state,
      clientId: clientId, to: to, entry: entry)
  }

  private static func degrees(_ body: RequestBody, _ key: String, limit: Double) throws(APIError) -> Double? {
    guard let value = body[key] else { return nil }
    guard case .number(let number) = value, let degrees = number.double, abs(degrees) <= limit else {
      throw .badRequest("\(key) must be a number of degrees from -\(Int(limit)) to \(Int(limit))")
    }
    return degrees
  }
}
