/// Which way a stored message went, from the registered station's side; stored as its raw value
/// (`messages.direction`) and shown as such by /v1/sync and `/metrics`.
public enum MessageDirection: String, Sendable, CaseIterable {
  /// Addressed to the registered station (pushed to its devices).
  case received
  /// Sent by the registered station (outgoing tracking; never pushed).
  case sent
}

/// Who answered a message instead of the server (`messages.answered_by`, sql/024_own_radio.sql).
public enum AnsweredBy: String, Sendable, CaseIterable {
  /// The station's own radio: its `ack` or `rej`, heard through an igate within `fallbackWait`.
  case air
}

/// Where a `sent` entry of the station's own radio stands (`trackSent`; `messages.heard_state`): shown as `state`.
public enum HeardState: String, Sendable, CaseIterable {
  /// Heard on APRS-IS; no answer from the peer yet.
  case sent
  /// The peer ACKed it.
  case acked
  /// The peer rejected it.
  case rejected
}

/// A message as stored and as /v1/sync returns it.
public struct StoredMessage: Sendable, Equatable {
  /// Received by the station, or sent by it (outgoing tracking).
  public var direction: MessageDirection
  /// The other station: the sender of a received message, the addressee of a sent one.
  public var peer: String
  /// The text without the `{msgno` suffix.
  public var text: String
  /// The message number (`seqId`), or nil for an unnumbered message.
  public var msgno: String?
  /// When the server stored it, epoch ms; unique and the sync cursor. A sent message gets a new one with each
  /// state change.
  public var timestamp: Int64
  /// For a message sent through `/v1/send`: where it stands. Nil for every other message (received ones, and sent
  /// ones seen by outgoing tracking).
  public var state: SendState?
  /// For a message sent through `/v1/send`: the caller's `clientId`, if it gave one.
  public var clientId: String?
  /// For a message to another SSID of the station's call (setting `ssids`): its addressee (upper case, `CALL-0`
  /// as `CALL`), shown as `to`. Nil for every message addressed to the station itself.
  public var to: String?
  /// For a subscription entry (`want:["subscriptions"]`): its kind, subscription and watch event; nil for a
  /// message (`type:"message"`). A bulletin, group or NWS entry's ``to`` is the addressee it was sent to.
  public var entry: SubscriptionEntry?
  /// Who answered a received message when the server did not: ``AnsweredBy/air`` when the station's own radio
  /// did (`ackPolicy:"fallback"`), shown as `answeredBy` to `want:["answeredBy"]` clients. Nil otherwise.
  public var answeredBy: AnsweredBy?
  /// For a `sent` entry of the station's own radio (`trackSent`, `want:["sent"]`): where it stands. Nil otherwise.
  public var heardState: HeardState?

  /// A stored message; see the properties.
  public init(
    direction: MessageDirection, peer: String, text: String, msgno: String?, timestamp: Int64,
    state: SendState? = nil, clientId: String? = nil, to: String? = nil, entry: SubscriptionEntry? = nil,
    answeredBy: AnsweredBy? = nil, heardState: HeardState? = nil
  ) {
    self.heardState = heardState
    self.answeredBy = answeredBy
    self.to = to
    self.entry = entry
    self.direction = direction
    self.peer = peer
    self.text = text
    self.msgno = msgno
    self.timestamp = timestamp
    self.state = state
    self.clientId = clientId
  }
}

/// The answer to a sync: everything a client needs to move its cursor forward.
public struct SyncResult: Sendable, Equatable {
  /// Messages newer than `since`, oldest first.
  public var messages: [StoredMessage]
  /// The cursor to hand back: the newest timestamp visible to the read that built this answer
  /// (or `since`, if larger). Never the wall clock.
  public var serverTime: Int64
  /// The avatar hash of each distinct peer in `messages` that has a stored avatar.
  public var avatarHashes: [String: String]
  /// The newest message timestamp of the whole database in the read that built this answer
  /// (`serverTime` before `since` is folded in): a long poll that parks looks for messages after it.
  public var newestTimestamp: Int64 = 0
  /// An answer that stopped at its page size (``Database/pageSize(for:)``: 100 with `want:["inbox"]`, else 50):
  /// ask again from ``serverTime``. Only `want:["inbox"]` answers say so (`more`); the old protocol's just give
  /// that `serverTime`.
  public var more = false
  /// With `want:["inbox"]`: messages evicted unpulled after `since`.
  public var dropped = 0
  /// With `want:["inbox"]`: the oldest timestamp the station still holds (nil when it holds none).
  public var oldestHeld: Int64?
  /// With `want:["inbox"]`: the read markers changed after `since`, by peer (`*`: every conversation).
  public var read: [String: Int64] = [:]
  /// How many kept `device`-policy ACKs this sync marked pulled (``Database/sync(station:since:now:countsAsPull:wants:)``):
  /// more than 0 means the listener has ACKs to send (``CompanionFiles/ListenerWake/deviceAcks``).
  public var pulledDeviceAcks = 0
}

/// Which stations got messages after a given timestamp, read in one snapshot: what wakes parked
/// long polls (`Database.messageActivity(after:)`).
public struct MessageActivity: Sendable, Equatable {
  /// The newest message timestamp ever assigned, as that snapshot saw it (0 before the first).
  public var newestTimestamp: Int64
  /// Each station with messages stored after the given timestamp (and still in its ring), with
  /// the newest of their timestamps.
  public var stations: [String: Int64]

  public init(newestTimestamp: Int64, stations: [String: Int64]) {
    self.newestTimestamp = newestTimestamp
    self.stations = stations
  }
}

/// A message the listener heard for a registered station, to be stored once.
public struct IncomingMessage: Sendable, Equatable {
  /// The registered station address it is for (any case).
  public var station: String
  /// Received by the station (the default), or sent by it.
  public var direction: MessageDirection
  /// The other station (the sender of a received message).
  public var peer: String
  /// The text without the `{msgno` suffix.
  public var text: String
  /// The message number, or nil.
  public var msgno: String?
  /// The retransmission key (sender, addressee, msgno, text); a key seen within its window is
  /// a duplicate and is not stored again.
  public var dedupKey: String
  /// How long this key suppresses copies, in ms (about 1 h with a msgno, 30 min without).
  public var dedupWindowMs: Int64
  /// For a message to another SSID of the station's call (setting `ssids`): that addressee (upper case, `CALL-0`
  /// as `CALL`); such entries are kept in a ring of their own and shown only to clients that asked for them.
  /// Nil for a message to the station itself.
  public var to: String?
  /// For a subscription entry: what it matched (its ring of its own, never ACKed; ``to`` is then the addressee
  /// the traffic was sent to, or nil for a watch). Its dedup window slides: each copy seen within it extends it,
  /// so a bulletin repeated every 20 minutes for days is one entry.
  public var entry: SubscriptionEntry?
  /// How long its push waits (ms; 0: none): a message whose ACK waits for the station's own radio
  /// (`ackPolicy:"fallback"`) is pushed once that is decided (`airAnswered`), at the latest after the wait.
  public var pushHoldMs: Int64 = 0
  /// A `sent` entry of what the station's own radio sent (`trackSent`), stored with ``HeardState/sent``.
  public var heardSent = false

  /// An incoming message; see the properties.
  public init(
    station: String, direction: MessageDirection = .received, peer: String, text: String, msgno: String?,
    dedupKey: String, dedupWindowMs: Int64, to: String? = nil, entry: SubscriptionEntry? = nil
  ) {
    self.to = to
    self.entry = entry
    self.station = station
    self.direction = direction
    self.peer = peer
    self.text = text
    self.msgno = msgno
    self.dedupKey = dedupKey
    self.dedupWindowMs = dedupWindowMs
  }
}

/// What `storeMessages` did with one message of a batch.
public enum StoreOutcome: Sendable, Equatable {
  /// Stored (with its push queued in the outbox when received) under this id and timestamp.
  case stored(messageID: Int64, timestamp: Int64)
  /// A copy of a message stored within its dedup window: not stored again (still ACK it).
  case duplicate
  /// The station is not registered: nothing stored.
  case unknownStation
}
