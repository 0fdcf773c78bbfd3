import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The VPS site (nginx/aprs-cloud-site.conf) actually serving: TLS with HTTP/2 on one port, the
/// plain-HTTP server on another, a fake responder behind it.
@Suite struct NginxSiteTests {
  @Test func servesTheAPIOverTLSWithHTTP2AndNeverRedirectsAPICalls() throws {
    let prefix = try NginxPrefix("tls")
    defer { prefix.remove() }
    let site = try RenderedSite(prefix: prefix)
    let fake = try FakeFastCGI(socketPath: site.socket) { request in
      FakeFastCGI.json(200, #"{"messages":[],"serverTime":1,"scheme":"\#(request.params["HTTPS"] ?? "")"}"#)
    }
    defer { fake.stop() }
    let https = "https://127.0.0.1:\(site.httpsPort)"
    let http = "http://127.0.0.1:\(site.httpPort)"
    let nginx = try prefix.start(site.config, readyURL: https + "/", curlArguments: ["-k"])
    defer { TestStack.terminate(nginx) }

    let sync = try Curl.request(
      "POST", https + "/v1/sync", body: Data("{}".utf8), headers: ["content-type: application/json"],
      arguments: ["--http2", "-k"])
    #expect(sync.version == "HTTP/2")
    expectAPIAnswer(sync, status: 200, isError: false)
    #expect(sync.text.contains(#""scheme":"on""#), "the responder is told the request came over TLS")

    let page = try Curl.request("GET", https + "/", arguments: ["--http2", "-k"])
    #expect(page.status == 200 && page.header("content-type")?.hasPrefix("text/html") == true)
    #expect(page.text.contains("<title>APRS messages</title>"), "the web client")
    #expect(page.header("content-security-policy")?.hasPrefix("default-src 'self';") == true)
    let worker = try Curl.request("GET", https + "/sw.js", arguments: ["--http2", "-k"])
    #expect(worker.status == 200 && worker.header("content-type")?.hasPrefix("text/javascript") == true)

    let unknown = try Curl.request("GET", https + "/wp-login.php", arguments: ["--http2", "-k"])
    #expect(unknown.version == "HTTP/2")
    expectAPIAnswer(unknown, status: 404)
    let tooLarge = try Curl.request(
      "POST", https + "/v1/register", body: Data(count: 70_000), arguments: ["--http2", "-k"])
    expectAPIAnswer(tooLarge, status: 413)

    // Port 80: API calls get a JSON error, never a redirect; browsers go to HTTPS.
    for path in ["/v1/register", "/v1/sync", "/v1", "/health"] {
      let plain = try Curl.request("POST", http + path, body: Data("{}".utf8))
      expectAPIAnswer(plain, status: 403)
      #expect(plain.errorMessage?.contains("HTTPS") == true)
    }
    let browser = try Curl.request("GET", http + "/")
    #expect(browser.status == 301)
    #expect(browser.header("location")?.hasPrefix("https://") == true)

    // Plain HTTP sent to the TLS port.
    expectAPIAnswer(try Curl.request("POST", "http://127.0.0.1:\(site.httpsPort)/v1/sync"), status: 400)
    #expect(fake.requests.count == 1)
  }

  /// `/metrics` only on the private loopback listener (with the responder's mark), 404 on both public
  /// servers; and nginx's rate limit counts loopback clients like any other (no exemption on a VPS).
  @Test func metricsOnlyOnThePrivateListenerAndLoopbackIsRateLimited() throws {
    let prefix = try NginxPrefix("site")
    defer { prefix.remove() }
    let site = try RenderedSite(prefix: prefix)
    let fake = try FakeFastCGI(socketPath: site.socket) { request in
      request.params["APRS_CLOUD_METRICS"] == "on"
        ? FakeFastCGI.json(200, #"{"metrics":1}"#) : FakeFastCGI.json(200, "{}")
    }
    defer { fake.stop() }
    let https = "https://127.0.0.1:\(site.httpsPort)"
    let nginx = try prefix.start(site.config, readyURL: https + "/", curlArguments: ["-k"])
    defer { TestStack.terminate(nginx) }

    let scrape = try Curl.request("GET", "http://127.0.0.1:\(site.metricsPort)/metrics")
    #expect(scrape.status == 200 && scrape.text == #"{"metrics":1}"#, "\(scrape.text)")
    expectAPIAnswer(
      try Curl.request(
        "GET", "http://127.0.0.1:\(site.metricsPort)/metrics", arguments: ["--interface", "127.0.0.2"]),
      status: 403)
    expectAPIAnswer(try Curl.request("GET", "http://127.0.0.1:\(site.metricsPort)/health"), status: 404)
    expectAPIAnswer(
      try Curl.request("GET", https + "/metrics", headers: ["APRS-CLOUD-METRICS: on"], arguments: ["-k"]),
      status: 404)
    expectAPIAnswer(try Curl.request("GET", "http://127.0.0.1:\(site.httpPort)/metrics"), status: 404)
    #expect(fake.requests.count == 1, "only the private listener's scrape reached the responder")

    // 200 requests from 127.0.0.1 at well over 10/s: past the burst of 20, nginx answers 429.
    let statuses = try Curl.statuses(
      "POST", https + "/v1/sync", count: 200, body: Data("{}".utf8), arguments: ["-k"])
    try #require(statuses.count == 200)
    #expect(statuses.prefix(21).allSatisfy { $0 == 200 }, "\(statuses)")
    #expect(statuses.contains(429), "loopback is not exempt: \(statuses)")
    // The scraper is not limited: its listener has no limit_req.
    let scrapes = try Curl.statuses("GET", "http://127.0.0.1:\(site.metricsPort)/metrics", count: 60)
    #expect(scrapes.allSatisfy { $0 == 200 }, "\(scrapes)")
  }

  @Test func tlsIsModernOnlyAndResumesSessions() throws {
    let prefix = try NginxPrefix("tls")
    defer { prefix.remove() }
    let site = try RenderedSite(prefix: prefix)
    let https = "https://127.0.0.1:\(site.httpsPort)"
    let nginx = try prefix.start(site.config, readyURL: https + "/", curlArguments: ["-k"])
    defer { TestStack.terminate(nginx) }
    let connect = ["s_client", "-connect", "127.0.0.1:\(site.httpsPort)", "-servername", "localhost"]

    // TLS 1.1 is refused by the server (the client is allowed to offer it).
    let old = try runProcess("/usr/bin/openssl", connect + ["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"])
    #expect(old.status != 0)
    #expect(old.stdoutText.contains("Cipher is (NONE)") || old.stderrText.contains("alert protocol version"))

    // A session from a first connection is resumed by a second one.
    let session = prefix.directory + "/session.pem"
    let first = try runProcess("/usr/bin/openssl", connect + ["-tls1_2", "-sess_out", session])
    #expect(first.stdoutText.contains("New, TLSv1.2"), "\(first.stdoutText)")
    let second = try runProcess("/usr/bin/openssl", connect + ["-tls1_2", "-sess_in", session])
    #expect(second.stdoutText.contains("Reused, TLSv1.2"), "\(second.stdoutText)")

    let modern = try runProcess("/usr/bin/openssl", connect + ["-tls1_3"])
    #expect(modern.stdoutText.contains("TLSv1.3"))
  }
}

/// What the shipped site does about slow and clinging clients, and HSTS.
@Suite struct NginxSiteLimitsTests {
  /// HSTS on every TLS answer (the responder's, nginx's own errors, the web client's files), never on plain
  /// HTTP, where browsers ignore it and it would say nothing true.
  @Test func everyTLSAnswerCarriesHSTSAndPlainHTTPNone() throws {
    let prefix = try NginxPrefix("hsts")
    defer { prefix.remove() }
    let site = try RenderedSite(prefix: prefix)
    let fake = try FakeFastCGI(socketPath: site.socket) { _ in FakeFastCGI.json(200, #"{"messages":[]}"#) }
    defer { fake.stop() }
    let https = "https://127.0.0.1:\(site.httpsPort)"
    let nginx = try prefix.start(site.config, readyURL: https + "/", curlArguments: ["-k"])
    defer { TestStack.terminate(nginx) }
    let answers = [
      try Curl.request("POST", https + "/v1/sync", body: Data("{}".utf8), arguments: ["-k"]),
      try Curl.request("GET", https + "/v1/sync", arguments: ["-k"]),  // nginx's 405
      try Curl.request("GET", https + "/wp-login.php", arguments: ["-k"]),  // nginx's 404
      try Curl.request("GET", https + "/", arguments: ["-k"]),  // the web client
      try Curl.request("GET", https + "/health", arguments: ["-k"]),
    ]
    for answer in answers {
      #expect(answer.header("strict-transport-security") == "max-age=31536000", "\(answer.status)")
    }
    let plain = try Curl.request("POST", "http://127.0.0.1:\(site.httpPort)/v1/sync", body: Data("{}".utf8))
    #expect(plain.status == 403 && plain.header("strict-transport-security") == nil)
  }

  /// A slow-loris client (a request head that never ends, a body that never comes) is cut off after the 10 s
  /// timeouts on both public servers, instead of holding its connection for nginx's default 60 s.
  @Test func slowClientsAreCutOffByTheTimeouts() throws {
    let prefix = try NginxPrefix("slow")
    defer { prefix.remove() }
    let site = try RenderedSite(prefix: prefix)
    let fake = try FakeFastCGI(socketPath: site.socket) { _ in FakeFastCGI.json(200, "{}") }
    defer { fake.stop() }
    let nginx = try prefix.start(
      site.config, readyURL: "https://127.0.0.1:\(site.httpsPort)/", curlArguments: ["-k"])
    defer { TestStack.terminate(nginx) }

    // Plain HTTP: an unfinished head. (A body is never read there: the API answers 403 at once.)
    let head = Array("POST /v1/sync HTTP/1.1\r\nHost: localhost\r\nX-Slow: 1\r\n".utf8)
    let plainHeld = try secondsUntilClosed(port: site.httpPort, sending: head)
    #expect(plainHeld >= 9 && plainHeld < 20, "plain HTTP held \(plainHeld) s")
    // TLS (the API's server), through openssl's client: the unfinished head, and a head promising a body
    // that stops after 10 bytes.
    let body = Array(
      "POST /v1/sync HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{\"callsign".utf8)
    for request in [head, body] {
      let held = try secondsUntilClosedOverTLS(port: site.httpsPort, sending: request)
      #expect(held >= 9 && held < 20, "TLS held \(held) s")
    }
    #expect(fake.requests.isEmpty, "nothing reached the responder")
  }

  /// ``secondsUntilClosed(port:sending:)`` over TLS, with `openssl s_client` as the client.
  private func secondsUntilClosedOverTLS(port: Int, sending request: [UInt8]) throws -> Double {
    let openssl = Process()
    openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    openssl.arguments = ["s_client", "-quiet", "-connect", "127.0.0.1:\(port)"]
    let input = Pipe()
    openssl.standardInput = input
    openssl.standardOutput = FileHandle.nullDevice
    openssl.standardError = FileHandle.nullDevice
    let started = Date()
    try openssl.run()
    input.fileHandleForWriting.write(Data(request))
    let deadline = Date().addingTimeInterval(40)
    while openssl.isRunning && Date() < deadline { usleep(50_000) }
    if openssl.isRunning { openssl.terminate() }
    return Date().timeIntervalSince(started)
  }

  /// Sends `request` and waits (at most 40 s) until nginx closes the connection; returns the seconds it took.
  private func secondsUntilClosed(port: Int, sending request: [UInt8]) throws -> Double {
    let fd = try connectLoopbackTCP(port: port)
    defer { close(fd) }
    var timeout = timeval(tv_sec: 40, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let started = Date()
    try sendAll(fd, request)
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if count <= 0 { break }
    }
    return Date().timeIntervalSince(started)
  }
}
