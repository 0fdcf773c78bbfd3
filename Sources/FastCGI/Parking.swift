/// Parking: a handler that has nothing to answer yet hands its request back to the server
/// (`ResponseWriter.park`) and returns; no thread waits for it. The server keeps the connection,
/// answers nothing until the request's key changes, its deadline passes or the server stops, and
/// then calls the worker's `Resumer` with the request's ticket on whichever worker is free.

/// Why a parked request is back on a worker.
public enum ParkReason: Sendable, Equatable {
  /// Its key changed past its `after` (the handler may park it again when it finds nothing).
  case woken
  /// Its deadline passed: answer it.
  case timedOut
  /// The server is stopping: answer it (parking is refused from now on).
  case stopping
  /// A newer request parked on its key, which held `ParkingOptions.maxParkedPerKey` already: the
  /// oldest of the key gives way. Answer it (the client has a newer request waiting).
  case displaced
  /// It was never held: its ticket's `group` holds `ParkingOptions.maxParkedPerGroup` requests
  /// already. Answer it now (or refuse it); parking it again is refused the same way.
  case groupFull
}

/// What a handler leaves with the server when it parks a request: what wakes it, until when, and
/// whatever the handler needs to answer it later.
public struct ParkTicket: Sendable {
  /// What wakes it: the `WakeSource` reports keys (the API uses station addresses). At most
  /// `ParkingOptions.maxParkedPerKey` are held per key: the newest win.
  public var key: String
  /// The group it counts against (the API uses the client address): at most
  /// `ParkingOptions.maxParkedPerGroup` are held per group, past it a new one is refused
  /// (`ParkReason.groupFull`). Nil: no group.
  public var group: String?
  /// It wakes when the source reports a newest version for `key` above this (a sync's `since`).
  public var after: Int64
  /// The newest version of any key that the handler's own read saw (the database's newest message
  /// timestamp): the source looks again from there, so a change between that read and the moment
  /// the server holds the request is not missed.
  public var seen: Int64
  /// When it is answered anyway: monotonic milliseconds, as `monotonicMilliseconds()`.
  public var deadline: Int64
  /// The handler's own state, handed back unchanged to the `Resumer`.
  public var context: any Sendable
  /// Which lane of its key it waits in (the API: 1 for a long poll made with the station key, 0 for the
  /// rest). `ParkingOptions.maxParkedPerKey` holds per key and lane, and a newer request only displaces
  /// one of its own lane, so requests of one lane can never push out another's. A wake of the key wakes
  /// every lane.
  public var lane: Int

  public init(
    key: String, group: String? = nil, after: Int64, seen: Int64, deadline: Int64, lane: Int = 0,
    context: any Sendable
  ) {
    self.lane = lane
    self.key = key
    self.group = group
    self.after = after
    self.seen = seen
    self.deadline = deadline
    self.context = context
  }
}

/// A parked request on its way back to a handler.
public struct ParkedRequest: Sendable {
  /// The ticket the handler parked it with.
  public var ticket: ParkTicket
  public var reason: ParkReason
  /// The request's method and path, as `Request` had them (for log lines).
  public var method: String
  public var path: String
  /// `REMOTE_ADDR` as the request had it.
  public var remoteAddress: String
  /// Milliseconds (monotonic) since the request was first parked.
  public var parkedMilliseconds: Int64

  public init(
    ticket: ParkTicket, reason: ParkReason, method: String, path: String, remoteAddress: String,
    parkedMilliseconds: Int64
  ) {
    self.ticket = ticket
    self.reason = reason
    self.method = method
    self.path = path
    self.remoteAddress = remoteAddress
    self.parkedMilliseconds = parkedMilliseconds
  }
}

/// What `ResponseWriter.park` did.
public enum ParkOutcome: Sendable, Equatable {
  /// The server holds the request now: return without answering.
  case parked
  /// No room (`ParkingOptions.maxParked`), the server is stopping, or the request was answered
  /// already: answer now.
  case refused
  /// This transport holds no requests (plain CGI, or a server run without resumers): wait some
  /// other way or answer now.
  case unsupported
}

/// What a worker calls for a parked request that is back (same thread rules as `Handler`: it runs
/// on the worker that took it, with that worker's own state). It answers through the writer, or
/// parks the request again.
public typealias Resumer = (ParkedRequest, inout ResponseWriter) -> Void

/// Where the server learns that keys changed. Called on the server's keeper thread only (so it may
/// own a database connection that no other thread touches) while any request is parked: every
/// `ParkingOptions.pollIntervalMs`, or, for a source with a ``wakeDescriptor``, when that descriptor is
/// readable, within `pollIntervalMs` of a request parking (its recheck), and every ``fallbackPollMs`` anyway.
public protocol WakeSource: AnyObject {
  /// The keys that changed, each with its newest version; empty when nothing changed. `recheckFrom`
  /// is the smallest `ParkTicket.seen` among the requests parked since the last call (nil when
  /// none were): changes after that version must be reported again for them.
  func changes(recheckFrom: Int64?) -> [String: Int64]
  /// A descriptor that becomes readable when keys may have changed (the API's long-poll wake socket), watched
  /// in the keeper's epoll set; nil (the default): the keeper asks every `pollIntervalMs`.
  var wakeDescriptor: Int32? { get }
  /// Reads what made ``wakeDescriptor`` readable (the keeper asks ``changes(recheckFrom:)`` right after).
  func drainWakes()
  /// With a ``wakeDescriptor``: how often the keeper asks anyway while requests are parked, ms (what a lost
  /// wake costs).
  var fallbackPollMs: Int64 { get }
}

extension WakeSource {
  public var wakeDescriptor: Int32? { nil }
  public func drainWakes() {}
  public var fallbackPollMs: Int64 { 5_000 }
}

/// How the server parks requests.
public struct ParkingOptions: @unchecked Sendable {
  /// The responder's ``deadlineTickMs``: 1 s. A long poll's `wait` is whole seconds and nginx allows it a
  /// 30 s margin; 10,000 held long polls whose deadlines are spread over the 300 s of the longest `wait` (33 a
  /// second) wake the keeper once a second for them instead of 33 times.
  public static let responderDeadlineTickMs: Int64 = 1_000

  /// Requests held at most; past it `park` is refused and the handler answers at once.
  public var maxParked: Int
  /// Requests held at most per `ParkTicket.key` (at least 1): one more parks and the key's oldest
  /// is resumed with `ParkReason.displaced` (the newest win, so a client that comes back after a
  /// dropped connection is never refused because of its own stale requests, and a flood of one
  /// key only churns that key's requests).
  public var maxParkedPerKey: Int
  /// Requests held at most per `ParkTicket.group` (at least 1): one more is resumed at once with
  /// `ParkReason.groupFull` instead of being held (unless it displaces one of its own group). A
  /// request parked again after a wake is not refused: it only just left its group.
  public var maxParkedPerGroup: Int
  /// How often the `source` is asked while anything is parked, in milliseconds.
  public var pollIntervalMs: Int64
  /// The grid parked deadlines are answered on, ms (0: each at its own deadline). Above 0, the keeper wakes for
  /// deadlines only at multiples of it (of the monotonic clock) and answers every request whose deadline has
  /// passed, so however many requests are held, their deadlines cost at most one wake-up per tick: a request is
  /// never answered before its deadline, and at most `deadlineTickMs` (and the wake-up's own delay) after it.
  /// The responder uses ``responderDeadlineTickMs``.
  public var deadlineTickMs: Int64
  /// What wakes parked requests; nil: only deadlines and the stop do.
  public var source: (any WakeSource)?

  public init(
    maxParked: Int = 10_000, maxParkedPerKey: Int = .max, maxParkedPerGroup: Int = .max,
    pollIntervalMs: Int64 = 10, deadlineTickMs: Int64 = 0, source: (any WakeSource)? = nil
  ) {
    self.deadlineTickMs = max(0, deadlineTickMs)
    self.maxParked = maxParked
    self.maxParkedPerKey = max(1, maxParkedPerKey)
    self.maxParkedPerGroup = max(1, maxParkedPerGroup)
    self.pollIntervalMs = pollIntervalMs
    self.source = source
  }
}

/// One worker's code: its handler for new requests, and its resumer for parked ones coming back.
public struct WorkerHandlers {
  public var handle: Handler
  public var resume: Resumer

  public init(handle: @escaping Handler, resume: @escaping Resumer) {
    self.handle = handle
    self.resume = resume
  }
}
