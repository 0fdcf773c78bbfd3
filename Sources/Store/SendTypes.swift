/// Where a message sent through `/v1/send` stands; stored as its raw value (`sends.state`) and shown as such by
/// `/v1/sync` (`state`), `/metrics` and `aprs-cloud messages`.
public enum SendState: String, Sendable, CaseIterable {
  /// Being transmitted on its schedule; no answer yet.
  case pending
  /// The addressee acknowledged it (`ack<msgno>`, or a reply-ack `}<msgno>` in a message of its own).
  case acked
  /// The addressee refused it (`rej<msgno>`).
  case rejected
  /// No answer after the last copy of the schedule.
  case expired
  /// The station stopped it (`/v1/send` `cancel`): no copy goes out any more.
  case cancelled
  /// A bulletin or announcement whose schedule is over (``SendKind/bulletin``: nobody answers one, so it never
  /// expires; no push follows).
  case completed

  /// Whether the message is still in flight.
  public var isPending: Bool { self == .pending }
}

/// What a send is (`sends.kind`).
public enum SendKind: String, Sendable, CaseIterable {
  /// A message to a station: numbered (`{msgno`), retried until the addressee answers.
  case message
  /// A bulletin or announcement (`BLN0`–`BLN9`, `BLNA`–`BLNZ` and a group): unnumbered, sent on the bulletin
  /// schedule (`APRS.BulletinSchedule`), never answered.
  case bulletin
}

/// A send the responder asks the store to create (`Database.createSend`): every field already validated.
public struct NewSend: Sendable, Equatable {
  /// The sending station (a registered station address, any case).
  public var station: String
  /// The addressee (a station address; stored upper case).
  public var addressee: String
  /// The text, without any `{msgno` (1–67 printable characters).
  public var text: String
  /// The caller's idempotency key, if any (at most 64 characters).
  public var clientId: String?
  /// For a net's send (a join, renewal, leave or post to a room): the room entry it is shown as
  /// (``SubscriptionEntry/room(_:subscription:)``); nil for a message, shown as every send is.
  public var entry: SubscriptionEntry?
  /// A message (numbered) or a bulletin (the addressee a bulletin or announcement address; no number).
  public var kind: SendKind
  /// The client as the limits key it (for a bulletin's audit entry); empty when unknown.
  public var client: String

  public init(
    station: String, addressee: String, text: String, clientId: String?, entry: SubscriptionEntry? = nil,
    kind: SendKind = .message, client: String = ""
  ) {
    self.station = station
    self.addressee = addressee
    self.text = text
    self.clientId = clientId
    self.entry = entry
    self.kind = kind
    self.client = client
  }
}

/// The limits `createSend` holds (docs/protocol.md "Sending messages": past them, 429): per station, per client
/// address and over everyone, each a fixed 60 s window in `rate_limits`.
public struct SendLimits: Sendable, Equatable {
  /// Sends accepted per station per minute.
  public var perMinute: Int
  /// Sends of one station in flight (`pending`) at once.
  public var inFlight: Int
  /// The client address the send came from (the API's `ClientAddress.key`: an IPv4 address, an IPv6 /64 or
  /// `unknown`), nil to hold no per-address limit.
  public var address: String?
  /// Sends accepted per client address per minute (with ``address``).
  public var perAddressPerMinute: Int
  /// Sends accepted per minute over every station and address together.
  public var globalPerMinute: Int
  /// The client's network (IPv4 /24 or IPv6 /48) and, for IPv6, its wide network (/32), as the API's
  /// `AddressBlock` prints them; each takes at most ``networkShare`` (a /32 ``wideNetworkShare``) of
  /// ``globalPerMinute``.
  public var network: String?
  public var wideNetwork: String?
  /// Bulletins and announcements accepted per station in any 24 h (`[send] bulletinsPerDay`).
  public var bulletinsPerDay: Int

  /// The share of the global budget one network may send, and one IPv6 /32; one station at most
  /// ``networkShare`` too (the smaller of it and ``perMinute``).
  public static let networkShare = 1.0 / 3.0
  public static let wideNetworkShare = 1.0 / 2.0

  public init(
    perMinute: Int = 10, inFlight: Int = 20, address: String? = nil, perAddressPerMinute: Int = 20,
    globalPerMinute: Int = 30, network: String? = nil, wideNetwork: String? = nil, bulletinsPerDay: Int = 4
  ) {
    self.bulletinsPerDay = bulletinsPerDay
    self.perMinute = perMinute
    self.inFlight = inFlight
    self.address = address
    self.perAddressPerMinute = perAddressPerMinute
    self.globalPerMinute = globalPerMinute
    self.network = network
    self.wideNetwork = wideNetwork
  }

  /// `share` of the global budget, at least 1.
  public func share(_ share: Double) -> Int { max(1, Int((Double(globalPerMinute) * share).rounded(.down))) }

  /// What one station may send per minute: ``perMinute``, and never more than a network's share of everyone's.
  public var stationPerMinute: Int { min(perMinute, share(Self.networkShare)) }
}

/// What `createSend` did.
public enum SendCreation: Sendable, Equatable {
  /// Stored and queued for the listener: the message as sync shows it, and the newest timestamp in the database
  /// at the commit (the message's own).
  case created(StoredMessage, serverTime: Int64)
  /// The station already sent a message with this `clientId`: that message (as sync shows it now) and the newest
  /// timestamp at the read; nothing new was stored.
  case replayed(StoredMessage, serverTime: Int64)
  /// The station is not registered.
  case unknownStation
  /// Past the per-minute limit; retry after this many ms.
  case tooManyPerMinute(retryAfterMs: Int64)
  /// Past the in-flight limit (the station's pending sends).
  case tooManyInFlight
  /// A bulletin past the station's `bulletinsPerDay`: retry when the oldest of the day's leaves the 24 h window,
  /// after this many ms (counted as `bulletinsPerDay` hits).
  case tooManyBulletins(retryAfterMs: Int64)
  /// Past the share of one network (IPv4 /24, IPv6 /48 or /32, named); retry after this many ms (counted as
  /// `sendsPerNetworkPerMinute` hits).
  case tooManyFromNetwork(retryAfterMs: Int64, network: String, limit: Int)
  /// Past the per-address limit; retry after this many ms (counted as `sendsPerAddressPerMinute` hits).
  case tooManyFromAddress(retryAfterMs: Int64)
  /// Past the global limit; retry after this many ms (counted as `sendsPerMinuteGlobal` hits).
  case tooManyGlobal(retryAfterMs: Int64)
}

/// What `cancelSend` did.
public enum SendCancellation: Sendable, Equatable {
  /// The send was in flight and is `cancelled` now: the message as sync shows it (re-stamped), and the newest
  /// timestamp at the commit (its own).
  case cancelled(StoredMessage, serverTime: Int64)
  /// The send had already ended (acked, rejected, expired or cancelled): the message as it is, unchanged, and the
  /// newest timestamp at the read.
  case finished(StoredMessage, serverTime: Int64)
  /// The station is not registered.
  case unknownStation
  /// The station has no send with this `clientId` (or its message rolled off).
  case unknownClientId
}

/// A send in flight as the listener's scheduler sees it (`Database.dueSends`).
public struct InFlightSend: Sendable, Equatable {
  /// The message's id (`messages.id`, also `sends.message_id`).
  public var id: Int64
  /// The sending station, upper case: the source of the line on the wire.
  public var station: String
  /// The addressee, upper case.
  public var addressee: String
  /// The text.
  public var text: String
  /// The message number; nil for a bulletin.
  public var msgno: String?
  /// A message or a bulletin (its schedule: `[send] schedule`, or the bulletin schedule).
  public var kind: SendKind
  /// When it was accepted, epoch ms (the schedule counts from here).
  public var createdAt: Int64
  /// Copies recorded so far.
  public var transmissions: Int
  /// When the last copy was recorded, epoch ms; nil before the first.
  public var lastSentAt: Int64?
  /// When the next copy is due, epoch ms; nil when none is left or the row was never scheduled.
  public var nextAt: Int64?
  /// When it expires without an answer, epoch ms; nil until the listener first scheduled it.
  public var expiresAt: Int64?
  /// How long the transmit budget held its copies back in all (ms): the schedule's later copies move by this.
  public var budgetDelayMs: Int64

  public init(
    id: Int64, station: String, addressee: String, text: String, msgno: String?, createdAt: Int64,
    transmissions: Int = 0, lastSentAt: Int64? = nil, nextAt: Int64? = nil, expiresAt: Int64? = nil,
    budgetDelayMs: Int64 = 0, kind: SendKind = .message
  ) {
    self.id = id
    self.station = station
    self.addressee = addressee
    self.text = text
    self.msgno = msgno
    self.kind = kind
    self.createdAt = createdAt
    self.transmissions = transmissions
    self.lastSentAt = lastSentAt
    self.nextAt = nextAt
    self.expiresAt = expiresAt
    self.budgetDelayMs = budgetDelayMs
  }
}

/// One scheduling change the listener records (`Database.recordSendSchedule`).
public enum SendScheduleChange: Sendable, Equatable {
  /// A copy is written now (`at`, epoch ms): count it, and set the next copy and the expiry. `budgetDelayMs`:
  /// how long the transmit budget held this copy back (0: not at all); added to the send's
  /// ``InFlightSend/budgetDelayMs``, and a copy held back is counted (`SendStatus.budgetDelayed`).
  case transmitted(id: Int64, at: Int64, nextAt: Int64?, expiresAt: Int64, budgetDelayMs: Int64 = 0)
  /// A new row gets its schedule (no copy written).
  case scheduled(id: Int64, nextAt: Int64?, expiresAt: Int64)
  /// No answer came: the message ends `expired` (re-stamped, with a `sendFailed` push).
  case expired(id: Int64)
  /// A bulletin's schedule is over: it ends `completed` (re-stamped, no push).
  case completed(id: Int64)
}

/// An answer from an addressee that may stop a send in flight.
public struct SendAnswer: Sendable, Equatable, Hashable {
  /// How the addressee answered.
  public enum Kind: String, Sendable, CaseIterable {
    /// `ack<msgno>`.
    case ack
    /// `rej<msgno>`.
    case rej
    /// A message of its own carrying `}<msgno>` (the reply-ack of APRS 1.1).
    case replyAck

    /// The state the answered message ends in.
    public var state: SendState { self == .rej ? .rejected : .acked }
  }

  /// The station the answer is addressed to (the sender of the message; any case).
  public var station: String
  /// Who answered (the message's addressee; any case).
  public var peer: String
  /// The message number answered.
  public var msgno: String
  public var kind: Kind

  public init(station: String, peer: String, msgno: String, kind: Kind) {
    self.station = station
    self.peer = peer
    self.msgno = msgno
    self.kind = kind
  }
}

/// A send that left `pending` (answered, expired or cancelled).
public struct FinishedSend: Sendable, Equatable {
  /// The message's id.
  public var id: Int64
  /// The sending station, upper case.
  public var station: String
  /// The addressee, upper case.
  public var addressee: String
  /// The message number; nil for a bulletin.
  public var msgno: String?
  /// A message or a bulletin.
  public var kind: SendKind = .message
  /// The new state (never `pending`).
  public var state: SendState
  /// The message's new timestamp (the cursor rule).
  public var timestamp: Int64
}

/// The sends counters kept in `meta` since the database was created (`sends.*` rows), and the in-flight gauge,
/// for `/metrics`.
public struct SendStatus: Sendable, Equatable {
  /// Sends accepted (created; replays not counted).
  public var accepted = 0
  /// Copies recorded as transmitted.
  public var transmissions = 0
  /// Of ``transmissions``, the copies of bulletins and announcements.
  public var bulletinTransmissions = 0
  /// Sends that ended in each final state.
  public var finished: [SendState: Int] = [:]
  /// Copies that waited for the listener's transmit budget (`[send] transmitBudgetPerMinute`) before going out.
  public var budgetDelayed = 0
  /// Sends in flight now.
  public var inFlight = 0

  public init() {}

  /// Sends that ended in `state` (0 for `pending`).
  public subscript(state: SendState) -> Int { finished[state] ?? 0 }
}

extension SendStatus {
  /// Every counter's key starts with this.
  static let keyPrefix = "sends."
  static let acceptedKey = keyPrefix + "accepted"
  static let transmissionsKey = keyPrefix + "transmissions"
  static let bulletinTransmissionsKey = keyPrefix + "bulletinTransmissions"
  static let budgetDelayedKey = keyPrefix + "budgetDelayed"

  /// The key counting sends that ended in `state`.
  static func key(_ state: SendState) -> String { keyPrefix + state.rawValue }

  /// Decodes the `sends.*` rows; garbled counts read as 0.
  init(metaRows rows: [String: String], inFlight: Int) {
    self.init()
    accepted = StatusText.count(rows[Self.acceptedKey])
    transmissions = StatusText.count(rows[Self.transmissionsKey])
    bulletinTransmissions = StatusText.count(rows[Self.bulletinTransmissionsKey])
    budgetDelayed = StatusText.count(rows[Self.budgetDelayedKey])
    for state in SendState.allCases where state != .pending {
      finished[state] = StatusText.count(rows[Self.key(state)])
    }
    self.inFlight = inFlight
  }
}
