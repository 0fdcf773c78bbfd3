import APRS
import CompanionFiles
import JSON
import Platform
import Store

/// Turns one request into one response: route, decode, validate, call the store, encode.
///
/// Pure apart from the `Database` it is given: no sockets, no FastCGI, no wall clock (the clock is
/// injected), so tests drive it directly. One handler per worker thread, as one `Database` is.
public final class APIHandler {
  let database: Database
  let config: APIConfig
  let clock: EpochClock
  /// The responder's request counters that `GET /metrics` shows (shared by every worker's handler);
  /// nil leaves them out.
  let requestMetrics: RequestMetrics?
  /// Told after each commit the listener acts on (``CompanionFiles/ListenerWake``): the responder sends it to the
  /// listener's wake socket (``CompanionFiles/WakeSocket/Sender``), so the listener sleeps until then instead of polling.
  let wakeListener: (ListenerWake) -> Void

  /// Creates a handler over one database connection. `clock` returns epoch milliseconds; `metrics`
  /// is the registry the shell records requests in; `wakeListener` is told after the commits the listener acts
  /// on (registrations, settings, claims, sends, pulls that earn `device` ACKs).
  public init(
    database: Database, config: APIConfig = APIConfig(), metrics: RequestMetrics? = nil,
    clock: @escaping EpochClock, wakeListener: @escaping (ListenerWake) -> Void = { _ in }
  ) {
    self.database = database
    self.config = config
    self.requestMetrics = metrics
    self.clock = clock
    self.wakeListener = wakeListener
  }

  /// Wakes the listener's device ACK worker when `result` marked kept ACKs pulled.
  func noteSync(_ result: SyncResult) {
    if result.pulledDeviceAcks > 0 { wakeListener(.deviceAcks) }
  }

  /// Answers one request. Never throws: every failure is an error response. A `/v1/sync` with
  /// `wait` is answered at once, as if its wait had run out (a shell that can hold requests calls
  /// `answer` instead).
  public func handle(_ request: APIRequest) -> APIResponse {
    switch answer(request) {
    case .response(let response): return response
    case .park(let park): return resumeSync(park, final: true).immediateResponse
    }
  }

  /// Answers one request, or, for a `/v1/sync` with `wait` that found nothing newer than `since`,
  /// says to hold it (`APIAnswer.park`): the shell keeps the request until the station has news
  /// or the deadline passes and then answers what `resumeSync` returns. Never throws.
  public func answer(_ request: APIRequest) -> APIAnswer {
    guard let endpoint = Endpoint(rawValue: request.path) else {
      return .response(.error(.notFound(path: request.path)))
    }
    let route = endpoint.route
    let answer = self.route(request, route)
    // After the request's commit: the listener looks at once (a refused request changed nothing).
    if case .response(let response) = answer, response.status < 300 {
      for wake in route.wakes { wakeListener(wake) }
    }
    return answer
  }

  private func route(_ request: APIRequest, _ route: Route) -> APIAnswer {
    // A deleted or replaced database file is never read or written (docs/design.md "Faults"): the process is about to
    // restart on the file the path names.
    if let change = database.fileChange() {
      return .response(.error(.cannotStore("\(change); the server is restarting", retryAfterSeconds: 5)))
    }
    // /metrics and /status exist only on the private listener: the public server and CGI never show them.
    if case .privateListener = route.access, !request.viaMetricsListener {
      return .response(.error(.notFound(path: request.path)))
    }
    guard route.methods.contains(request.method) else {
      return .response(.error(.methodNotAllowed(allowed: route.allow)))
    }
    switch route.access {
    case .open(let answer), .privateListener(let answer): return .response(answer(self))
    case .claimant, .caller: break
    }
    if let refusal = CrossSiteCheck.refusal(
      origin: request.origin, fetchSite: request.fetchSite,
      own: CrossSiteCheck.ownOrigin(
        host: request.host, scheme: request.scheme, serverPort: request.serverPort),
      allowed: config.allowedOrigins
    ) {
      return .response(.error(.forbidden(refusal)))
    }
    guard request.body.count <= config.maxBody else {
      return .response(.error(.payloadTooLarge(limit: config.maxBody)))
    }
    var station: StationAddress?
    do throws(APIError) {
      let identity = try identify(request)
      station = identity.station
      switch route.access {
      case .claimant:
        return .response(
          try claim(
            identity.body, station: identity.station, key: identity.key, client: identity.client,
            now: identity.now))
      case .caller(let rule, let answer):
        return try answer(self, try authorize(identity, rule))
      case .open, .privateListener:
        throw .internalError("an open endpoint is answered before its body is read")
      }
    } catch {
      return .response(.error(error, station: station?.description))
    }
  }

  /// The first step of every station request: reads the body, checks the passcode or key, refuses a ban.
  private func identify(_ request: APIRequest) throws(APIError) -> Identity {
    let body = try RequestBody(request.body)
    let key = try body.presentedStationKey(authorization: request.authorization)
    let station = try body.authenticatedStation(keyStandsIn: key != nil)
    let client = ClientAddress(request.remoteAddress)
    let now = clock()
    try refuseBanned(station: station, client: client, now: now)
    return Identity(body: body, station: station, key: key, client: client, now: now)
  }

  /// The one authorization step of a station's request (docs/design.md "Who may do what"): reads the claim, decides
  /// who the caller is to the station, and holds them to the endpoint's `rule` (404 for an owner's or devices'
  /// endpoint of a station not registered; 403, saying what needs what, for a caller who may not).
  func authorize(_ identity: Identity, _ rule: CallerRule) throws(APIError) -> Caller {
    let address = identity.station.description
    let (claimState, access) = try stationAccess(address, key: identity.key)
    // A key whose claim is not proven acts as no key for the station's devices: its devices are keyless ones, its
    // pulls and ACK choice count as a keyless caller's.
    let devices: StationAccess =
      if case .provisional = access {
        try StationAccess.decide(claimState, key: nil, station: address)
      } else { access }
    // A claim in use does not lapse: any request with the key refreshes it (at most one write an hour).
    if case .owner(let claim) = access, claim.refreshedAt < identity.now - Self.claimRefreshIntervalMs {
      try? database.refreshClaim(address, now: identity.now)
    }
    switch rule {
    case .station: break
    case .devices(let what):
      if claimState == .unregistered { throw .stationNotFound(address) }
      if devices == .guest { try access.requireOwner(address, for: what) }
    case .owner(let what):
      if claimState == .unregistered { throw .stationNotFound(address) }
      try access.requireOwner(address, for: what)
    }
    return Caller(identity: identity, claimState: claimState, access: access, devices: devices)
  }

  /// The station's claim and who the caller is to it (``StationAccess/decide(_:key:station:pending:)``); a key that
  /// is not the claim's is looked up among the requests waiting for their proof.
  func stationAccess(_ address: String, key: StationKey?) throws(APIError) -> (ClaimState, StationAccess) {
    let (state, pending) = try store { () throws(StoreError) -> (ClaimState, ClaimRequest?) in
      let state = try database.stationClaim(address)
      guard let key, state.claim.map({ !key.matches($0.keyHash) }) ?? true else { return (state, nil) }
      return (state, try database.claimRequest(address, keyHash: key.hash))
    }
    return (state, try StationAccess.decide(state, key: key, station: address, pending: pending))
  }

  /// Runs a store operation, turning its failures into HTTP errors (``apiError(for:)``: a fault of the storage →
  /// 503 with `Retry-After`, others → 500).
  @discardableResult
  func store<T>(_ operation: () throws(StoreError) -> T) throws(APIError) -> T {
    do {
      return try operation()
    } catch {
      throw Self.apiError(for: error)
    }
  }

  /// The one mapping of store failures to HTTP errors: a write that cannot happen for a fault of the storage
  /// (``StoreError/storageFault``) is 503 `cannotStore` with `Retry-After` (``retryAfterSeconds(for:)``), never
  /// 500; anything else is a 500 (`storage failed`).
  public static func apiError(for error: StoreError) -> APIError {
    guard let fault = error.storageFault else { return .internalError("storage failed") }
    return .cannotStore(fault.description, retryAfterSeconds: retryAfterSeconds(for: fault))
  }

  /// How long a client is told to wait after a fault of the storage, seconds: a held lock passes soon (1 s);
  /// a full disk, an I/O error or a read-only file wait for the operator (30 s).
  static func retryAfterSeconds(for fault: StorageFault) -> Int {
    switch fault {
    case .locked: 1
    case .full, .ioError, .readOnly: 30
    }
  }

  /// The rate limits (per station, and per client address) count requests per hour; they live in
  /// the database, so they hold across workers and CGI runs.
  static let rateWindowMs: Int64 = 3_600_000

  /// How stale a claim's refresh time may get before a request made with its key writes a new one, ms.
  static let claimRefreshIntervalMs: Int64 = 3_600_000

  /// Whole seconds to wait for `milliseconds`, at least 1 (for `Retry-After`).
  static func seconds(_ milliseconds: Int64) -> Int { Int(max(1, (milliseconds + 999) / 1000)) }
}
