import Logging
import Platform

/// What a server calls once per request, on a worker thread: look at the request, send one answer
/// through the writer (or park the request: `ResponseWriter.park`), return. The worker takes its
/// next job only after the handler returns, so a handler should not wait for anything slow; a
/// request that waits for an event is parked instead (see `FastCGIServer`).
public typealias Handler = (Request, inout ResponseWriter) -> Void

/// One request through one channel: parameters, the body (checked against the limit first),
/// the handler, the answer. Plain CGI's flow (FastCGI reads its records itself: `RequestParser`).
enum Exchange {
  static func serve<Channel: RequestChannel>(
    _ channel: inout Channel, bodyLimit: Int, logger: Logger, handler: Handler
  ) {
    let started = monotonicMicroseconds()
    let params = channel.parameters()
    let method = params["REQUEST_METHOD"].flatMap { $0.isEmpty ? nil : $0 } ?? "GET"
    let path = RequestPath.resolve(
      documentURI: params["DOCUMENT_URI"], requestURI: params["REQUEST_URI"],
      scriptName: params["SCRIPT_NAME"], pathInfo: params["PATH_INFO"])
    logger.debug("request started", ["method": method, "path": path])

    let body = BodyReader(limit: bodyLimit).read(&channel, contentLength: params["CONTENT_LENGTH"])
    let request = Request(
      params: params, method: method, path: path, body: body, remoteAddress: params["REMOTE_ADDR"] ?? "")
    let output = channel
    var writer = ResponseWriter(startedAt: started) { output.write($0) }
    handler(request, &writer)
    if !writer.hasAnswered {
      logger.error("the handler sent no answer", ["method": method, "path": path])
      writer.send(Response(status: 500, reason: "Internal Server Error"))
    }
  }
}
