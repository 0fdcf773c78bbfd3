import APRS
import JSON
import Store

extension APIHandler {
  /// The longest `clientId`, in characters (PROTOCOL.md "Sending messages").
  static let maximumClientIdLength = 64
  /// `Retry-After` when the station has too many sends in flight: about the schedule's second copy.
  static let inFlightRetryAfterSeconds = 60

  /// `POST /v1/send` `{callsign, ssid, auth, to, text, clientId?}` (PROTOCOL.md "Sending messages"): stores the
  /// message for the listener, which transmits it and retries until the addressee answers. Answers
  /// `{"message":{…},"serverTime":…}` with the message exactly as sync shows it.
  ///
  /// In order: the fields (400 naming `to`, `text` or `clientId`); a sender APRS-IS always drops (`N0CALL`, …:
  /// 400 naming `callsign`); `[send] enabled` and the listener's login (receive-only or unverified: 503); then
  /// in one transaction the station (404 when not registered), a replayed `clientId` (the first message, nothing
  /// sent), and the per-station limits (429). `serverTime` is the newest timestamp at the commit (for a new
  /// message its own); a client keeps following its own sync cursor.
  func send(_ body: RequestBody, station: StationAddress, now: Int64) throws(APIError) -> APIResponse {
    let address = station.description
    let request = try Self.sendRequest(body, station: station)
    guard config.send else { throw .notOffered("sending messages is turned off on this server") }
    let listener = try store { () throws(StoreError) in try database.listenerStatus() }
    guard !listener.receiveOnly else {
      throw .notOffered(
        "this server cannot transmit on APRS-IS: its login is receive-only or unverified; messages can only be"
          + " received")
    }
    let limits = SendLimits(perMinute: config.sendsPerMinute, inFlight: config.sendsInFlight)
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
    case .tooManyPerMinute(let retryAfterMs):
      throw .rateLimited(what: "messages sent this minute", retryAfterSeconds: Self.seconds(retryAfterMs))
    case .tooManyInFlight:
      throw .rateLimited(
        what: "messages waiting for an answer (at most \(config.sendsInFlight))",
        retryAfterSeconds: Self.inFlightRetryAfterSeconds)
    }
    var writer = JSONWriter(capacity: 256)
    writer.beginObject()
    writer.key("message")
    writeMessage(message, to: &writer)
    writer.key("serverTime")
    writer.int(serverTime)
    writer.endObject()
    return .ok(writer, station: address)
  }

  /// The validated send: `to` a station address other than the sender's and not a bulletin or weather address;
  /// `text` 1–67 printable characters without `{`, `|`, `~` that receivers read back as a message (trailing
  /// spaces dropped first: receivers drop them too); `clientId` at most 64 characters (empty counts as absent);
  /// and a sender APRS-IS passes.
  static func sendRequest(_ body: RequestBody, station: StationAddress) throws(APIError) -> NewSend {
    let toText = try body.requiredString("to", maxLength: 32)
    let addressee: StationAddress
    do {
      addressee = try StationAddress(parsing: toText)
    } catch {
      throw .badRequest("to: must be a station address (CALL or CALL-SSID): \(error)")
    }
    guard addressee != station else { throw .badRequest("to: a station cannot send a message to itself") }
    if let problem = OutgoingMessage.addresseeProblem(addressee.description) {
      throw .badRequest("to: \(problem)")
    }
    var text = try body.requiredString("text", maxLength: 1024)
    while text.unicodeScalars.last == " " { text.unicodeScalars.removeLast() }
    if let problem = OutgoingMessage.textProblem(text) { throw .badRequest(problem) }
    let clientId = try body.string("clientId", maxLength: 1024).flatMap { $0.isEmpty ? nil : $0 }
    if let clientId {
      guard clientId.unicodeScalars.count <= maximumClientIdLength else {
        throw .badRequest("clientId is longer than \(maximumClientIdLength) characters")
      }
      guard !clientId.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
        throw .badRequest("clientId must not contain control characters")
      }
    }
    guard !OutgoingMessage.isDisallowedSource(station.description) else {
      throw .badRequest(
        "callsign: APRS-IS drops every packet from \(station.description) (N0CALL, NOCALL and SERVER can receive"
          + " but never send)")
    }
    return NewSend(
      station: station.description, addressee: addressee.description, text: text, clientId: clientId)
  }
}
