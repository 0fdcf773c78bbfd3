import Foundation
import JSON
import Testing

/// Every answer on the API's paths: JSON with `Content-Type: application/json` and exactly one
/// `Cache-Control: no-store`; errors carry an `error` string.
func expectAPIAnswer(
  _ response: HTTPResponse, status: Int, isError: Bool = true,
  sourceLocation: SourceLocation = #_sourceLocation
) {
  #expect(response.status == status, "\(response.status) \(response.text)", sourceLocation: sourceLocation)
  #expect(
    response.header("content-type")?.hasPrefix("application/json") == true,
    "content-type: \(response.header("content-type") ?? "none")", sourceLocation: sourceLocation)
  #expect(response.values("cache-control") == ["no-store"], sourceLocation: sourceLocation)
  #expect(response.header("location") == nil, "no redirect", sourceLocation: sourceLocation)
  #expect(response.jsonObject != nil, "not a JSON object: \(response.text)", sourceLocation: sourceLocation)
  if isError {
    #expect(
      response.errorMessage?.isEmpty == false, "no error: \(response.text)", sourceLocation: sourceLocation)
  }
}

/// nginx's side of the API (nginx/local.conf.template with the project's snippet and http part),
/// tested against a fake FastCGI responder or none, so it does not depend on the API's progress.
@Suite struct NginxBehaviourTests {
  @Test func bodiesOver64KiBGet413JSON() throws {
    let stack = try TestStack(.fake { _ in FakeFastCGI.json(200, "{}") })
    defer { stack.stop() }
    let body = Data(repeating: UInt8(ascii: "a"), count: 70_000)
    let response = try stack.post("/v1/register", body: body, headers: ["content-type: application/json"])
    expectAPIAnswer(response, status: 413)
    #expect(response.errorMessage == "request body is larger than 64 KiB")
    // Without a Content-Length too (chunked): nginx counts while reading.
    let chunked = try stack.post(
      "/v1/register", body: body, headers: ["content-type: application/json", "Transfer-Encoding: chunked"])
    expectAPIAnswer(chunked, status: 413)
    let seen = stack.fake?.requests.filter { $0.params["DOCUMENT_URI"] != "/health" } ?? []
    #expect(seen.isEmpty, "the responder never saw them")
    // 64 KiB exactly still passes.
    let limit = try stack.post("/v1/register", body: Data(repeating: 0x20, count: 65_536))
    #expect(limit.status == 200)
  }

  @Test func unknownPathsGet404JSONAndNeverARedirect() throws {
    let stack = try TestStack(.none)
    defer { stack.stop() }
    // `/` and the web client's files are served (webClientIsServedWithAStrictPolicy); every miss,
    // a folder without or with its slash included, is the JSON 404, never nginx's redirect.
    for path in [
      "/nothing.html", "/index.htm", "/v1", "/favicon.ico", "/health/", "/v2/sync", "/%22%5C",
      "/icons", "/icons/", "/js/", "/.git",
    ] {
      let response = try stack.get(path)
      expectAPIAnswer(response, status: 404)
    }
    let post = try stack.post("/v1", json: "{}")
    expectAPIAnswer(post, status: 404)
  }

  /// The web client (nginx/www/) at `/`: each file with its type, a strict Content-Security-Policy and
  /// no-cache; only GET and HEAD (a 405 JSON with `Allow: GET, HEAD` otherwise).
  @Test func webClientIsServedWithAStrictPolicy() throws {
    let stack = try TestStack(.none)
    defer { stack.stop() }
    let types = [
      "html": "text/html", "css": "text/css", "mjs": "text/javascript", "js": "text/javascript",
      "webmanifest": "application/manifest+json", "svg": "image/svg+xml", "png": "image/png",
    ]
    let www = TestPaths.nginxDirectory + "/www"
    let files = try FileManager.default.subpathsOfDirectory(atPath: www).filter {
      !$0.hasPrefix(".") && types[($0 as NSString).pathExtension] != nil
    }
    #expect(files.contains("index.html") && files.contains("sw.js") && files.contains("manifest.webmanifest"))
    for path in ["/"] + files.map({ "/" + $0 }) {
      let response = try stack.get(path)
      let file = path == "/" ? "index.html" : String(path.dropFirst())
      #expect(response.status == 200, "\(path): \(response.status)")
      let type = types[(file as NSString).pathExtension]!
      #expect(
        response.header("content-type")?.hasPrefix(type) == true,
        "\(path): \(response.header("content-type") ?? "")")
      #expect(response.body == FileManager.default.contents(atPath: www + "/" + file), "\(path) is the file")
      let policy = response.header("content-security-policy") ?? ""
      #expect(policy.hasPrefix("default-src 'self';"), "\(path): \(policy)")
      #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval") && !policy.contains("*"))
      #expect(response.header("x-content-type-options") == "nosniff")
      #expect(response.values("cache-control") == ["no-cache"])
      #expect(response.header("location") == nil)
    }
    let head = try stack.get("/", method: "HEAD", arguments: ["--head"])
    #expect(head.status == 200)
    for method in ["POST", "PUT", "DELETE"] {
      let refused = try stack.get("/index.html", method: method)
      expectAPIAnswer(refused, status: 405)
      #expect(refused.header("allow") == "GET, HEAD")
    }
  }

  @Test func wrongMethodsGet405JSONWithAllow() throws {
    let stack = try TestStack(.none)
    defer { stack.stop() }
    for method in ["GET", "PUT", "DELETE", "OPTIONS", "PATCH"] {
      let response = try stack.get("/v1/register", method: method)
      expectAPIAnswer(response, status: 405)
      #expect(response.header("allow") == "POST")
    }
    let head = try stack.get("/v1/sync", method: "HEAD", arguments: ["--head"])
    #expect(head.status == 405)
    let postHealth = try stack.post("/health", json: "{}")
    expectAPIAnswer(postHealth, status: 405)
    #expect(postHealth.header("allow") == "GET, HEAD")
    let trace = try stack.get("/", method: "TRACE")
    expectAPIAnswer(trace, status: 405)
  }

  /// `limit_req` per client address: 20 requests of burst, then 429 JSON with Retry-After. Loopback
  /// (127.0.0.1) is exempt by design, so the burst comes from 127.0.0.2.
  @Test func burstingPastTheLimitGets429JSON() throws {
    let stack = try TestStack(.fake { _ in FakeFastCGI.json(200, "{}") })
    defer { stack.stop() }
    let statuses = try Curl.statuses(
      "POST", stack.baseURL + "/v1/sync", count: 200, body: Data("{}".utf8),
      arguments: ["--interface", "127.0.0.2"])
    try #require(statuses.count == 200)
    // The first 21 (one plus a burst of 20) always pass; sending 200 at well over 10/s trips the limit.
    #expect(statuses.prefix(21).allSatisfy { $0 == 200 }, "\(statuses)")
    #expect(statuses.contains(429), "\(statuses)")
    let limited = try stack.post("/v1/sync", json: "{}", arguments: ["--interface", "127.0.0.2"])
    if limited.status == 429 {
      expectAPIAnswer(limited, status: 429)
      #expect(limited.header("retry-after") == "1")
    }
    // Loopback itself is not limited.
    let local = try Curl.statuses("POST", stack.baseURL + "/v1/sync", count: 60, body: Data("{}".utf8))
    #expect(local.allSatisfy { $0 == 200 }, "\(local)")
  }

  @Test func responderDownGets502JSON() throws {
    let stack = try TestStack(.fake { _ in FakeFastCGI.json(200, #"{"ok":true}"#) })
    defer { stack.stop() }
    #expect(try stack.post("/v1/sync", json: "{}").status == 200)
    stack.stopResponder()
    expectAPIAnswer(try stack.post("/v1/sync", json: "{}"), status: 502)
    expectAPIAnswer(try stack.get("/health"), status: 502)
  }

  @Test func noResponderAtAllGets502JSON() throws {
    let stack = try TestStack(.none)
    defer { stack.stop() }
    expectAPIAnswer(try stack.post("/v1/register", json: "{}"), status: 502)
  }

  @Test func aResponderThatDoesNotAnswerGets504JSON() throws {
    let stack = try TestStack(
      .fake { request in request.params["DOCUMENT_URI"] == "/health" ? FakeFastCGI.json(200, "{}") : .hang },
      readTimeout: 1)
    defer { stack.stop() }
    let started = Date()
    // Not /v1/sync: its long polls have a read timeout of their own (330 s, aprs-cloud-api.conf).
    let response = try stack.post("/v1/register", json: "{}")
    expectAPIAnswer(response, status: 504)
    #expect(Date().timeIntervalSince(started) < 10)
  }

  /// `/metrics` is served by the private loopback listener only, marked for the responder with
  /// `APRS_CLOUD_METRICS=on`; the public server answers it 404 itself, from loopback too.
  @Test func metricsAreForLoopbackOnly() throws {
    let stack = try TestStack(.fake { _ in FakeFastCGI.json(200, #"{"requests":1}"#) })
    defer { stack.stop() }
    let local = try stack.metrics()
    #expect(local.status == 200 && local.text == #"{"requests":1}"#)
    let remote = try stack.metrics(arguments: ["--interface", "127.0.0.2"])
    expectAPIAnswer(remote, status: 403)

    let smuggled = ["APRS-CLOUD-METRICS: on", "APRS_CLOUD_METRICS: on"]
    for response in [
      try stack.get("/metrics"), try stack.get("/metrics", headers: smuggled),
      try stack.post("/metrics", json: "{}"),
      try stack.get("/v1/../metrics", arguments: ["--path-as-is"]), try stack.get("/metrics/"),
    ] {
      expectAPIAnswer(response, status: 404)
    }
    #expect(try stack.get("/metrics", method: "HEAD", arguments: ["--head"]).status == 404)
    // The private listener serves nothing else.
    let privateBase = "http://127.0.0.1:\(stack.metricsPort)"
    expectAPIAnswer(try Curl.request("GET", privateBase + "/health"), status: 404)
    expectAPIAnswer(try Curl.request("POST", privateBase + "/v1/sync", body: Data("{}".utf8)), status: 404)
    expectAPIAnswer(try stack.metrics(method: "POST"), status: 405)

    // Only the private listener's requests carry the mark; the public API's carry it empty, whatever
    // headers the client sends.
    _ = try stack.post("/v1/sync", json: "{}", headers: smuggled)
    let requests = try #require(stack.fake?.requests)
    let metrics = requests.filter { $0.params["DOCUMENT_URI"] == "/metrics" }
    #expect(metrics.count == 1)
    #expect(metrics.allSatisfy { $0.params["APRS_CLOUD_METRICS"] == "on" })
    let api = requests.filter { $0.params["DOCUMENT_URI"] != "/metrics" }
    #expect(!api.isEmpty)
    #expect(api.allSatisfy { $0.params["APRS_CLOUD_METRICS"] == "" }, "\(api.map(\.params))")
  }

  /// The responder's own errors reach the client byte for byte: nginx intercepts only its own.
  @Test func responderErrorsPassThroughUnchanged() throws {
    let answers: [String: (Int, String)] = [
      "/v1/register": (400, #"{"error":"callsign: must be 1 to 9 letters or digits"}"#),
      "/v1/heartbeat": (401, #"{"error":"auth: wrong passcode for N0CALL"}"#),
      "/v1/sync": (500, #"{"error":"storage failed"}"#),
      "/v1/unregister": (503, #"{"error":"the database is busy; retry shortly"}"#),
      "/v1/avatars": (429, #"{"error":"too many avatar uploads"}"#),
      "/v1/nope": (404, #"{"error":"no such endpoint: /v1/nope"}"#),
    ]
    let stack = try TestStack(
      .fake { request in
        guard let (status, body) = answers[request.params["DOCUMENT_URI"] ?? ""] else {
          return FakeFastCGI.json(200, "{}")
        }
        // A stray Cache-Control from the responder is replaced, not doubled.
        return FakeFastCGI.json(
          status, body, headers: [("Cache-Control", "max-age=60"), ("Retry-After", "7")])
      })
    defer { stack.stop() }
    for (path, (status, body)) in answers {
      let response = try stack.post(path, json: "{}")
      expectAPIAnswer(response, status: status)
      #expect(response.text == body, "\(path)")
      #expect(response.header("retry-after") == "7", "\(path): the responder's headers pass")
    }
  }

  @Test func largeJSONIsGzippedSmallIsNot() throws {
    let large = #"{"messages":["# + String(repeating: #""0123456789abcdef","#, count: 100) + #""end"]}"#
    let small = #"{"messages":[],"serverTime":1}"#
    let stack = try TestStack(
      .fake { request in
        let body = request.params["DOCUMENT_URI"] == "/v1/sync" ? large : small
        return FakeFastCGI.json(200, body, headers: [("Content-Length", String(body.utf8.count))])
      })
    defer { stack.stop() }
    let compressed = try stack.post("/v1/sync", json: "{}", headers: ["Accept-Encoding: gzip"])
    #expect(compressed.status == 200)
    #expect(compressed.header("content-encoding") == "gzip")
    #expect(compressed.header("vary")?.contains("Accept-Encoding") == true)
    #expect(compressed.body.prefix(2) == Data([0x1F, 0x8B]))
    #expect(compressed.body.count < large.utf8.count / 4)
    #expect(compressed.values("cache-control") == ["no-store"])
    let decoded = try stack.post("/v1/sync", json: "{}", arguments: ["--compressed"])
    #expect(decoded.text == large)
    let plain = try stack.post("/v1/sync", json: "{}")
    #expect(plain.header("content-encoding") == nil && plain.text == large)

    let short = try stack.post("/v1/register", json: "{}", headers: ["Accept-Encoding: gzip"])
    #expect(short.header("content-encoding") == nil, "under 860 bytes stays plain")
    #expect(short.text == small)
  }

  /// What the responder gets from nginx: the CGI variables it routes and reads the body by, the body
  /// itself, and a connection that is not kept alive.
  @Test func theResponderGetsTheFastCGIParametersItNeeds() throws {
    let stack = try TestStack(.fake { _ in FakeFastCGI.json(200, "{}") })
    defer { stack.stop() }
    let json = #"{"callsign":"N0CALL","ssid":7,"auth":"13023","since":0}"#
    _ = try stack.post(
      "/v1/sync?x=1", json: json, headers: ["Proxy: http://evil.example", "User-Agent: HTCommander"])
    let chunkedBody = #"{"callsign":"N0CALL","auth":13023}"#
    _ = try stack.post("/v1/heartbeat", json: chunkedBody, headers: ["Transfer-Encoding: chunked"])
    let requests = try #require(stack.fake?.requests.filter { $0.params["DOCUMENT_URI"] != "/health" })
    try #require(requests.count == 2)

    let params = requests[0].params
    #expect(params["REQUEST_METHOD"] == "POST")
    #expect(params["CONTENT_TYPE"] == "application/json")
    #expect(params["CONTENT_LENGTH"] == String(json.utf8.count))
    #expect(params["DOCUMENT_URI"] == "/v1/sync")
    #expect(params["SCRIPT_NAME"] == "/v1/sync")
    #expect(params["REQUEST_URI"] == "/v1/sync?x=1")
    #expect(params["QUERY_STRING"] == "x=1")
    #expect(params["REMOTE_ADDR"] == "127.0.0.1")
    #expect(params["SERVER_PROTOCOL"] == "HTTP/1.1")
    #expect(params["GATEWAY_INTERFACE"] == "CGI/1.1")
    #expect(params["REQUEST_SCHEME"] == "http")
    #expect(params["HTTP_USER_AGENT"] == "HTCommander")
    #expect(
      params["HTTP_PROXY"] == nil || params["HTTP_PROXY"] == "",
      "httpoxy: the Proxy header must not get through")
    #expect(requests[0].body == Array(json.utf8))

    // A chunked body arrives whole, with its length.
    #expect(requests[1].body == Array(chunkedBody.utf8))
    #expect(requests[1].params["CONTENT_LENGTH"] == String(chunkedBody.utf8.count))
  }

  /// Every answer nginx itself gives on any path is JSON with no-store.
  @Test func everyNginxErrorIsJSON() throws {
    let stack = try TestStack(.none)
    defer { stack.stop() }
    let cases: [(HTTPResponse, Int)] = [
      (try stack.get("/nothing.html"), 404),
      (try stack.get("/v1/sync"), 405),
      (try stack.post("/v1/sync", body: Data(count: 66_000)), 413),
      (try stack.post("/v1/sync", json: "{}"), 502),
      (try stack.get("/health"), 502),
      (try stack.metrics(arguments: ["--interface", "127.0.0.2"]), 403),
      (try stack.get("/metrics"), 404),
      (try stack.metrics(), 502),
      (try stack.metrics(method: "DELETE"), 405),
      (try Curl.request("GET", "http://127.0.0.1:\(stack.metricsPort)/"), 404),
      (try stack.get("/", headers: ["Host: bad/host"]), 400),
    ]
    for (response, status) in cases {
      expectAPIAnswer(response, status: status)
    }
  }

  /// Requests nginx refuses while it reads the request line (so before there is a URI to redirect with)
  /// get JSON too, on the public and the metrics listener: never nginx's own HTML 500, 414, 501 or 505.
  @Test func requestsNginxCannotParseGetJSONNotHTML() throws {
    let stack = try TestStack(.none)
    defer { stack.stop() }
    let cases: [(String, Int)] = [
      ("POST /v1/sync%00 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", 400),
      ("GET /../x HTTP/1.1\r\nHost: x\r\n\r\n", 400),
      ("GARBAGE\r\n\r\n", 400),
      ("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 400),
      ("GET /" + String(repeating: "a", count: 10_000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414),
      ("POST /v1/sync HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
      ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
      // A malformed chunked body that nginx throws away after answering 404 or 405 itself.
      ("GET /v1/sync HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n", 400),
      ("POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n", 400),
      ("GET /nope HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n", 400),
    ]
    for port in [stack.port, stack.metricsPort] {
      for (request, status) in cases {
        let response = try rawHTTP(port: port, Array(request.utf8))
        expectAPIAnswer(response, status: status)
      }
    }
    // The web client's static files: a range past the end and a failed precondition.
    let static416 = try rawHTTP(
      port: stack.port, Array("GET /js/app.mjs HTTP/1.1\r\nHost: x\r\nRange: bytes=999999-\r\n\r\n".utf8))
    // (nginx answers a range past the end while it sends the file, so the file's own headers stay: its
    // `Cache-Control: no-cache` and security headers beside the error's.)
    #expect(static416.status == 416, "\(static416.text)")
    #expect(static416.header("content-type")?.hasPrefix("application/json") == true)
    #expect(static416.errorMessage == "requested range not satisfiable", "\(static416.text)")
    let static412 = try rawHTTP(
      port: stack.port, Array("GET /js/app.mjs HTTP/1.1\r\nHost: x\r\nIf-Match: \"x\"\r\n\r\n".utf8))
    expectAPIAnswer(static412, status: 412)
    // The pages behind those answers are not reachable from outside.
    expectAPIAnswer(try stack.get("/.aprs-cloud-error/400"), status: 404)
  }
}
