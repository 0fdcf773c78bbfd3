import API
import Foundation
import TestSupport
import Testing

@testable import Store

/// A handler with a request registry, driven the way the FastCGI shell drives it: every request is
/// counted and timed around `handle`.
private final class MetricsFixture {
  let api: APIFixture
  let registry: RequestMetrics
  let handler: APIHandler

  init() throws {
    api = try APIFixture()
    registry = RequestMetrics(startedAt: 1_799_999_000_000, mode: "fastcgi", workers: 4)
    let clock = api.clock
    handler = APIHandler(database: api.database, metrics: registry, clock: { clock.now })
  }

  var database: Database { api.database }

  /// Serves one request as the shell does; by default as from nginx's private metrics listener.
  @discardableResult
  func serve(_ method: String, _ path: String, _ body: String = "", viaMetricsListener: Bool = true)
    -> APIResponse
  {
    registry.begin()
    let started = DispatchTime.now().uptimeNanoseconds
    let response = handler.handle(
      APIRequest(method: method, path: path, body: Array(body.utf8), viaMetricsListener: viaMetricsListener))
    let elapsed = Int64((DispatchTime.now().uptimeNanoseconds - started) / 1000)
    registry.record(path: path, status: response.status, microseconds: elapsed)
    return response
  }

  /// `GET /metrics`, parsed strictly.
  func scrape() throws -> PrometheusDocument {
    let response = serve("GET", "/metrics")
    #expect(response.status == 200)
    #expect(response.contentType.hasPrefix("text/plain; version=0.0.4"))
    return try PrometheusDocument(parsing: String(decoding: response.body, as: UTF8.self))
  }
}

private let n0call =
  #"{"callsign":"N0CALL","ssid":7,"auth":"13023","platform":"android","#
  + #""pushToken":"fcm-token:APA91b-test","wantHistory":true,"since":0}"#
private let syncN0call = #"{"callsign":"N0CALL","ssid":7,"auth":"13023","since":0}"#

@Suite struct MetricsTests {
  /// `aprs_cloud_forward_targets{type,status,reason}`: every type's active and unconfirmed targets, and the
  /// failing and disabled ones by the class of their reason.
  @Test func forwardTargetsAreCountedByStatusAndReason() throws {
    let fixture = try MetricsFixture()
    _ = fixture.api.post("/v1/register", registerBody(["wantHistory": false]))
    let database = fixture.database
    let now = fixture.api.clock.now
    let stored = try #require(
      try database.replaceForwardTargets(
        of: "N0CALL-7",
        with: [
          ForwardDraft(kind: .ntfy, address: "https://ntfy.example.org/a", secret: "tk_1234567890"),
          ForwardDraft(kind: .ntfy, address: "https://ntfy.example.org/b"),
          ForwardDraft(kind: .email, address: "me@example.org"),
          ForwardDraft(kind: .webhook, address: "https://hooks.example.org/x", secret: "0123456789abcdef0"),
        ], now: now))
    try database.disableForwardTargets(
      [ForwardDisable(station: "N0CALL-7", id: stored[0].id, reason: "401", problem: .authRefused)], now: now)
    try database.recordForwardHealth(
      [ForwardHealth(station: "N0CALL-7", id: stored[3].id, failure: ("308 redirect", .redirect))], now: now)
    let document = try fixture.scrape()
    func count(_ type: String, _ status: String, _ reason: String) -> Double? {
      document.value("aprs_cloud_forward_targets", ["type": type, "status": status, "reason": reason])
    }
    #expect(count("ntfy", "disabled", "auth_refused") == 1)
    #expect(count("ntfy", "active", "") == 1)
    #expect(count("email", "unconfirmed", "") == 1)
    #expect(count("webhook", "failing", "redirect") == 1)
    #expect(count("webhook", "active", "") == 0)
    #expect(document.families["aprs_cloud_forward_targets"]?.type == "gauge")
  }

  @Test func metricsIsStrictPrometheusTextWithHelpAndTypeForEveryFamily() throws {
    let fixture = try MetricsFixture()
    fixture.serve("POST", "/v1/register", n0call)
    let document = try fixture.scrape()
    for name in [
      "aprs_cloud_http_requests_total", "aprs_cloud_http_request_duration_seconds", "aprs_cloud_database_up",
      "aprs_cloud_stations", "aprs_cloud_stations_live", "aprs_cloud_devices", "aprs_cloud_messages",
      "aprs_cloud_outbox_pending", "aprs_cloud_listener_connected", "aprs_cloud_listener_reconnects_total",
      "aprs_cloud_listener_duplicates_total", "aprs_cloud_listener_acks_sent_total",
      "aprs_cloud_listener_lines_read_total", "aprs_cloud_listener_filter_stations",
      "aprs_cloud_listener_filter_bytes", "aprs_cloud_listener_filter_entries",
      "aprs_cloud_listener_filter_exact_stations", "aprs_cloud_listener_not_for_us_total",
      "aprs_cloud_pushes_total", "aprs_cloud_push_tokens_deleted_total",
      "aprs_cloud_push_coalescing_ratio", "aprs_cloud_push_provider_state",
    ] {
      #expect(document.families[name] != nil, "\(name) missing")
      #expect(document.families[name]?.help.isEmpty == false, "\(name) has no help")
    }
    #expect(document.familyOrder.allSatisfy { $0.hasPrefix("aprs_cloud_") })
    #expect(document.families["aprs_cloud_http_request_duration_seconds"]?.type == "histogram")
    #expect(
      document.families["aprs_cloud_http_requests_total"]?.help.contains("CGI mode") == true,
      "the help says the request counters are per process")
    // Absent listener and push keys read as zero / off.
    #expect(document.value("aprs_cloud_listener_running") == 0)
    #expect(document.value("aprs_cloud_listener_lines_read_total") == 0)
    #expect(document.value("aprs_cloud_push_provider_state", ["provider": "ios", "state": "off"]) == 1)
  }

  @Test func countersMoveWhenTrafficFlows() throws {
    let fixture = try MetricsFixture()
    let before = try fixture.scrape()
    #expect(before.value("aprs_cloud_stations") == 0)
    #expect(before.value("aprs_cloud_http_requests_total", ["endpoint": "/v1/sync", "status": "200"]) == nil)

    #expect(fixture.serve("POST", "/v1/register", n0call).status == 200)
    #expect(fixture.serve("POST", "/v1/sync", syncN0call).status == 200)
    #expect(fixture.serve("POST", "/v1/sync", syncN0call).status == 200)
    #expect(fixture.serve("POST", "/v1/sync", #"{"callsign":"N0CALL","auth":"1"}"#).status == 401)
    #expect(fixture.serve("POST", "/v1/nope/\(UUID().uuidString)", "{}").status == 404)
    try fixture.api.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "one", msgno: "1")
    try fixture.api.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "two", msgno: "2")

    let after = try fixture.scrape()
    func requests(_ endpoint: String, _ status: String) -> Double? {
      after.value("aprs_cloud_http_requests_total", ["endpoint": endpoint, "status": status])
    }
    #expect(requests("/v1/register", "200") == 1)
    #expect(requests("/v1/sync", "200") == 2)
    #expect(requests("/v1/sync", "401") == 1)
    #expect(requests("other", "404") == 1, "unknown paths share one label")
    #expect(requests("/metrics", "200") == 1, "the scrape before this one")
    #expect(after.value("aprs_cloud_http_request_duration_seconds_count", ["endpoint": "/v1/sync"]) == 3)
    #expect(
      after.value("aprs_cloud_http_request_duration_seconds_bucket", ["endpoint": "/v1/sync", "le": "+Inf"])
        == 3)
    #expect(
      (after.value("aprs_cloud_http_request_duration_seconds_sum", ["endpoint": "/v1/sync"]) ?? -1) >= 0)
    #expect(after.value("aprs_cloud_http_requests_in_flight") == 1, "only the scrape itself")
    #expect(after.value("aprs_cloud_stations") == 1)
    #expect(after.value("aprs_cloud_stations_live") == 1)
    #expect(after.value("aprs_cloud_devices", ["platform": "android"]) == 1)
    #expect(after.value("aprs_cloud_devices", ["platform": "ios"]) == 0)
    #expect(after.value("aprs_cloud_messages", ["direction": "received"]) == 2)
    #expect(after.value("aprs_cloud_outbox_pending") == 2)
    #expect((after.value("aprs_cloud_last_message_timestamp_seconds") ?? 0) > 1_700_000_000)

    // A station past its expiry is registered but no longer live.
    fixture.api.clock.advance(ms: 8 * 86_400_000)
    let later = try fixture.scrape()
    #expect(later.value("aprs_cloud_stations") == 1)
    #expect(later.value("aprs_cloud_stations_live") == 0)
    #expect(later.value("aprs_cloud_devices_live", ["platform": "android"]) == 0)
  }

  @Test func whatTheListenerAndThePushSenderPublishIsExposed() throws {
    let fixture = try MetricsFixture()
    let now = fixture.api.clock.now
    #expect(try fixture.database.acquireLease(holder: "host:42", now: now, ttlMs: 30_000))
    var counts = ListenerCounts()
    counts[.linesRead] = 1234
    counts[.messagesStored] = 5
    counts[.duplicates] = 3
    counts[.acksSent] = 4
    counts[.reconnects] = 2
    counts[.notForUs] = 6
    try fixture.database.publishListenerStatus(
      ListenerStatus(
        state: "connected", connected: true, verified: true, receiveOnly: false,
        server: "rotate.aprs2.net:14580", filterSize: 60, filterBytes: 498, filterEntries: 41,
        filterExactStations: 20,
        lastLineAt: now - 2_000, lineRate: 12.5, updatedAt: now - 1_000, startedAt: now - 60_000,
        counts: counts))
    try fixture.database.publishPushState(.ok, for: .android)
    try fixture.database.publishPushState(.stopped(reason: "APNs refused the key"), for: .ios)
    var push = PushCounters()
    push[.android][.accepted] = 7
    push[.android][.retried] = 1
    push[.ios][.failed] = 2
    push[.android].tokensDeleted = 2
    push.messages = 9
    push.notifications = 3
    try fixture.database.publishPushCounters(push)
    // A provider token row as senders before schema 4 kept it: never shown.
    try fixture.database.setMeta("push.ios.providerToken", "eyJhbGciOiJFUzI1NiJ9.secret")
    let document = try fixture.scrape()
    #expect(document.value("aprs_cloud_listener_running") == 1)
    #expect(document.value("aprs_cloud_listener_connected") == 1)
    #expect(document.value("aprs_cloud_listener_verified") == 1)
    #expect(document.value("aprs_cloud_listener_receive_only") == 0)
    #expect(document.families["aprs_cloud_listener_filter_mode"] == nil)
    #expect(document.value("aprs_cloud_listener_filter_stations") == 60)
    #expect(document.value("aprs_cloud_listener_filter_bytes") == 498)
    #expect(document.value("aprs_cloud_listener_filter_entries") == 41)
    #expect(document.value("aprs_cloud_listener_filter_exact_stations") == 20)
    #expect(document.value("aprs_cloud_listener_line_rate") == 12.5)
    #expect(document.value("aprs_cloud_listener_last_line_age_seconds") == 2)
    #expect(document.value("aprs_cloud_listener_lines_read_total") == 1234)
    #expect(document.value("aprs_cloud_listener_messages_stored_total") == 5)
    #expect(document.value("aprs_cloud_listener_duplicates_total") == 3)
    #expect(document.value("aprs_cloud_listener_acks_sent_total") == 4)
    #expect(document.value("aprs_cloud_listener_reconnects_total") == 2)
    #expect(document.value("aprs_cloud_listener_not_for_us_total") == 6)
    #expect(document.value("aprs_cloud_push_provider_state", ["provider": "android", "state": "ok"]) == 1)
    #expect(document.value("aprs_cloud_push_provider_state", ["provider": "ios", "state": "stopped"]) == 1)
    #expect(document.value("aprs_cloud_push_provider_state", ["provider": "ios", "state": "ok"]) == 0)
    #expect(document.value("aprs_cloud_pushes_total", ["provider": "android", "outcome": "accepted"]) == 7)
    #expect(document.value("aprs_cloud_pushes_total", ["provider": "android", "outcome": "retried"]) == 1)
    #expect(document.value("aprs_cloud_pushes_total", ["provider": "ios", "outcome": "failed"]) == 2)
    #expect(document.value("aprs_cloud_push_tokens_deleted_total", ["provider": "android"]) == 2)
    #expect(document.value("aprs_cloud_push_tokens_deleted_total", ["provider": "ios"]) == 0)
    #expect(document.value("aprs_cloud_push_coalescing_ratio") == 3)
    let text = String(decoding: fixture.serve("GET", "/metrics").body, as: UTF8.self)
    #expect(!text.contains("secret"), "the APNs provider token never appears")

    // The lease lapses: the listener is not running, whatever it last published.
    fixture.api.clock.advance(ms: 31_000)
    let stale = try fixture.scrape()
    #expect(stale.value("aprs_cloud_listener_running") == 0)
    #expect(stale.value("aprs_cloud_listener_connected") == 0)
    #expect(stale.value("aprs_cloud_listener_lines_read_total") == 1234)
  }

  @Test func oddPublishedValuesCannotBreakTheFormat() throws {
    let fixture = try MetricsFixture()
    // Rows no writer of this build makes (another version's, or garbled), written raw under the records' keys.
    try fixture.database.setMetaValues([
      (PushStatus.counterKey(.android, "we\"ird\nOutcome"), "5"),
      (PushStatus.counterKey(.android, "negative"), "-3"),
      (PushStatus.counterKey(.android, "text"), "many"), (ListenerStatus.key(.lineRate), "fast"),
      (ListenerStatus.key(.filterSize), "1e99"), (ListenerStatus.key(ListenerCounter.linesRead), "-1"),
      (ListenerStatus.key(.lastLineAt), "yesterday"),
      (PushStatus.stateKey(.android), "stopped: a \"quoted\"\nreason"),
    ])
    let document = try fixture.scrape()
    #expect(
      document.value("aprs_cloud_pushes_total", ["provider": "android", "outcome": "we_ird_outcome"]) == 5)
    #expect(document.all("aprs_cloud_pushes_total").count == 1)
    #expect(document.value("aprs_cloud_listener_line_rate") == 0)
    #expect(document.value("aprs_cloud_listener_filter_stations") == 0)
    #expect(document.value("aprs_cloud_listener_lines_read_total") == 0)
    #expect(document.value("aprs_cloud_listener_last_line_age_seconds") == nil)
    #expect(
      document.value("aprs_cloud_push_provider_state", ["provider": "android", "state": "stopped"]) == 1)
  }

  @Test func metricsIsGetOnly() throws {
    let fixture = try MetricsFixture()
    let post = fixture.serve("POST", "/metrics", "{}")
    #expect(post.status == 405)
    #expect(post.headers.contains { $0.name == "Allow" && $0.value == "GET" })
    #expect(post.contentType == "application/json")
    #expect(fixture.serve("GET", "/v1/sync").contentType == "application/json")
  }

  /// Without the private listener's mark (the public server, CGI) /metrics does not exist: 404 with
  /// an `error`, whatever the method, and nothing of the metrics in the body.
  @Test func metricsIsNotFoundWithoutThePrivateListener() throws {
    let fixture = try MetricsFixture()
    fixture.serve("POST", "/v1/register", n0call)
    for method in ["GET", "HEAD", "POST"] {
      let response = fixture.serve(method, "/metrics", viaMetricsListener: false)
      #expect(response.status == 404, "\(method)")
      #expect(response.contentType == "application/json")
      let text = String(decoding: response.body, as: UTF8.self)
      #expect(text.hasPrefix(#"{"error":"#) && !text.contains("aprs_cloud_"), "\(text)")
    }
    let document = try fixture.scrape()
    #expect(document.value("aprs_cloud_http_requests_total", ["endpoint": "/metrics", "status": "404"]) == 3)
    #expect(document.value("aprs_cloud_stations") == 1, "the marked scrape still answers")
  }

  @Test func aDatabaseThatDoesNotAnswerStillGivesTheRespondersOwnMetrics() throws {
    let fixture = try MetricsFixture()
    fixture.serve("POST", "/v1/register", n0call)
    fixture.database.close()
    let document = try fixture.scrape()
    #expect(document.value("aprs_cloud_database_up") == 0)
    #expect(
      document.value("aprs_cloud_http_requests_total", ["endpoint": "/v1/register", "status": "200"]) == 1)
    #expect(document.families["aprs_cloud_stations"] == nil)
  }

  @Test func theRegistryCountsEveryRequestFromManyThreads() async throws {
    let registry = RequestMetrics(startedAt: 0)
    await withTaskGroup(of: Void.self) { group in
      for worker in 0..<8 {
        group.addTask {
          for index in 0..<1000 {
            registry.begin()
            registry.record(
              path: worker % 2 == 0 ? "/v1/sync" : "/v1/register", status: index % 10 == 0 ? 503 : 200,
              microseconds: Int64(index * 7))
          }
        }
      }
    }
    let database = try Database(path: ":memory:")
    let handler = APIHandler(database: database, metrics: registry, clock: { 0 })
    let response = handler.handle(APIRequest(method: "GET", path: "/metrics", viaMetricsListener: true))
    let document = try PrometheusDocument(parsing: String(decoding: response.body, as: UTF8.self))
    let total = document.all("aprs_cloud_http_requests_total").reduce(0) { $0 + $1.value }
    #expect(total == 8000)
    #expect(
      document.value("aprs_cloud_http_requests_total", ["endpoint": "/v1/sync", "status": "503"]) == 400)
    #expect(document.value("aprs_cloud_http_requests_in_flight") == 0)
    #expect(
      document.value("aprs_cloud_http_request_duration_seconds_count", ["endpoint": "/v1/register"]) == 4000)
    // 0…6993 µs: 72 of each worker's 1000 are at most 500 µs.
    let fastest = document.value(
      "aprs_cloud_http_request_duration_seconds_bucket", ["endpoint": "/v1/register", "le": "0.0005"])
    #expect(fastest == Double(4 * 72))
  }
}
