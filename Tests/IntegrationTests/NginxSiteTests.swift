import Foundation
import Testing

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
