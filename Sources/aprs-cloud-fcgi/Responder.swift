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
struct Responder {
  let handler: APIHandler
  let logger: Logger
  /// Where each request is counted and timed for `/metrics` (shared by every worker).
  var metrics: RequestMetrics?
  /// Whether `metricsParameter` is believed: true for FastCGI, where parameters come from the web
  /// server's configuration; false for CGI, where any of them may come from the environment.
  var acceptsMetricsParameter = false

  /// The FastCGI parameter that marks a request from nginx's private metrics listener
  /// (`fastcgi_param APRS_CLOUD_METRICS on;` in nginx/aprs-cloud-metrics.conf; the public locations
  /// send it empty). A client cannot set it: nginx passes request headers as `HTTP_*`.
  static let metricsParameter = "APRS_CLOUD_METRICS"

  /// Answers one request (a `FastCGI.Handler`).
  func handle(_ request: Request, _ writer: inout ResponseWriter) {
    metrics?.begin()
    let response: APIResponse
    switch request.body {
    case .success(let body):
      response = handler.handle(
        APIRequest(
          method: request.method, path: request.path, contentType: request.contentType, body: body,
          remoteAddress: request.remoteAddress,
          viaMetricsListener: acceptsMetricsParameter && request.params[Self.metricsParameter] == "on"))
    case .failure(let error):
      response = .error(Responder.apiError(error))
    }

    let delivery = writer.send(Responder.encode(response))
    let path = request.path
    metrics?.record(path: path, status: response.status, microseconds: delivery.microseconds)
    // A scraper asks for /metrics every few seconds: its answers are logged at debug only.
    let level: LogLevel =
      response.status >= 500 ? .error : (path == "/metrics" && response.status == 200 ? .debug : .info)
    if logger.isEnabled(level) {
      var fields: [(String, String)] = [("method", request.method), ("path", path)]
      if let station = response.station { fields.append(("station", station)) }
      fields.append(("status", String(response.status)))
      fields.append(("us", String(delivery.microseconds)))
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
    let reserved: Set<String> = ["status", "content-type", "cache-control", "content-length"]
    return Response(
      status: response.status, reason: APIResponse.reasonPhrase(response.status),
      headers: [("Content-Type", response.contentType), ("Cache-Control", "no-store")]
        + response.headers.filter { !reserved.contains($0.name.lowercased()) },
      body: response.body)
  }
}
