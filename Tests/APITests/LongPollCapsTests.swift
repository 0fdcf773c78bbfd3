import API
import Foundation
import TestSupport
import Testing

/// The API's side of the caps on held long polls (`[server] maxParkedPerStation`,
/// `maxParkedPerAddress`, `maxParked`): a held sync carries the client address's key, a sync past the
/// per-address cap is a 429 with `Retry-After` unless messages came meanwhile, every hit is counted
/// for `/metrics`, and the info line about them comes at most once a minute.
@Suite struct LongPollCapsTests {
  static func sync(_ fixture: APIFixture, from address: String, ssid: Int = 7) -> APIAnswer {
    let body = #"{"callsign":"N0CALL","ssid":\#(ssid),"since":0,"auth":"13023","wait":30}"#
    return fixture.handler.answer(
      APIRequest(
        method: "POST", path: "/v1/sync", contentType: "application/json", body: Array(body.utf8),
        remoteAddress: address))
  }

  static func park(_ answer: APIAnswer) -> SyncPark? {
    if case .park(let park) = answer { return park }
    return nil
  }

  /// The key is the one the per-address rate limits use (`ClientAddress`): IPv6 by /64.
  @Test func aHeldSyncCarriesItsClientAddressKey() throws {
    let fixture = try APIFixture()
    _ = fixture.post("/v1/register", registerBody())
    for (address, key) in [
      ("203.0.113.7", "203.0.113.7"), ("2001:db8:0:1:aaaa::7", "2001:db8:0:1::/64"),
      ("::ffff:203.0.113.7", "203.0.113.7"), ("", "unknown"),
    ] {
      let park = try #require(Self.park(Self.sync(fixture, from: address)))
      #expect(park.client == key && park.client == ClientAddress(address).key, "\(address)")
      #expect(park.station == "N0CALL-7")
    }
  }

  @Test func aSyncPastTheAddressCapIs429WithRetryAfter() throws {
    let fixture = try APIFixture()
    _ = fixture.post("/v1/register", registerBody())
    let park = try #require(Self.park(Self.sync(fixture, from: "198.51.100.1")))
    let refused = Reply(fixture.handler.refusedSync(park))
    #expect(refused.status == 429)
    #expect(refused.error == "too many long polls held for this client address; retry in 10 s")
    #expect(refused.header("Retry-After") == String(APIHandler.parkRefusedRetryAfterSeconds))
    #expect(APIHandler.parkRefusedRetryAfterSeconds == 10)
  }

  /// A message that came between the read that found nothing and the refusal is answered, not
  /// refused: the cap never delays a message that is there.
  @Test func aSyncPastTheAddressCapGetsWhatCameMeanwhile() throws {
    let fixture = try APIFixture()
    _ = fixture.post("/v1/register", registerBody())
    let park = try #require(Self.park(Self.sync(fixture, from: "198.51.100.1")))
    try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC-7", text: "just in")
    let answered = Reply(fixture.handler.refusedSync(park))
    #expect(answered.status == 200 && answered.messages.map { $0["text"]?.stringValue } == ["just in"])
  }

  @Test func anInfoLineIsDueAtTheFirstHitThenAtMostOnceAMinuteWithTheHitsSince() {
    var report = HitReport()
    #expect(report.hit(now: 1_000) == 1)
    #expect(report.hit(now: 1_001) == nil)
    #expect(report.hit(now: 30_000) == nil)
    #expect(report.hit(now: 60_999) == nil)
    #expect(report.hit(now: 61_000) == 4)
    #expect(report.hit(now: 61_000 + HitReport.intervalMs) == 1)
  }

  @Test func hitsAreCountedPerCapAndShownWithTheirSettingsInMetrics() throws {
    var config = APIConfig()
    config.maxParked = 5000
    config.maxParkedPerStation = 4
    config.maxParkedPerAddress = 100
    let fixture = try APIFixture(config: config)
    let registry = RequestMetrics(startedAt: 0)
    #expect(registry.countLimitHit(.maxParkedPerStation, now: 0) == 1)
    #expect(registry.countLimitHit(.maxParkedPerStation, now: 1) == nil)
    #expect(registry.countLimitHit(.maxParkedPerAddress, now: 2) == 1, "each cap has its own line")
    #expect(registry.limitHits(.maxParkedPerStation) == 2 && registry.limitHits(.maxParked) == 0)

    let clock = fixture.clock
    let handler = APIHandler(
      database: fixture.database, config: config, metrics: registry, clock: { clock.now })
    let response = handler.handle(APIRequest(method: "GET", path: "/metrics", viaMetricsListener: true))
    let document = try PrometheusDocument(parsing: String(decoding: response.body, as: UTF8.self))
    for (limit, hits, setting) in [
      ("maxParked", 0.0, 5000.0), ("maxParkedPerStation", 2, 4), ("maxParkedPerAddress", 1, 100),
    ] {
      #expect(document.value("aprs_cloud_limit_hits_total", ["limit": limit]) == hits, "\(limit)")
      #expect(document.value("aprs_cloud_limit_setting", ["limit": limit]) == setting, "\(limit)")
    }
    #expect(
      ParkLimit.allCases.map(\.rawValue) == ["maxParked", "maxParkedPerStation", "maxParkedPerAddress"])
  }
}
