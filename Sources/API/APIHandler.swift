import APRS
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
  /// Told after each commit the listener acts on (``Store/ListenerWake``): the responder sends it to the
  /// listener's wake socket (``Store/WakeSender``), so the listener sleeps until then instead of polling.
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

  /// What a successful request of `endpoint` wakes in the listener, nil for none (a sync wakes it only when it
  /// marked pulls: ``noteSync(_:)``).
  static func listenerWake(after endpoint: Endpoint) -> ListenerWake? {
    switch endpoint {
    case .register, .heartbeat, .unregister, .settings, .claim: .registrations
    case .send: .sends
    case .sync, .read, .export, .audit, .avatars, .health, .metrics, .status, .info, .forwardConfirm: nil
    }
  }

  /// Wakes the listener's device ACK worker when `result` marked kept ACKs pulled.
  func noteSync(_ result: SyncResult) {
    if result.pulledDeviceAcks > 0 { wakeListener(.deviceAcks) }
  }

  /// The endpoints, by path.
  enum Endpoint: String, CaseIterable {
    case register = "/v1/register"
    case heartbeat = "/v1/heartbeat"
    case sync = "/v1/sync"
    case unregister = "/v1/unregister"
    case avatars = "/v1/avatars"
    case send = "/v1/send"
    case settings = "/v1/settings"
    case claim = "/v1/claim"
    case read = "/v1/read"
    case export = "/v1/export"
    case audit = "/v1/audit"
    case forwardConfirm = "/v1/forward/confirm"
    case health = "/health"
    case metrics = "/metrics"
    case status = "/status"
    case info = "/v1/info"

    /// The methods it takes, as the `Allow` header lists them.
    var method: String {
      switch self {
      case .health, .metrics, .status: "GET"
      case .info: "GET, HEAD, POST"
      default: "POST"
      }
    }

    /// Whether it takes `method` (`HEAD` wherever `GET` is, but on /metrics).
    func allows(_ method: String) -> Bool {
      switch self {
      case .health, .status: method == "GET" || method == "HEAD"
      case .info: method == "GET" || method == "HEAD" || method == "POST"
      default: method == self.method
      }
    }
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
    let answer = route(request, endpoint)
    // After the request's commit: the listener looks at once (a refused request changed nothing).
    if case .response(let response) = answer, response.status < 300,
      let wake = Self.listenerWake(after: endpoint)
    {
      wakeListener(wake)
    }
    return answer
  }

  private func route(_ request: APIRequest, _ endpoint: Endpoint) -> APIAnswer {
    // A deleted or replaced database file is never read or written (docs/design.md "Faults"): the process is about to
    // restart on the file the path names.
    if let change = database.fileChange() {
      return .response(.error(.cannotStore("\(change); the server is restarting", retryAfterSeconds: 5)))
    }
    // /metrics and /status exist only on the private listener: the public server and CGI never show them.
    if (endpoint == .metrics || endpoint == .status) && !request.viaMetricsListener {
      return .response(.error(.notFound(path: request.path)))
    }
    guard endpoint.allows(request.method) else {
      return .response(.error(.methodNotAllowed(allowed: endpoint.method)))
    }
    if endpoint == .health { return .response(health()) }
    if endpoint == .metrics { return .response(metrics()) }
    if endpoint == .status { return .response(statusPage()) }
    if endpoint == .info { return .response(info()) }
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
      let body = try RequestBody(request.body)
      let key = try body.presentedStationKey(authorization: request.authorization)
      station = try body.authenticatedStation(keyStandsIn: key != nil)
      let client = ClientAddress(request.remoteAddress)
      let now = clock()
      try refuseBanned(station: station!, client: client, now: now)
      if endpoint == .claim {
        return .response(try claim(body, station: station!, key: key, client: client, now: now))
      }
      let (claimState, access) = try stationAccess(station!.description, key: key)
      // A key whose claim is not proven acts as no key for the station's devices (docs/design.md "Who may do
      // what"): its devices are keyless ones, its pulls and ACK choice count as a keyless caller's.
      let devices: StationAccess =
        if case .provisional = access {
          try StationAccess.decide(claimState, key: nil, station: station!.description)
        } else { access }
      // A claim in use does not lapse: any request with the key refreshes it (at most one write an hour).
      if case .owner(let claim) = access, claim.refreshedAt < now - Self.claimRefreshIntervalMs {
        try? database.refreshClaim(station!.description, now: now)
      }
      switch endpoint {
      case .register:
        return .response(try register(body, station: station!, access: devices, client: client, now: now))
      case .heartbeat:
        return .response(try heartbeat(body, station: station!, access: devices, client: client, now: now))
      case .sync:
        return try sync(body, station: station!, access: devices, client: client, now: now)
      case .unregister:
        return .response(try unregister(body, station: station!, access: devices, client: client, now: now))
      case .avatars: return .response(try avatars(body, station: station!))
      case .send:
        if claimState == .unregistered { throw .stationNotFound(station!.description) }
        try access.requireOwner(station!.description, for: "sending messages")
        return .response(try send(body, station: station!, client: client, now: now))
      case .settings:
        if claimState == .unregistered { throw .stationNotFound(station!.description) }
        try access.requireOwner(station!.description, for: "reading or changing settings")
        return .response(try settings(body, station: station!, client: client, now: now))
      case .read:
        if claimState == .unregistered { throw .stationNotFound(station!.description) }
        if devices == .guest { try access.requireOwner(station!.description, for: "marking messages read") }
        return .response(try read(body, station: station!, now: now))
      case .export:
        if claimState == .unregistered { throw .stationNotFound(station!.description) }
        try access.requireOwner(station!.description, for: "exporting the station")
        return .response(try export(station: station!, now: now))
      case .audit:
        if claimState == .unregistered { throw .stationNotFound(station!.description) }
        try access.requireOwner(station!.description, for: "reading the audit trail")
        return .response(try audit(station: station!))
      case .forwardConfirm:
        if claimState == .unregistered { throw .stationNotFound(station!.description) }
        try access.requireOwner(station!.description, for: "confirming forward targets")
        return .response(try forwardConfirm(body, station: station!, client: client, now: now))
      case .claim: throw .internalError("a claim is answered before the claim state is read")
      case .health: return .response(health())
      case .metrics: return .response(metrics())
      case .status: return .response(statusPage())
      case .info: return .response(info())
      }
    } catch {
      return .response(.error(error, station: station?.description))
    }
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
