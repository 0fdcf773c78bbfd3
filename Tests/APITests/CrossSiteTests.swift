import API
import Foundation
import Testing

/// Cross-site POSTs (docs/protocol.md "Owned stations"): a page of another site cannot drive the API through its
/// visitors' browsers; the apps and curl (no `Origin`) are unaffected, and `GET /v1/info` stays open.
@Suite struct CrossSiteTests {
  nonisolated(unsafe) static let identity: [String: Any] = ["callsign": "N0CALL", "ssid": 7, "auth": "13023"]

  private static func fixture(allowed: [String] = []) throws -> APIFixture {
    var config = APIConfig()
    config.allowedOrigins = Set(allowed.compactMap(APIConfig.normalisedOrigin))
    let api = try APIFixture(config: config)
    #expect(api.post("/v1/register", registerBody(["wantHistory": false])).status == 200)
    return api
  }

  /// An origin, and how the request reached the server: `Host`, the scheme and the port the web server saw.
  typealias Arrival = (origin: String, host: String, scheme: RequestScheme?, port: Int?)

  @Test(
    arguments: [
      ("https://evil.example", "aprs.example.org", .https, 443),
      ("http://aprs.example.org", "aprs.example.org:8443", .https, 8443),
      ("https://aprs.example.org:8443", "aprs.example.org", .https, 443),
      ("http://127.0.0.1:9999", "127.0.0.1:8080", .http, 8080),
      ("https://aprs.example.org.evil.example", "aprs.example.org", .https, 443),
      ("null", "aprs.example.org", .https, 443),
      ("file://", "aprs.example.org", .https, 443),
      ("https://user@aprs.example.org", "aprs.example.org", .https, 443),
      // The same host by another scheme or on another port is another site.
      ("http://aprs.example.org", "aprs.example.org", .https, 443),
      ("http://aprs.example.org:443", "aprs.example.org", .https, 443),
      ("https://aprs.example.org", "aprs.example.org", .http, 80),
      ("https://aprs.example.org:8080", "aprs.example.org:8080", .http, 8080),
      // A Host naming another port than the web server received it on (a proxy, a port mapping): the page's
      // origin is not known here, whichever it names.
      ("http://aprs.example.org:8080", "aprs.example.org", .http, 8080),
      ("http://aprs.example.org", "aprs.example.org", .http, 8080),
      // The scheme unknown (REQUEST_SCHEME and HTTPS disagreed): no origin is the server's own.
      ("https://aprs.example.org", "aprs.example.org", nil, 443),
    ] as [Arrival])
  func aPostFromAnotherSiteIs403AndChangesNothing(arrival: Arrival) throws {
    let api = try Self.fixture()
    let reply = api.post(
      "/v1/unregister", Self.identity, authorization: nil, origin: arrival.origin, fetchSite: "cross-site",
      host: arrival.host, scheme: arrival.scheme, serverPort: arrival.port)
    #expect(reply.status == 403, "\(arrival): \(reply.text)")
    #expect(reply.error?.hasPrefix("cross-site request refused") == true, "\(reply.text)")
    #expect(try api.database.station("N0CALL-7") != nil)
  }

  @Test(
    arguments: [
      ("https://aprs.example.org", "aprs.example.org", .https, 443),
      ("https://APRS.example.org:443", "aprs.example.org", .https, 443),
      ("https://aprs.example.org", "aprs.example.org:443", .https, 443),
      ("https://aprs.example.org", "aprs.example.org", .https, nil),
      ("http://aprs.example.org", "aprs.example.org:80", .http, 80),
      ("http://127.0.0.1:8080", "127.0.0.1:8080", .http, 8080),
      ("http://[::1]:8080", "[::1]:8080", .http, 8080),
      ("https://app.example.net", "aprs.example.org", .https, 443),
      // An allowed origin passes however the request came (behind a proxy that speaks http to nginx).
      ("https://app.example.net", "aprs.example.org", .http, 8080),
      ("https://app.example.net", "aprs.example.org", nil, nil),
    ] as [Arrival])
  func theServersOwnSiteAndAllowedOriginsPass(arrival: Arrival) throws {
    let api = try Self.fixture(allowed: ["https://App.example.net/"])
    let reply = api.post(
      "/v1/sync", Self.identity, authorization: nil, origin: arrival.origin, fetchSite: "same-origin",
      host: arrival.host, scheme: arrival.scheme, serverPort: arrival.port)
    #expect(reply.status == 200, "\(arrival): \(reply.text)")
  }

  @Test func theRefusalNamesTheServersOwnSite() throws {
    let api = try Self.fixture()
    let reply = api.post(
      "/v1/unregister", Self.identity, authorization: nil, origin: "http://aprs.example.org",
      host: "aprs.example.org", scheme: .https, serverPort: 443)
    #expect(
      reply.error
        == "cross-site request refused: Origin http://aprs.example.org is not this server's own site"
        + " (https://aprs.example.org) nor one of its allowedOrigins", "\(reply.text)")
  }

  @Test func theSchemeAndPortComeFromTheWebServersVariables() {
    #expect(RequestScheme(requestScheme: "https", https: "on") == .https)
    #expect(RequestScheme(requestScheme: "HTTP", https: nil) == .http)
    #expect(RequestScheme(requestScheme: nil, https: "on") == .https, "CGI without REQUEST_SCHEME")
    #expect(RequestScheme(requestScheme: nil, https: "1") == .https)
    #expect(RequestScheme(requestScheme: nil, https: nil) == .http, "no HTTPS: plain http")
    #expect(RequestScheme(requestScheme: "", https: "off") == .http)
    #expect(RequestScheme(requestScheme: "http", https: "on") == nil, "they disagree")
    #expect(RequestScheme(requestScheme: "https", https: "off") == nil)
    #expect(RequestScheme(requestScheme: "gopher", https: nil) == nil)
    #expect(RequestScheme.port("443") == 443 && RequestScheme.port(" 8080 ") == 8080)
    for bad in [nil, "", "0", "65536", "+80", "-1", "80a", "123456"] as [String?] {
      #expect(RequestScheme.port(bad) == nil, "\(String(describing: bad))")
    }
  }

  @Test func withoutOriginOnlySecFetchSiteCrossSiteIsRefused() throws {
    let api = try Self.fixture()
    #expect(api.post("/v1/sync", Self.identity, authorization: nil).status == 200, "the apps, curl")
    #expect(api.post("/v1/sync", Self.identity, authorization: nil, fetchSite: "none").status == 200)
    let refused = api.post("/v1/unregister", Self.identity, authorization: nil, fetchSite: "cross-site")
    #expect(refused.status == 403, "\(refused.text)")
    #expect(try api.database.station("N0CALL-7") != nil)
  }

  @Test func infoStaysOpenToEveryOrigin() throws {
    let api = try Self.fixture()
    for method in ["GET", "POST"] {
      let reply = api.post(
        "/v1/info", [:], authorization: nil, origin: "https://evil.example", fetchSite: "cross-site",
        host: "aprs.example.org", method: method)
      #expect(reply.status == 200, "\(method): \(reply.text)")
    }
  }

  @Test func allowedOriginsAreNormalisedOrRefused() {
    #expect(APIConfig.normalisedOrigin("https://App.Example.org:443/") == "https://app.example.org")
    #expect(APIConfig.normalisedOrigin("http://example.org:8080") == "http://example.org:8080")
    #expect(APIConfig.normalisedOrigin("http://example.org:80") == "http://example.org")
    for bad in [
      "example.org", "ftp://example.org", "https://", "https://example.org/path", "https://a:b@c",
      "https://example.org:0", "https://example.org:70000", "https://example.org:x",
    ] {
      #expect(APIConfig.normalisedOrigin(bad) == nil, "\(bad)")
    }
  }
}
