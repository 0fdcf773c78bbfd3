import APRS
import JSON
import Store

extension APIHandler {
  /// Refuses a settings change that joins a net this server cannot transmit the join of: `[send] enabled` off, or
  /// a listener whose login is receive-only (503, nothing changed). Nets the station has already are not joined
  /// again, so keeping or leaving them always works.
  func checkNetJoins(_ drafts: [SubscriptionDraft], station: String) throws(APIError) {
    let wanted = drafts.compactMap { draft -> NetRoom? in
      guard case .net(let rule) = draft.rule else { return nil }
      return rule.room
    }
    guard !wanted.isEmpty else { return }
    let current = Database.netRules(
      try store { () throws(StoreError) in try database.subscriptions(of: station) })
    let joining = wanted.filter { current[$0] == nil }
    guard let first = joining.first else { return }
    guard config.send.enabled else {
      throw .notOffered("joining \(first) sends a message, and sending messages is turned off on this server")
    }
    let listener = try store { () throws(StoreError) in try database.listenerStatus() }
    guard !listener.receiveOnly else {
      throw .notOffered(
        "joining \(first) sends a message, and this server cannot transmit on APRS-IS: its login is receive-only"
          + " or unverified")
    }
    guard !OutgoingMessage.isDisallowedSource(station) else {
      throw .badRequest("callsign: APRS-IS drops every packet from \(station), so it cannot join a net")
    }
  }

  /// `POST /v1/send` `{…, room:"ANSRVR/HOTG", text, clientId?}` (docs/protocol.md "Nets and rooms"): posts `text`
  /// to the room with the service's command (`CQ GROUP text`), as the station's send (its limits, retried until
  /// the service ACKs), shown as the room's `sent` entry. 400 naming `room` for a room that is not one
  /// (`SERVICE/GROUP` of a known service) or that the station is no member of, naming `text` for a text that is
  /// not a message's or does not fit with the command; 429 with `Retry-After` inside the service's least time
  /// between posts (CQSRVR: 30 minutes) and past the send limits; 503 as for any send.
  func roomSend(_ body: RequestBody, station: StationAddress, client: ClientAddress, now: Int64)
    throws(APIError) -> APIResponse
  {
    let address = station.description
    if body.contains("to") { throw .badRequest("room: a post to a room takes no to; send either to or room") }
    let roomText = try body.requiredString("room", maxLength: 32)
    guard let room = NetRoom(roomText) else {
      throw .badRequest("room must be SERVICE/GROUP of a net service this server knows, such as ANSRVR/HOTG")
    }
    var text = try body.requiredString("text", maxLength: 1024)
    while text.unicodeScalars.last == " " { text.unicodeScalars.removeLast() }
    if let problem = OutgoingMessage.textProblem(text) { throw .badRequest(problem) }
    guard let post = room.service.postText(group: room.group, text: text) else {
      throw .badRequest(
        "text is too long for \(room): CQ \(room.group) and the text must fit"
          + " \(NetService.maximumTextLength) characters")
    }
    let clientId = try Self.sendClientId(body)
    guard !OutgoingMessage.isDisallowedSource(address) else {
      throw .badRequest(
        "callsign: APRS-IS drops every packet from \(address) (N0CALL, NOCALL and SERVER can receive but never send)"
      )
    }
    guard config.send.enabled else { throw .notOffered("sending messages is turned off on this server") }
    let listener = try store { () throws(StoreError) in try database.listenerStatus() }
    guard !listener.receiveOnly else {
      throw .notOffered("this server cannot transmit on APRS-IS: its login is receive-only or unverified")
    }
    let send = NewSend(station: address, addressee: room.service.call, text: post, clientId: clientId)
    let limits = sendLimits(client)
    let creation = try store { () throws(StoreError) in
      try database.createRoomPost(send, room: room, limits: limits, client: client.key, now: now)
    }
    switch creation {
    case .notMember:
      throw .badRequest("room: \(address) is no member of \(room); add a net subscription of it first")
    case .tooSoon(let retryAfterMs):
      throw Self.tooSoonToPost(room, retryAfterMs: retryAfterMs)
    case .sent(.created(let message, let serverTime)), .sent(.replayed(let message, let serverTime)):
      return sendAnswer(message, serverTime: serverTime, station: address)
    case .sent(.unknownStation):
      throw .stationNotFound(address)
    case .sent(let refused):
      try Self.throwSendRefusal(refused, config: config.send)
      throw .stationNotFound(address)
    }
  }

  /// The 429 of a post (or a join by post) inside the service's least time between posts.
  static func tooSoonToPost(_ room: NetRoom, retryAfterMs: Int64) -> APIError {
    .rateLimited(
      what: "posts to \(room) (\(room.service.call) takes one per group every"
        + " \((room.service.postIntervalMs ?? 0) / 60_000) minutes)",
      retryAfterSeconds: seconds(retryAfterMs))
  }
}
