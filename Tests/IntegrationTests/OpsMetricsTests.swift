import Foundation
import TestSupport
import Testing

/// `/metrics` end to end: curl from 127.0.0.1 through nginx's private metrics listener (the project's
/// configuration) to the real responder over FastCGI, parsed strictly, its counters moving with the
/// traffic; never through the public server.
@Suite struct OpsMetricsTests {
  private func scrape(_ stack: TestStack) throws -> PrometheusDocument {
    let response = try stack.metrics()
    #expect(response.status == 200, "\(response.text)")
    #expect(response.header("content-type")?.hasPrefix("text/plain; version=0.0.4") == true)
    #expect(response.values("cache-control") == ["no-store"])
    return try PrometheusDocument(parsing: response.text)
  }

  @Test func metricsThroughNginxParseAndMoveWithTraffic() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let before = try scrape(stack)
    #expect(before.value("aprs_cloud_database_up") == 1)
    #expect(before.value("aprs_cloud_stations") == 0)
    #expect(before.value("aprs_cloud_responder_info", ["mode": "fastcgi", "workers": "4"]) == 1)
    func count(_ document: PrometheusDocument, _ endpoint: String, _ status: String) -> Double {
      document.value("aprs_cloud_http_requests_total", ["endpoint": endpoint, "status": status]) ?? 0
    }

    let register = try stack.post(
      "/v1/register",
      json:
        #"{"callsign":"N0CALL","ssid":7,"auth":"13023","platform":"android","pushToken":"fcm-token:APA91b-e2e","#
        + #""ackMessages":true,"wantHistory":true,"since":0}"#)
    #expect(register.status == 200, "\(register.text)")
    for _ in 0..<3 {
      #expect(
        try stack.post("/v1/sync", json: #"{"callsign":"N0CALL","ssid":7,"auth":"13023","since":0}"#).status
          == 200)
    }
    #expect(try stack.post("/v1/sync", json: #"{"callsign":"N0CALL","ssid":7,"auth":"99999"}"#).status == 401)
    #expect(try stack.get("/health").status == 200)

    let after = try scrape(stack)
    #expect(count(after, "/v1/register", "200") - count(before, "/v1/register", "200") == 1)
    #expect(count(after, "/v1/sync", "200") - count(before, "/v1/sync", "200") == 3)
    #expect(count(after, "/v1/sync", "401") == 1)
    #expect(count(after, "/health", "200") - count(before, "/health", "200") == 1)
    #expect(count(after, "/metrics", "200") - count(before, "/metrics", "200") == 1)
    #expect(after.value("aprs_cloud_http_request_duration_seconds_count", ["endpoint": "/v1/sync"]) == 4)
    #expect(after.value("aprs_cloud_stations") == 1)
    #expect(after.value("aprs_cloud_stations_live") == 1)
    #expect(after.value("aprs_cloud_devices", ["platform": "android"]) == 1)
    #expect(after.value("aprs_cloud_listener_running") == 0, "no listener in this stack")

    // Only for the machine itself.
    let remote = try stack.metrics(arguments: ["--interface", "127.0.0.2"])
    expectAPIAnswer(remote, status: 403)
    // And never through the public server, not even from loopback.
    for response in [
      try stack.get("/metrics"), try stack.get("/metrics", headers: ["APRS-CLOUD-METRICS: on"]),
      try stack.get("/v1/../metrics", arguments: ["--path-as-is"]), try stack.post("/metrics", json: "{}"),
    ] {
      expectAPIAnswer(response, status: 404)
    }
    let last = try scrape(stack)
    #expect(count(last, "/metrics", "200") - count(after, "/metrics", "200") == 1, "only the scrapes")
  }
}
