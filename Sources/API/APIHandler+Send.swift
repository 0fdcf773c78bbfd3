import APRS
import Config
import JSON
import Store

extension APIHandler {
  /// The longest `clientId`, in characters (docs/protocol.md "Sending messages").
  static let maximumClientIdLength = 64
  /// `Retry-After` when the station has too many sends in flight: about the schedule's second copy.
  static let inFlightRetryAfterSeconds = 60

  /// `POST /v1/send` `{callsign, ssid, auth, to, text, clientId?}` (docs/protocol.md "Sending messages"): stores the
  /// message for the listener, which transmits it and retries until the addressee answers. Answers
  /// `{"message":{…},"serverTime":…}` with the message exactly as sync shows it. With `cancel` instead of `to`
  /// and `text`, stops a send (``cancelSend(_:station:now:)``).
  ///
  /// In order: the fields (400 naming `to`, `text` or `clientId`; an addressee that is no station, this server's
  /// own login among them, names `to`); a sender APRS-IS always drops (`N0CALL`, …: 400 naming `callsign`);
  /// `[send] enabled` and the listener's login (receive-only or unverified: 503); then in one transaction the
  /// station (404 when not registered), a replayed `clientId` (the first message, nothing sent), and the limits
  /// (429 with `Retry-After`): the station's in flight and per minute, `client`'s per minute, everyone's per
  /// minute. `serverTime` is the newest timestamp at the commit (for a new message its own); a client keeps
  /// following its own sync cursor.
  func send(_ body: RequestBody, station: StationAddress, client: ClientAddress, now: Int64) throws(APIError)
    -> APIResponse
  {
    if body.contains("cancel") { return try cancelSend(body, station: station, client: client, now: now) }
    if body.contains("room") { return try roomSend(body, station: station, client: client, now: now) }
    let address = station.description
    var request = try Self.sendRequest(
      body, station: station, logins: [config.listenerLogin].compactMap { $0 })
    request.client = client.key
    guard config.send.enabled else { throw .notOffered("sending messages is turned off on this server") }
    let listener = try store { () throws(StoreError) in try database.listenerStatus() }
    // The login the running listener published (a responder whose config lacks [aprsis] still knows it).
    if request.kind == .message, let login = listener.login,
      let problem = OutgoingMessage.addresseeProblem(request.addressee, login: login)
    {
      throw .badRequest("to: \(problem)")
    }
    guard !listener.receiveOnly else {
      throw .notOffered(
        "this server cannot transmit on APRS-IS: its login is receive-only or unverified; messages can only be"
          + " received")
    }
    let limits = sendLimits(client)
    let creation = try store { () throws(StoreError) in
      try database.createSend(request, limits: limits, now: now)
    }
    let message: StoredMessage
    let serverTime: Int64
    switch creation {
    case .created(let stored, let time), .replayed(let stored, let time):
      message = stored
      serverTime = time
    case .unknownStation:
      throw .stationNotFound(address)
    default:
      try Self.throwSendRefusal(creation, config: config.send)
      throw .stationNotFound(address)
    }
    return sendAnswer(message, serverTime: serverTime, station: address)
  }

  /// The send limits of a request from `client` (`[send]`).
  func sendLimits(_ client: ClientAddress) -> SendLimits {
    SendLimits(
      perMinute: config.send.perMinute, inFlight: config.send.inFlight, address: client.key,
      perAddressPerMinute: config.send.sendsPerAddressPerMinute,
      globalPerMinute: config.send.sendsPerMinuteGlobal,
      network: client.network?.description, wideNetwork: client.wideNetwork?.description,
      bulletinsPerDay: config.send.bulletinsPerDay)
  }

  /// Throws the 429 of a send the limits refused (`creation` one of the `tooMany…` cases; the others return).
  static func throwSendRefusal(_ creation: SendCreation, config: SendConfig) throws(APIError) {
    switch creation {
    case .created, .replayed, .unknownStation:
      return
    case .tooManyPerMinute(let retryAfterMs):
      throw .rateLimited(what: "messages sent this minute", retryAfterSeconds: Self.seconds(retryAfterMs))
    case .tooManyBulletins(let retryAfterMs):
      throw .rateLimited(
        what:
          "bulletins and announcements sent by this station in 24 h (at most \(config.bulletinsPerDay))",
        retryAfterSeconds: Self.seconds(retryAfterMs))
    case .tooManyInFlight:
      throw .rateLimited(
        what: "messages waiting for an answer (at most \(config.inFlight))",
        retryAfterSeconds: Self.inFlightRetryAfterSeconds)
    case .tooManyFromAddress(let retryAfterMs):
      throw .rateLimited(
        what: "messages sent from this address this minute (at most \(config.sendsPerAddressPerMinute))",
        retryAfterSeconds: Self.seconds(retryAfterMs))
    case .tooManyFromNetwork(let retryAfterMs, let network, let limit):
      throw .rateLimited(
        what:
          "messages sent from this network (\(network)) this minute (at most \(limit), its share of everyone's)",
        retryAfterSeconds: Self.seconds(retryAfterMs))
    case .tooManyGlobal(let retryAfterMs):
      throw .rateLimited(
        what:
          "messages sent through this server this minute (at most \(config.sendsPerMinuteGlobal) from"
          + " everyone)", retryAfterSeconds: Self.seconds(retryAfterMs))
    }
  }

  /// `POST /v1/send` `{callsign, ssid, auth, cancel:"<clientId>"}` (docs/protocol.md "Owned stations"): the station's
  /// send with that `clientId` stops: in flight, it ends `cancelled` (re-stamped, so sync shows it again; the
  /// listener never transmits it again); already ended, it is answered as it is. Answers
  /// `{"message":{…},"serverTime":…}` like a send. `cancel` is a `clientId` (1–64 characters; 400 naming
  /// `cancel`), `to` and `text` must not come with it; an unknown one is a 404, an unregistered station too.
  /// Works whatever `[send] enabled` and the listener say: stopping never hurts.
  func cancelSend(_ body: RequestBody, station: StationAddress, client: ClientAddress, now: Int64)
    throws(APIError) -> APIResponse
  {
    let address = station.description
    for key in ["to", "text", "room"] where body.contains(key) {
      throw .badRequest("cancel: a cancel takes no \(key); send either a message or a cancel")
    }
    let clientId = try body.string("cancel", maxLength: 1024) ?? ""
    guard !clientId.isEmpty else {
      throw .badRequest("cancel must be the clientId of a message this station sent")
    }
    guard clientId.unicodeScalars.count <= Self.maximumClientIdLength else {
      throw .badRequest("cancel is longer than \(Self.maximumClientIdLength) characters (a clientId)")
    }
    let cancellation = try store { () throws(StoreError) in
      try database.cancelSend(station: address, clientId: clientId, now: now, client: client.key)
    }
    switch cancellation {
    case .cancelled(let message, let serverTime), .finished(let message, let serverTime):
      return sendAnswer(message, serverTime: serverTime, station: address)
    case .unknownStation:
      throw .stationNotFound(address)
    case .unknownClientId:
      throw .sendNotFound(clientId: clientId)
    }
  }

  /// `{"message":{…},"serverTime":…}`.
  func sendAnswer(_ message: StoredMessage, serverTime: Int64, station: String) -> APIResponse {
    var writer = JSONWriter(capacity: 256)
    writer.beginObject()
    writer.key("message")
    Self.writeMessage(message, to: &writer)
    writer.key("serverTime")
    writer.int(serverTime)
    writer.endObject()
    return .ok(writer, station: station)
  }

  /// The validated send: `to` a bulletin or announcement address (`BLN0`–`BLN9`, `BLNA`–`BLNZ`, then at most 5
  /// letters or digits of group, any case: a ``Store/SendKind/bulletin`` send; any other `BLN…` is a 400), or a
  /// station address other than the sender's and not a weather address;
  /// `text` 1–67 printable characters without `{`, `|`, `~` that receivers read back as a message (trailing
  /// spaces dropped first: receivers drop them too); `clientId` at most 64 characters (empty counts as absent);
  /// and a sender APRS-IS passes. `logins`: this server's APRS-IS login(s), refused as addressees
  /// (`OutgoingMessage.addresseeProblem`, with the other calls that are no station).
  static func sendRequest(_ body: RequestBody, station: StationAddress, logins: [String] = [])
    throws(APIError)
    -> NewSend
  {
    let toText = try body.requiredString("to", maxLength: 32)
    let kind: SendKind
    let addressee: String
    if toText.uppercased().hasPrefix("BLN") {
      if let problem = OutgoingMessage.bulletinAddresseeProblem(toText) {
        throw .badRequest("to: \(problem)")
      }
      kind = .bulletin
      addressee = toText.uppercased()
    } else {
      let address: StationAddress
      do {
        address = try StationAddress(parsing: toText)
      } catch {
        throw .badRequest("to: must be a station address (CALL or CALL-SSID): \(error)")
      }
      guard address != station else { throw .badRequest("to: a station cannot send a message to itself") }
      for login in logins.isEmpty ? [nil] : logins.map(Optional.some) {
        if let problem = OutgoingMessage.addresseeProblem(address.description, login: login) {
          throw .badRequest("to: \(problem)")
        }
      }
      kind = .message
      addressee = address.description
    }
    var text = try body.requiredString("text", maxLength: 1024)
    while text.unicodeScalars.last == " " { text.unicodeScalars.removeLast() }
    if let problem = OutgoingMessage.textProblem(text) { throw .badRequest(problem) }
    let clientId = try sendClientId(body)
    guard !OutgoingMessage.isDisallowedSource(station.description) else {
      throw .badRequest(
        "callsign: APRS-IS drops every packet from \(station.description) (N0CALL, NOCALL and SERVER can receive"
          + " but never send)")
    }
    return NewSend(
      station: station.description, addressee: addressee, text: text, clientId: clientId, kind: kind)
  }

  /// `clientId` of a send: at most 64 characters, no control characters; empty counts as absent.
  static func sendClientId(_ body: RequestBody) throws(APIError) -> String? {
    let clientId = try body.string("clientId", maxLength: 1024).flatMap { $0.isEmpty ? nil : $0 }
    if let clientId {
      guard clientId.unicodeScalars.count <= maximumClientIdLength else {
        throw .badRequest("clientId is longer than \(maximumClientIdLength) characters")
      }
      guard !clientId.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
        throw .badRequest("clientId must not contain control characters")
      }
    }
    return clientId
  }
}
