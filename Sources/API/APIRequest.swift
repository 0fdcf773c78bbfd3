/// One HTTP request as the responder received it, independent of FastCGI or CGI.
public struct APIRequest: Sendable {
  /// `GET`, `POST`, …
  public var method: String
  /// The path without query string, e.g. `/v1/sync` (the shell strips any prefix nginx adds).
  public var path: String
  /// The `Content-Type` header, if any.
  public var contentType: String?
  /// The body, already limited to `APIConfig.maxBody` by the shell.
  public var body: [UInt8]
  /// The client's address as the web server saw it (`REMOTE_ADDR`): for logs, and the key of the
  /// per-address limits (`ClientAddress`); empty when unknown.
  public var remoteAddress: String
  /// Whether the request came through the web server's private, loopback-only metrics listener: only
  /// then is `GET /metrics` answered (404 otherwise). The shell sets it from a FastCGI parameter that
  /// only that listener sends (`Responder.metricsParameter`), never for CGI.
  public var viaMetricsListener: Bool
  /// The `Authorization` header (`Bearer <stationKey>` proves a station key), if any.
  public var authorization: String?
  /// The `Origin` header a browser sends (`https://example.org`), if any: a POST from a page of another site
  /// is refused (``CrossSiteCheck``).
  public var origin: String?
  /// The `Sec-Fetch-Site` header (`same-origin`, `same-site`, `cross-site`, `none`), if any.
  public var fetchSite: String?
  /// The `Host` header the request was sent to (`example.org`, `127.0.0.1:8080`): the host of the server's own
  /// origin.
  public var host: String?
  /// The scheme the web server received the request by (`REQUEST_SCHEME`, `HTTPS`: ``RequestScheme``); nil when
  /// unknown, and then no `Origin` is the server's own (only `[server] allowedOrigins` pass).
  public var scheme: RequestScheme?
  /// The port the web server received the request on (`SERVER_PORT`), if it says: the server's own origin has it,
  /// and a `Host` naming another port (a proxy or a port mapping in between) makes that origin unknown.
  public var serverPort: Int?

  public init(
    method: String, path: String, contentType: String? = nil, body: [UInt8] = [],
    remoteAddress: String = "", viaMetricsListener: Bool = false, authorization: String? = nil,
    origin: String? = nil, fetchSite: String? = nil, host: String? = nil, scheme: RequestScheme? = nil,
    serverPort: Int? = nil
  ) {
    self.authorization = authorization
    self.origin = origin
    self.fetchSite = fetchSite
    self.host = host
    self.scheme = scheme
    self.serverPort = serverPort
    self.method = method
    self.path = path
    self.contentType = contentType
    self.body = body
    self.remoteAddress = remoteAddress
    self.viaMetricsListener = viaMetricsListener
  }
}
