import APRS
import Store

/// Registered stations by upper-case address, with whether each wants its messages ACKed: a plain value for
/// tests and tools. The listener itself asks a ``StationRegistry`` (no `String` per station) and the database.
struct LiveStationSet: Sendable, Equatable {
  /// `ackMessages` by upper-case station address (`CALL` or `CALL-SSID`).
  let ackMessages: [String: Bool]
  /// The stations that collect other SSIDs of their call.
  var coverage: SSIDCoverage
  /// The stations' subscriptions.
  var subscriptions = SubscriptionIndex.empty
  /// The stations whose own transmissions are followed.
  var own = OwnTransmissions.empty

  init(_ stations: [LiveStation], collecting: [OtherSSIDStation] = []) {
    var map: [String: Bool] = [:]
    map.reserveCapacity(stations.count)
    for station in stations { map[station.address.uppercased()] = station.ackMessages }
    ackMessages = map
    coverage = SSIDCoverage(collecting)
  }

  /// No stations.
  static let empty = LiveStationSet([])

  var count: Int { ackMessages.count }

  /// Whether `address` (already upper case; exact SSID) is served.
  func contains(_ address: String) -> Bool { ackMessages[address] != nil }
}

/// Why a line leads to nothing being stored.
enum SkipReason: String, Sendable, CaseIterable {
  /// A server `#` line (keepalive, banner, answers).
  case comment
  /// Not a TNC2 packet (garbage, bad header, empty).
  case invalid
  /// A packet, but not a message (positions, status, objects, courtesy positions, empty messages).
  case notMessage
  /// A message for nobody the listener serves (what the filter's prefixes let through, login-call deliveries,
  /// the 3 h rule).
  case notForUs
  /// A bulletin or announcement.
  case bulletin
  /// A weather or warning message (NWS, SKY, CWA, BOM).
  case weather
  /// Telemetry metadata.
  case telemetry
  /// A directed query (`?APRSP`).
  case query
  /// A station's message to itself.
  case toSelf
}

/// An ACK to send once its message is committed: the line and the key of the 30 s rule.
struct PlannedAck: Sendable, Equatable {
  /// The message's retransmission key (``DedupKey/digest``): one ACK per key per 30 s.
  var key: String
  /// The ACK line, CR LF included.
  var line: [UInt8]
}

/// A message to store, and the ACK its copies earn (nil: never ACKed).
struct PlannedMessage: Sendable, Equatable {
  var incoming: IncomingMessage
  var ack: PlannedAck?
  /// The ACK the message earns whatever the connection can do now and whatever the station wants (nil when it
  /// earns none: unnumbered, sent): what `ackPolicy:"device"` keeps until a device pulls the message.
  var earnedAck: PlannedAck? = nil
}

/// A packet from a watched call: what it says, and who watches it (``SubscriptionIndex/watches(of:)``). The
/// writer runs each watch's state machine (``WatchTracker``) in its transaction.
struct WatchSighting: Sendable, Equatable {
  var report: StationReport
  var watches: [SubscriptionMatch]
}

/// A weather line that names no zone but carries an alert's identity (``WeatherAlertIdentity``: a `SKY…` line
/// with the rest of an alert, `{JBNBB` after the alert's `{JBNBA`): the writer stores it, in its transaction, for
/// the stations the alert itself was stored for (``MessageWriter/continuationEntries(for:planned:stampedAt:)``).
struct WeatherContinuation: Sendable, Equatable {
  var identity: WeatherAlertIdentity
  /// The entry to store, its station and subscription filled in for each station the alert was stored for.
  var entry: IncomingMessage
}

/// What one line means for the listener.
struct RoutedLine: Sendable, Equatable {
  /// Messages to store: one received copy for the addressee, and with outgoing tracking one sent copy for the
  /// sender, when each is a served station; and one subscription entry per subscribing station.
  var messages: [PlannedMessage] = []
  /// The packet's sender is watched.
  var sighting: WatchSighting?
  /// A weather line that may continue a stored alert.
  var continuation: WeatherContinuation?
  /// An ack or rej addressed to a served station.
  var receipt: DeliveryReceipt?
  /// A followed station's own answer (``StationAnswer``: its `ack`, `rej` or reply-ack), heard on APRS-IS: what
  /// ``FallbackAckSchedule/heard(_:now:)`` takes.
  var answer: StationAnswer?
  /// Why nothing is to be done (nil when there is something).
  var skip: SkipReason?

  static func skipped(_ reason: SkipReason) -> RoutedLine { RoutedLine(skip: reason) }
}

/// Decides locally what a line from APRS-IS is: the filter's prefixes let messages to other addressees through,
/// and whatever the filter, APRS-IS also delivers messages to the login call, to stations this connection
/// transmitted for, and courtesy positions. Only an exact match with a served station counts. Pure: what it
/// knows about stations comes in as ``ServedStations``.
///
/// - A message (``PacketKind/message``, third-party ones unwrapped) to a served station (its addressee matched
///   case-insensitively, exact SSID, `CALL-0` being `CALL`) is stored as received, peer = the sender (upper
///   case, `CALL-0` as `CALL`). It earns an ACK when it
///   is numbered, the station may want ACKs (``ServedStations/mayAck(_:)``: `ackMessages`), and the connection may
///   transmit (verified, not receive-only): source the addressee as sent, the echo everything after `{`
///   (reply-ack `ackMM}AA`).
/// - A message to another SSID of the call of a served station that collects it (setting `ssids`:
///   ``ServedStations/collectors(of:)``) is also stored for that station as received, with ``IncomingMessage/to``
///   the addressee (canonical: `CALL-0` as `CALL`). When the addressee itself is served here, its own copy and
///   its own ACK policy stand and the collected copy never earns an ACK (never two ACKs); otherwise the copy
///   earns one only for an SSID in `ackSsids` (and then the collecting station's ACK policy decides, in
///   ``settle(_:settings:canTransmit:)``), from the addressee as the message named it; of several stations
///   collecting the same SSID only the first in address order that asked for its ACKs.
/// - With outgoing tracking, a message sent BY a served station is stored for that station as sent, peer = the
///   addressee (its key is distinct from the received copy's, so a message between two served stations is kept
///   by both). Never ACKed. So is one sent by a followed station with `trackSent`
///   (``OwnTransmissions/tracksSent(of:)``), marked ``IncomingMessage/heardSent`` (its state follows the peer's
///   ack or rej; shown only to `want:["sent"]`). Not for a line this listener transmitted (``LineOrigin/transmitted``): a `/v1/send`
///   has its own sent entry.
/// - A line this listener transmitted is routed as if APRS-IS had delivered it (aprsc never echoes a client's
///   own packets): a `/v1/send` to a station registered here is stored for it with the key a copy from APRS-IS
///   would have (a later copy heard from APRS-IS is a duplicate), and its ACK (by that station's policy, itself
///   transmitted and so routed too) is the sender's receipt.
/// - An ack or rej to a served station is a delivery receipt, never a message.
/// - Subscriptions (``SubscriptionIndex``): a bulletin, announcement, weather alert or message to a group call that
///   a station's subscription matches is one entry for that station (``IncomingMessage/entry``: peer the sender,
///   ``IncomingMessage/to`` the addressee), keyed on sender, addressee and text with a sliding window
///   (``subscriptionWindowMs``), never ACKed. Any packet from a watched call is a ``WatchSighting``. A weather line
///   that names no zone but carries an alert's identity (`SKYRIW   :THROUGH SATURDAY {JBNBC`) is a
///   ``WeatherContinuation``, while anyone subscribes to a zone: stored with the alert it continues, for the
///   stations that alert was stored for within ``subscriptionWindowMs``.
/// - Other bulletins, announcements and weather (what the filter's prefixes let through for nobody), telemetry,
///   queries and a station's message to itself are skipped.
/// - What the addressees' settings say (blocked senders, the ACK policy) is applied next, by
///   ``settle(_:settings:canTransmit:)``, with the settings the writer reads in its transaction.
struct LineRouter: Sendable {
  /// Also store messages sent by served stations.
  var trackOutgoing: Bool
  /// The destination call of ACKs.
  var toCall: String

  init(trackOutgoing: Bool = false, toCall: String = OutgoingLine.defaultToCall) {
    self.trackOutgoing = trackOutgoing
    self.toCall = toCall
  }

  /// The prefix of a sent copy's dedup key (keeps it apart from the received copy's key).
  static let sentKeyPrefix = "sent" + String(DedupKey.separator)
  /// The prefix of a collected copy's dedup key (a message to another SSID of the call, setting `ssids`).
  static let collectedKeyPrefix = "ssid" + String(DedupKey.separator)
  /// The prefix of a subscription entry's dedup key.
  static let subscriptionKeyPrefix = "sub" + String(DedupKey.separator)
  /// How long a subscription entry's key suppresses copies (ms), extended by each copy: a bulletin or alert
  /// repeated at least every 2 h (every 20 minutes is usual) stays one entry however long it runs.
  static let subscriptionWindowMs: Int64 = 2 * 3_600_000

  /// Routes one line (bytes without the line ending; an ending is tolerated). `canTransmit`: ACKs may be sent.
  /// `origin`: where the line came from (a line this listener transmitted is never stored as a sent copy: its
  /// send has its own entry).
  /// `subscriptions`: the live stations' subscriptions; `own`: the stations whose own transmissions are followed
  /// (both read once per batch).
  func route(
    _ line: some Collection<UInt8>, stations: some ServedStations, canTransmit: Bool,
    origin: LineOrigin = .aprsis, subscriptions: SubscriptionIndex = .empty, own: OwnTransmissions = .empty
  ) -> RoutedLine {
    switch TNC2Packet.parse(line) {
    case .failure:
      return .skipped(.invalid)
    case .success(.comment):
      return .skipped(.comment)
    case .success(.packet(let packet)):
      return route(
        packet, stations: stations, canTransmit: canTransmit, origin: origin, subscriptions: subscriptions,
        own: own)
    }
  }

  /// Routes one parsed packet.
  func route(
    _ packet: TNC2Packet, stations: some ServedStations, canTransmit: Bool, origin: LineOrigin = .aprsis,
    subscriptions: SubscriptionIndex = .empty, own: OwnTransmissions = .empty
  ) -> RoutedLine {
    var routed = routeAddressed(
      packet, stations: stations, canTransmit: canTransmit, origin: origin, subscriptions: subscriptions,
      own: own)
    if subscriptions.hasWatches {
      let watches = subscriptions.watches(of: packet.source)
      if !watches.isEmpty {
        routed.sighting = WatchSighting(report: StationReport.read(packet), watches: watches)
        routed.skip = nil
      }
    }
    return routed
  }

  /// The message-format part of ``route(_:stations:canTransmit:origin:subscriptions:own:)``.
  private func routeAddressed(
    _ packet: TNC2Packet, stations: some ServedStations, canTransmit: Bool, origin: LineOrigin,
    subscriptions: SubscriptionIndex, own: OwnTransmissions
  ) -> RoutedLine {
    guard case .addressed(let message) = AddressedPacket.classify(packet) else {
      return .skipped(.notMessage)
    }
    // A followed station's own answer (never a line this listener transmitted: its ACKs carry the station's call).
    // (`sender` is already canonical: `CALL-0` as `CALL`, as the store names stations.)
    let answer =
      origin == .aprsis && !own.isEmpty && own.follows(message.sender) ? StationAnswer(message) : nil
    switch message.kind {
    case .ack, .rej:
      guard stations.serves(message.addressee), let number = message.ackedMsgno else {
        return answer.map { RoutedLine(answer: $0) } ?? .skipped(.notForUs)
      }
      return RoutedLine(
        receipt: DeliveryReceipt(
          station: message.addressee, peer: message.sender, msgno: number,
          kind: message.kind == .ack ? .ack : .rej, replyAck: message.replyAck),
        answer: answer)
    case .bulletin, .announcement, .weather:
      let entries = Self.subscriptionEntries(for: message, subscriptions)
      if entries.isEmpty, let continuation = Self.continuation(of: message, subscriptions) {
        return RoutedLine(continuation: continuation)
      }
      guard !entries.isEmpty else { return .skipped(message.kind == .weather ? .weather : .bulletin) }
      return RoutedLine(messages: entries)
    case .telemetry: return .skipped(.telemetry)
    case .query: return .skipped(.query)
    case .other: return .skipped(.notMessage)
    case .message: break
    }
    guard !message.isToSelf else { return .skipped(.toSelf) }

    let key = DedupKey(message)
    let windowMs = Int64(key.window) * 1000
    let sender = message.sender
    var routed = RoutedLine()
    if stations.serves(message.addressee) {
      let earned = OutgoingLine.ack(for: message, toCall: toCall).map {
        PlannedAck(key: key.digest, line: $0)
      }
      let ack = canTransmit && stations.mayAck(message.addressee) ? earned : nil
      var incoming = IncomingMessage(
        station: message.addressee, direction: .received, peer: sender, text: message.text,
        msgno: message.seqId, dedupKey: key.digest, dedupWindowMs: windowMs)
      if subscriptions.hasNets { Self.readAsRoomEntry(packet, into: &incoming, subscriptions) }
      routed.messages.append(PlannedMessage(incoming: incoming, ack: ack, earnedAck: earned))
    }
    collect(
      message, key: key, windowMs: windowMs, stations: stations, canTransmit: canTransmit, into: &routed)
    // `trackSent`: what a followed station's radio sends.
    let tracksSent = !own.isEmpty && own.tracksSent(of: sender)
    if origin == .aprsis, tracksSent || (trackOutgoing && stations.serves(sender)) {
      var incoming = IncomingMessage(
        station: sender, direction: .sent, peer: message.addressee, text: message.text, msgno: message.seqId,
        dedupKey: Self.sentKeyPrefix + key.digest, dedupWindowMs: windowMs)
      incoming.heardSent = tracksSent
      routed.messages.append(PlannedMessage(incoming: incoming, ack: nil))
    }
    routed.messages += Self.subscriptionEntries(for: message, subscriptions)
    routed.answer = answer
    if routed.messages.isEmpty && answer == nil { routed.skip = .notForUs }
    return routed
  }

  /// Makes `incoming` (a message to a served station) the entry of a room when the station is a member of the room
  /// whose fan-out or service answer `packet` carries (``NetFanOut``): the room's entry, the post's text without
  /// the service's command, the real sender as peer. Its ACK and dedup stay a message's.
  static func readAsRoomEntry(
    _ packet: TNC2Packet, into incoming: inout IncomingMessage, _ subscriptions: SubscriptionIndex
  ) {
    guard let fanOut = NetFanOut(packet),
      let member = subscriptions.membership(of: StationAddress.canonical(incoming.station), in: fanOut.room)
    else { return }
    incoming.entry = .room(fanOut.room, subscription: member.subscription.id)
    incoming.peer = fanOut.peer
    if !fanOut.text.isEmpty { incoming.text = fanOut.text }
  }

  /// The continuation `message` may be: a weather line with an alert's identity that names no zone, while some
  /// station subscribes to zones; nil otherwise.
  static func continuation(of message: AddressedPacket, _ subscriptions: SubscriptionIndex)
    -> WeatherContinuation?
  {
    guard subscriptions.hasZones, let identity = WeatherAlertIdentity(message),
      NWSZones.zones(in: message.text).isEmpty
    else { return nil }
    return WeatherContinuation(
      identity: identity,
      entry: IncomingMessage(
        station: identity.sender, peer: message.sender, text: message.text, msgno: message.seqId,
        dedupKey: subscriptionKey(message), dedupWindowMs: subscriptionWindowMs, to: message.addressee,
        entry: SubscriptionEntry(kind: .nws, subscription: "")))
  }

  /// The dedup key of a subscription entry: sender, addressee and text (never the number: a repeat renumbered is
  /// the same entry).
  static func subscriptionKey(_ message: AddressedPacket) -> String {
    subscriptionKeyPrefix
      + DedupKey(
        sender: message.source, addressee: message.addressee, msgno: String?.none, text: message.text
      )
      .digest
  }

  /// One entry per station whose subscriptions `message` matches (its first matching subscription), never ACKed.
  static func subscriptionEntries(for message: AddressedPacket, _ subscriptions: SubscriptionIndex)
    -> [PlannedMessage]
  {
    let matches = subscriptions.matches(message)
    guard !matches.isEmpty else { return [] }
    let key = subscriptionKey(message)
    return matches.compactMap { match in
      // A station's own bulletin or group message is not news to it.
      guard match.station != message.sender else { return nil }
      return PlannedMessage(
        incoming: IncomingMessage(
          station: match.station, peer: message.sender, text: message.text, msgno: message.seqId,
          dedupKey: key, dedupWindowMs: subscriptionWindowMs, to: message.addressee,
          entry: SubscriptionEntry(kind: match.subscription.kind, subscription: match.subscription.id)),
        ack: nil)
    }
  }

  /// The copies of `message` for the served stations that collect its addressee as another SSID of their call.
  private func collect(
    _ message: AddressedPacket, key: DedupKey, windowMs: Int64, stations: some ServedStations,
    canTransmit: Bool, into routed: inout RoutedLine
  ) {
    // Asked with the addressee as parsed: nothing is allocated while no station collects other SSIDs.
    let collectors = stations.collectors(of: message.addressee)
    guard !collectors.isEmpty else { return }
    let to = StationAddress.canonical(message.addressee)
    // The addressee registered here answers for itself (its own ACK policy), and of several stations collecting
    // it only the first (in address order) that asked for its ACKs may: never a second ACK.
    var answered = stations.serves(message.addressee)
    // The station's own message to another SSID of its call is not news to it.
    for collector in collectors where collector.station != message.sender {
      let earned =
        answered || !collector.acks
        ? nil : OutgoingLine.ack(for: message, toCall: toCall).map { PlannedAck(key: key.digest, line: $0) }
      if earned != nil { answered = true }
      routed.messages.append(
        PlannedMessage(
          incoming: IncomingMessage(
            station: collector.station, direction: .received, peer: message.sender, text: message.text,
            msgno: message.seqId, dedupKey: Self.collectedKeyPrefix + key.digest, dedupWindowMs: windowMs,
            to: to),
          ack: canTransmit ? earned : nil, earnedAck: earned))
    }
  }
}
