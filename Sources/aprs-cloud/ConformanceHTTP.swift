import Platform
import Push

/// The real ``ConformanceTransport``: libcurl (``PlainHTTP``) to `base` + the request's path, plain `http://`
/// or `https://` (the system's CA bundle, or `caFile`), no redirect followed. A long poll's time comes from the
/// monotonic clock.
struct ConformanceHTTP: ConformanceTransport {
  /// `http://host:port` or `https://host/prefix`, without a trailing `/`.
  var base: String
  /// A CA bundle (PEM) to trust instead of the system's (`--ca-file`).
  var caFile: String?
  /// One exchange's limit, ms: the app's 20 s (docs/protocol.md "Transport").
  var timeoutMs = 20_000

  func exchange(_ request: ConformanceRequest) throws(ConformanceTransportError) -> ConformanceAnswer {
    let start = monotonicMilliseconds()
    do throws(PushError) {
      let answer = try PlainHTTP.perform(
        PlainHTTPRequest(
          method: request.method, url: base + request.path, headers: request.headers, body: request.body,
          timeoutMs: timeoutMs, caFile: caFile))
      return ConformanceAnswer(
        status: answer.status, headers: answer.headers, body: answer.body,
        elapsedMs: Int(monotonicMilliseconds() - start))
    } catch {
      throw ConformanceTransportError(description: error.description)
    }
  }
}
