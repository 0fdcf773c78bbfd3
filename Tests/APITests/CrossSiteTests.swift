import API
import Foundation
import Testing

/// Cross-site POSTs (PROTOCOL.md "Owned stations"): a page of another site cannot drive the API through its
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

  @Test(arguments: [
    ("https://evil.example", "aprs.example.org"),
    ("http://aprs.example.org", "aprs.example.org:8443"),
    ("https://aprs.example.org:8443", "aprs.example.org"),
    ("http://127.0.0.1:9999", "127.0.0.1:8080"),
    ("https://aprs.example.org.evil.example", "aprs.example.org"),
    ("null", "aprs.example.org"),
    ("file://", "aprs.example.org"),
    ("https://user@aprs.example.org", "aprs.example.org"),
  ])
  func aPostFromAnotherSiteIs403AndChangesNothing(origin: String, host: String) throws {
    let api = try Self.fixture()
    let reply = api.post(
      "/v1/unregister", Self.identity, authorization: nil, origin: origin, fetchSite: "cross-site", host: host
    )
    #expect(reply.status == 403, "\(reply.text)")
    #expect(reply.error?.hasPrefix("cross-site request refused") == true, "\(reply.text)")
    #expect(try api.database.station("N0CALL-7") != nil)
  }

  @Test(arguments: [
    ("https://aprs.example.org", "aprs.example.org"),
    ("https://APRS.example.org:443", "aprs.example.org"),
    ("http://aprs.example.org", "aprs.example.org:80"),
    ("http://127.0.0.1:8080", "127.0.0.1:8080"),
    ("http://[::1]:8080", "[::1]:8080"),
    ("https://app.example.net", "aprs.example.org"),
  ])
  func theServersOwnSiteAndAllowedOriginsPass(origin: String, host: String) throws {
    let api = try Self.fixture(allowed: ["https://App.example.net/"])
    let reply = api.post(
      "/v1/sync", Self.identity, authorization: nil, origin: origin, fetchSite: "same-origin", host: host)
    #expect(reply.status == 200, "\(origin) on \(host): \(reply.text)")
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
