import API
import FastCGI
import Logging
import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// The /v1 API on the FastCGI library: a `Request` in, `APIHandler` in the middle, the answer,
/// one log line and the request metrics out. The transport (sockets, workers, the body and its
/// limit) is the `FastCGI` module's; this only turns its refusals into API errors (413 for an
/// announced body over the limit, 400 for a `CONTENT_LENGTH` that is missing, garbage or a lie).
///
/// A `/v1/sync` with `wait` that finds nothing (`APIAnswer.park`) is parked with the server
/// (`ResponseWriter.park`, keyed by station) and answered by `resume` when the station gets a
/// message, the wait runs out or the server stops. Where nothing can be parked (plain CGI: one
/// process per request) the sync is read again every `pollIntervalMs` until then; where the
/// server is full (or parking is off) it is answered at once.
///
/// The server holds at most `[server] maxParkedPerStation` per station (the ticket's key: one more
/// and the station's oldest comes back `displaced`, answered like a wait that ran out) and
/// `maxParkedPerAddress` per client address (the ticket's group: one more comes back `groupFull`,
/// answered by `APIHandler.refusedSync`, a 429 logged at debug). Every hit of the three caps is
/// counted for `/metrics` and logged at info at most once a minute per cap (`HitReport`).
struct Responder {
  let handler: APIHandler
  let logger: Logger
  /// Where each request is counted and timed for `/metrics` (shared by every worker).
  var metrics: RequestMetrics?
  /// Whether `metricsParameter` is believed: true for FastCGI, where parameters come from the web
  /// server's configuration; false for CGI, where any of them may come from the environment.
  var acceptsMetricsParameter = false
  /// The level of the line each successful request gets (4xx answers: always info, 5xx: error).
  /// nginx's access log has a line per request already, so FastCGI uses debug unless
  /// `[server] logRequests`.
  var requestLogLevel = LogLevel.info
  /// Whether a sync that cannot be parked is held by reading the database again every
  /// `pollIntervalMs` (plain CGI, where the request is the process); otherwise (FastCGI with
  /// `maxParked` 0) it is answered at once.
  var holdsByPolling = false
  /// How often a held sync reads the database again where requests cannot be parked (CGI), ms.
  var pollIntervalMs: Int64 = 250
  /// The clock the handler uses (epoch ms): a held sync's deadline is on it.
  var clock: EpochClock = epochMilliseconds

  /// The FastCGI parameter that marks a request from nginx's private metrics listener
  /// (`fastcgi_param APRS_CLOUD_METRICS on;` in nginx/aprs-cloud-metrics.conf; the public locations
  /// send it empty). A client cannot set it: nginx passes request headers as `HTTP_*`.
  static let metricsParameter = "APRS_CLOUD_METRICS"

  /// The parameters `handle` reads for `APIRequest`, in one pass: `CONTENT_TYPE`, `metricsParameter`, the
  /// headers nginx passes as `HTTP_*` (`Authorization`, `Origin`, `Sec-Fetch-Site`, `Host`), and how the web
  /// server received the request (`REQUEST_SCHEME`, `HTTPS`, `SERVER_PORT`: nginx's FastCGI parameters, a CGI
  /// server's environment), the rest of the request's own origin.
  static let apiParameters = ParameterNames([
    "CONTENT_TYPE", metricsParameter, "HTTP_AUTHORIZATION", "HTTP_ORIGIN", "HTTP_SEC_FETCH_SITE", "HTTP_HOST",
    "REQUEST_SCHEME", "HTTPS", "SERVER_PORT",
  ])

  /// What a parked sync carries through the server (`ParkTicket.context`).
  struct HeldSync: Sendable {
    var park: SyncPark
  }

  /// Answers one request (a `FastCGI.Handler`), or parks it.
  func handle(_ request: Request, _ writer: inout ResponseWriter) {
    metrics?.begin()
    let answer: APIAnswer
    switch request.body {
    case .success(let body):
      let values = request.parameters(Self.apiParameters)
      answer = handler.answer(
        APIRequest(
          method: request.method, path: request.path, contentType: values[0], body: body,
          remoteAddress: request.remoteAddress,
          viaMetricsListener: acceptsMetricsParameter && values[1] == "on",
          authorization: values[2], origin: values[3], fetchSite: values[4], host: values[5],
          scheme: RequestScheme(requestScheme: values[6], https: values[7]),
          serverPort: RequestScheme.port(values[8])))
    case .failure(let error):
      answer = .response(.error(Responder.apiError(error)))
    }
    carryOut(answer, method: request.method, path: request.path, waitedMs: 0, &writer)
  }

  /// Answers a parked sync that is back (a `FastCGI.Resumer`): its messages, or `messages:[]` when
  /// the wait ran out or the server stops; parked again when it was woken for nothing it shows.
  func resume(_ parked: ParkedRequest, _ writer: inout ResponseWriter) {
    metrics?.begin()
    guard let held = parked.ticket.context as? HeldSync else {
      deliver(
        .error(.internalError("a held request lost its state")), method: parked.method, path: parked.path,
        waitedMs: parked.parkedMilliseconds, &writer)
      return
    }
    switch parked.reason {
    case .groupFull:
      noteLimitHit(.maxParkedPerAddress, held.park, client: held.park.client)
      deliver(
        handler.refusedSync(held.park), method: parked.method, path: parked.path, waitedMs: 0, quiet: true,
        &writer)
      return
    case .displaced:
      // This is the older request, answered to make room: the newcomer's address is not known here, and
      // this one's would blame the client that was pushed out.
      noteLimitHit(.maxParkedPerStation, held.park, client: nil)
    case .woken, .timedOut, .stopping:
      break
    }
    carryOut(
      handler.resumeSync(held.park, final: parked.reason != .woken), method: parked.method, path: parked.path,
      waitedMs: parked.parkedMilliseconds, &writer)
  }

  /// Counts a hit of `limit` for `/metrics`; logs it at info when a line is due (`HitReport`), with the
  /// address of the client that went over it when that is known.
  private func noteLimitHit(_ limit: ParkLimit, _ park: SyncPark, client: String?) {
    guard let hits = metrics?.countLimitHit(limit, now: monotonicMilliseconds()) else { return }
    var fields = [("limit", limit.rawValue), ("hits", String(hits)), ("station", park.station)]
    if let client { fields.append(("client", client)) }
    logger.log(.info, "long polls over a limit", fields: fields)
  }

  private func carryOut(
    _ answer: APIAnswer, method: String, path: String, waitedMs: Int64, _ writer: inout ResponseWriter
  ) {
    var answer = answer
    var waited = waitedMs
    while true {
      switch answer {
      case .response(let response):
        deliver(response, method: method, path: path, waitedMs: waited, &writer)
        return
      case .park(let park):
        let remaining = max(0, park.deadline - clock())
        let ticket = ParkTicket(
          key: park.station, group: park.client, after: park.since, seen: park.seen,
          deadline: monotonicMilliseconds() + remaining, lane: park.lane,
          context: HeldSync(park: park))
        switch writer.park(ticket) {
        case .parked:
          metrics?.end()
          return
        case .refused:
          noteLimitHit(.maxParked, park, client: park.client)
          answer = handler.resumeSync(park, final: true)
        case .unsupported where !holdsByPolling:
          answer = handler.resumeSync(park, final: true)
        case .unsupported:
          let started = monotonicMilliseconds()
          answer = .response(waitByPolling(park))
          waited += monotonicMilliseconds() - started
        }
      }
    }
  }

  /// Reads the sync again every `pollIntervalMs` until it has messages or its deadline passes (plain
  /// CGI, where a request is a process and nothing else can hold it).
  private func waitByPolling(_ park: SyncPark) -> APIResponse {
    var park = park
    while true {
      let remaining = park.deadline - clock()
      if remaining > 0 {
        let pause = min(remaining, pollIntervalMs)
        var time = timespec(tv_sec: Int(pause / 1000), tv_nsec: Int(pause % 1000) * 1_000_000)
        var left = timespec()
        while nanosleep(&time, &left) != 0 && errno == EINTR { time = left }
      }
      switch handler.resumeSync(park, final: clock() >= park.deadline) {
      case .response(let response): return response
      case .park(let again): park = again
      }
    }
  }

  /// Writes the answer, then counts and logs it. `quiet`: a 4xx is logged at debug, not info (a
  /// refusal a flood repeats, logged once a minute by `noteLimitHit` instead).
  private func deliver(
    _ response: APIResponse, method: String, path: String, waitedMs: Int64, quiet: Bool = false,
    _ writer: inout ResponseWriter
  ) {
    let delivery = writer.send(Responder.encode(response))
    metrics?.record(path: path, status: response.status, microseconds: delivery.microseconds)
    // A scraper asks for /metrics every few seconds: its answers are logged at debug only.
    let level: LogLevel =
      response.status >= 500
      ? .error
      : response.status >= 400 ? (quiet ? .debug : .info) : (path == "/metrics" ? .debug : requestLogLevel)
    if logger.isEnabled(level) {
      var fields: [(String, String)] = [("method", method), ("path", path)]
      if let station = response.station { fields.append(("station", station)) }
      fields.append(("status", String(response.status)))
      fields.append(("us", String(delivery.microseconds)))
      if waitedMs > 0 { fields.append(("waitedMs", String(waitedMs))) }
      if !delivery.delivered { fields.append(("delivered", "false")) }
      logger.log(level, "request", fields: fields)
    }
  }

  /// The API error for a body the transport refused before the handler.
  static func apiError(_ error: RequestBodyError) -> APIError {
    switch error {
    case .tooLarge(let limit): .payloadTooLarge(limit: limit)
    case .invalidLength, .lengthRequired, .endedEarly: .badRequest(error.description)
    }
  }

  /// `Status:` line, `Content-Type` and `Cache-Control`, the response's own headers,
  /// `Content-Length`, body.
  static func encode(_ response: APIResponse) -> Response {
    var headers: [(name: String, value: String)] = [
      ("Content-Type", response.contentType), ("Cache-Control", "no-store"),
    ]
    for header in response.headers where !reservedHeaders.contains(header.name.lowercased()) {
      headers.append(header)
    }
    return Response(
      status: response.status, reason: APIResponse.reasonPhrase(response.status), headers: headers,
      body: response.body)
  }

  /// Headers `encode` writes itself (lower case).
  static let reservedHeaders: Set<String> = ["status", "content-type", "cache-control", "content-length"]
}
