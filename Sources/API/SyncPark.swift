import Store

/// What the API leaves to the shell for a `/v1/sync` with `wait` that found nothing yet
/// (docs/protocol.md, "Long poll"): hold the request until the station has a message newer than
/// `since`, or until `deadline`, then call `APIHandler.resumeSync` (which reads again).
public struct SyncPark: Sendable, Equatable {
  /// The station's canonical address (`N0CALL-7`): what wakes the request.
  public var station: String
  /// The cursor the client sent: a message for `station` with a timestamp above it is news.
  public var since: Int64
  /// The newest message timestamp (any station) the read that found nothing saw: messages after it
  /// are the ones to look at.
  public var seen: Int64
  /// When the wait runs out, epoch ms (the handler's clock): then the answer is `messages:[]` and
  /// the usual `serverTime`.
  public var deadline: Int64
  /// The client address's key (`ClientAddress.key`: IPv4 address, IPv6 /64, or `unknown`): the
  /// shell holds at most `[server] maxParkedPerAddress` syncs per key (`refusedSync` answers the
  /// one past it), as it holds at most `maxParkedPerStation` per `station`.
  public var client: String
  /// Whether the request proved the station key: the shell holds the owner's long polls in a lane of their own
  /// (`ParkTicket.lane`), so keyless ones, however many, never displace them.
  public var owner: Bool
  /// Whether its reads count as the station's pull (marking `device`-policy messages pulled, moving the cursor the
  /// push `count` is taken from): false for a keyless long poll of a claimed station.
  public var countsAsPull: Bool
  /// What the request opted in to (`want`): its answer, when it comes, holds what it asked for.
  public var wants: Wants
  /// The push token of the owner's device the request named (`pushToken`, with the key): what it pulls is
  /// marked pulled by that device (``Store/Retention/untilPulled(max:)`` keeps messages until every keyed device
  /// pulled them). Nil otherwise.
  public var puller: String? = nil

  /// The lane the shell parks it in: 1 for the owner's, 0 for the rest.
  public var lane: Int { owner ? 1 : 0 }

  public init(
    station: String, since: Int64, seen: Int64, deadline: Int64, client: String = ClientAddress.unknown,
    owner: Bool = false, countsAsPull: Bool = true, wants: Wants = []
  ) {
    self.wants = wants
    self.owner = owner
    self.countsAsPull = countsAsPull
    self.station = station
    self.since = since
    self.seen = seen
    self.deadline = deadline
    self.client = client
  }
}

/// What `APIHandler.answer` decided: an answer now, or a sync to hold.
public enum APIAnswer: Sendable {
  /// Answer with this.
  case response(APIResponse)
  /// Hold the request (`SyncPark`); answer what `resumeSync` returns.
  case park(SyncPark)
}

extension APIAnswer {
  /// The response, for an answer that cannot be `.park` (`resumeSync` with `final`).
  var immediateResponse: APIResponse {
    switch self {
    case .response(let response): response
    case .park(let park): .error(.internalError("a sync was held where it cannot be"), station: park.station)
    }
  }
}
