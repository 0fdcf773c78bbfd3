import API
import Store
import TestSupport
import Testing

/// The listener's message outcomes in `/metrics`: stored, duplicate and blocked (a blocked sender's messages are
/// counted nowhere else).
@Suite struct SettingsMetricsTests {
  @Test func messagesAreCountedByOutcomeBlockedIncluded() throws {
    let fixture = try APIFixture()
    var counts = ListenerCounts()
    counts[.messagesStored] = 5
    counts[.duplicates] = 3
    counts[.blocked] = 2
    try fixture.database.publishListenerStatus(ListenerStatus(updatedAt: fixture.clock.now, counts: counts))
    let response = fixture.handler.handle(
      APIRequest(method: "GET", path: "/metrics", viaMetricsListener: true))
    #expect(response.status == 200)
    let document = try PrometheusDocument(parsing: String(decoding: response.body, as: UTF8.self))
    let family = try #require(document.families["aprs_cloud_listener_messages_total"])
    #expect(family.type == "counter" && family.help.contains("blocked"))
    #expect(document.value("aprs_cloud_listener_messages_total", ["outcome": "stored"]) == 5)
    #expect(document.value("aprs_cloud_listener_messages_total", ["outcome": "duplicate"]) == 3)
    #expect(document.value("aprs_cloud_listener_messages_total", ["outcome": "blocked"]) == 2)
    #expect(document.families["aprs_cloud_listener_blocked_total"] == nil)
    #expect(document.value("aprs_cloud_listener_messages_stored_total") == 5)
  }
}

/// Subscription entries in `/metrics`: stored (the listener) and pushed (the push sender), one family each, by
/// kind, every kind present.
@Suite struct SubscriptionMetricsTests {
  @Test func entriesStoredAndPushedAreCountedByKind() throws {
    let fixture = try APIFixture()
    var counts = ListenerCounts()
    counts[.subscriptionEntries(.bulletin)] = 4
    counts[.subscriptionEntries(.watch)] = 1
    counts[.messagesStored] = 2
    try fixture.database.publishListenerStatus(ListenerStatus(updatedAt: fixture.clock.now, counts: counts))
    var push = PushCounters()
    push.subscriptions = [.nws: 3]
    try fixture.database.publishPushCounters(push)
    let response = fixture.handler.handle(
      APIRequest(method: "GET", path: "/metrics", viaMetricsListener: true))
    let document = try PrometheusDocument(parsing: String(decoding: response.body, as: UTF8.self))
    let stored = "aprs_cloud_listener_subscription_entries_total"
    #expect(document.families[stored]?.type == "counter")
    #expect(document.value(stored, ["kind": "bulletin"]) == 4)
    #expect(document.value(stored, ["kind": "group"]) == 0)
    #expect(document.value(stored, ["kind": "watch"]) == 1)
    #expect(document.value("aprs_cloud_listener_messages_stored_total") == 2)
    #expect(document.families["aprs_cloud_listener_bulletin_entries_total"] == nil)
    #expect(document.value("aprs_cloud_subscription_pushes_total", ["kind": "nws"]) == 3)
    #expect(document.value("aprs_cloud_subscription_pushes_total", ["kind": "bulletin"]) == 0)
  }
}
