import API
import Foundation
import Store
import TestSupport
import Testing

/// The commits the listener acts on wake it (`APIHandler.wakeListener`, sent to its wake socket by the responder):
/// registrations, settings, claims and sends once each after their commit; a sync only when it marked `device`
/// ACKs pulled; a refused request never.
@Suite struct ListenerWakeAPITests {
  @Test func registrationsSettingsAndUnregistrationsWakeTheWatcher() throws {
    let fixture = try APIFixture.withClaimedStation()
    // The register, then the claim.
    #expect(fixture.wakes.take() == [.registrations, .registrations])
    #expect(fixture.settings(["ackPolicy": "device"]).status == 200)
    // Settings also wake the sends: a net's join or leave goes out at once.
    #expect(fixture.wakes.take() == [.registrations, .sends])
    let beat = fixture.post(
      "/v1/heartbeat",
      APIFixture.settingsIdentity.merging(["platform": "android", "pushToken": "fcm-token:APA91b-test"]) {
        $1
      })
    #expect(beat.status == 200, "\(beat.text)")
    #expect(fixture.wakes.take() == [.registrations])
    #expect(fixture.post("/v1/unregister", APIFixture.settingsIdentity).status == 200)
    #expect(fixture.wakes.take() == [.registrations])
  }

  @Test func aRefusedRequestAndAReadWakeNothing() throws {
    let fixture = try APIFixture()
    #expect(fixture.post("/v1/register", registerBody(["auth": "12345"])).status == 401)
    #expect(
      fixture.post("/v1/sync", ["callsign": "N0CALL", "ssid": 7, "auth": "13023", "since": 0]).status == 200)
    #expect(fixture.post("/v1/info", [:]).status == 200)
    #expect(fixture.wakes.take().isEmpty)
  }

  @Test func aSendWakesTheSender() throws {
    let fixture = try SendEndpointTests.fixture()
    _ = fixture.wakes.take()
    let reply = fixture.post("/v1/send", SendEndpointTests.body(["clientId": "c1"]))
    #expect(reply.status == 200, "\(reply.text)")
    #expect(fixture.wakes.take() == [.sends])
    // Refused (the same clientId is a retry answered from the store; a text too long is refused): no new wake
    // for the refusal.
    #expect(
      fixture.post("/v1/send", SendEndpointTests.body(["text": String(repeating: "x", count: 200)])).status
        == 400)
    #expect(fixture.wakes.take().isEmpty)
  }

  @Test func aSyncThatMarksDeviceAcksPulledWakesTheDeviceAckWorker() throws {
    let fixture = try APIFixture.withClaimedStation()
    #expect(fixture.settings(["ackPolicy": "device"]).status == 200)
    let sync = APIFixture.settingsIdentity.merging(["since": 0]) { $1 }
    _ = fixture.post("/v1/sync", sync)
    _ = fixture.wakes.take()
    // Nothing kept to ACK: the sync marks nothing and wakes nothing.
    try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC-7", text: "no ack kept")
    _ = fixture.post("/v1/sync", sync)
    #expect(fixture.wakes.take().isEmpty)
    guard case .stored(let id, _)? = try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC-7", text: "m1").first
    else { throw TestFailure("not stored") }
    try fixture.database.recordDeviceAcks([
      PendingDeviceAck(messageID: id, station: "N0CALL-7", key: "k1", line: "ack1\r\n")
    ])
    #expect(fixture.post("/v1/sync", sync).messages.count == 2)
    #expect(fixture.wakes.take() == [.deviceAcks])
  }
}

@Suite struct ListenerWakeMetricsTests {
  @Test func theWakesSentAndFailedAreCountedForMetrics() throws {
    let api = try APIFixture()
    let registry = RequestMetrics(startedAt: 0)
    let clock = api.clock
    let handler = APIHandler(database: api.database, metrics: registry, clock: { clock.now })
    let metrics = { () -> String in
      String(
        decoding: handler.handle(
          APIRequest(method: "GET", path: "/metrics", body: [], viaMetricsListener: true)
        )
        .body, as: UTF8.self)
    }
    // A process that sends none (CGI without the sender): no family.
    #expect(!metrics().contains("aprs_cloud_listener_wakes_total"))
    registry.countListenerWakes { (sent: 7, failed: 2) }
    let text = metrics()
    #expect(text.contains("# TYPE aprs_cloud_listener_wakes_total counter"))
    #expect(text.contains(#"aprs_cloud_listener_wakes_total{result="sent"} 7"#))
    #expect(text.contains(#"aprs_cloud_listener_wakes_total{result="failed"} 2"#))
  }
}
