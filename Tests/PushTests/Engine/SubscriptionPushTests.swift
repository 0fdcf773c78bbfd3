import APRS
import Foundation
import JSON
import Push
import Store
import Testing

/// Pushes of subscription entries (bulletins, group and NWS messages, watch events) through the real sender and
/// the fake providers: only devices registered with `want:["subscriptions"]` get them, at low priority (FCM
/// `normal`, APNs 5, Web Push `Urgency: low`) with `type`, `subscription` and `event`, under a collapse id of
/// their own; a device without the want gets exactly the pushes it always got. Quiet hours and mute hold them
/// unless the subscription bypasses; a watched station's emergency goes at high priority and through quiet hours,
/// not through a mute. The sender counts them by kind.
@Suite(.serialized) struct SubscriptionPushTests {
  static let station = "N0CALL-7"

  /// Registers a device of `station` with `wants`.
  static func register(
    _ database: Database, token: String, platform: DevicePlatform = .android, wants: Wants,
    keys: WebPushKeys? = nil, now: Int64
  ) throws {
    _ = try database.upsertStation(
      StationUpsert(
        address: station, base: "N0CALL", ssid: 7, platform: platform, pushToken: token, ackMessages: false,
        isRegistration: true, webPushKeys: keys, wants: wants),
      now: now)
  }

  /// The station's subscriptions, replaced by `drafts`; their ids in order.
  static func subscribe(_ database: Database, _ drafts: [SubscriptionDraft], now: Int64) throws -> [String] {
    try #require(try database.replaceSubscriptions(of: station, with: drafts, now: now)).map(\.id)
  }

  static func bulletin(_ subscription: String, _ text: String) -> IncomingMessage {
    IncomingMessage(
      station: station, peer: "WX1ABC", text: text, msgno: nil, dedupKey: "bln|" + UUID().uuidString,
      dedupWindowMs: 60_000, to: "BLN1WX",
      entry: SubscriptionEntry(kind: .bulletin, subscription: subscription))
  }

  static func watch(_ subscription: String, _ event: WatchEventName, _ text: String) -> IncomingMessage {
    IncomingMessage(
      station: station, peer: "K1ABC-9", text: text, msgno: nil, dedupKey: "watch|" + UUID().uuidString,
      dedupWindowMs: 60_000,
      entry: SubscriptionEntry(kind: .watch, subscription: subscription, event: event))
  }

  private func store(_ rig: PushRig, _ messages: [IncomingMessage]) throws {
    _ = try rig.database.storeMessages(messages, now: rig.clock.now())
    rig.service?.notify()
  }

  private func data(_ request: JSONObject) throws -> [String: String] {
    let data = try object(request.value(at: ["body", "message", "data"]))
    var result: [String: String] = [:]
    for (key, value) in data.members { if case .string(let text) = value { result[key] = text } }
    return result
  }

  /// Quiet hours from an hour before now to an hour after (UTC), so they hold whenever the test runs.
  private func quietNow(_ rig: PushRig) throws -> QuietHours {
    let minute = Int((rig.clock.now() / 60_000) % 1440)
    return try QuietHours(start: (minute + 1380) % 1440, end: (minute + 60) % 1440, utcOffsetMinutes: 0)
  }

  @Test func onlyOptedInDevicesGetSubscriptionEntriesAtLowPriorityAndMessagesStayAsTheyWere() throws {
    let rig = try PushRig()
    defer { rig.close() }
    let now = rig.clock.now()
    try Self.register(rig.database, token: "old-app", wants: [], now: now)
    try Self.register(rig.database, token: "new-app", wants: .subscriptions, now: now)
    try Self.register(rig.database, token: apnsToken(1), platform: .ios, wants: .subscriptions, now: now)
    let ids = try Self.subscribe(
      rig.database, [SubscriptionDraft(rule: .bulletin(try BulletinPattern("BLN*")))], now: now)
    try rig.start()

    // A bulletin alone: the old app gets nothing; the opted-in devices a low-priority push of its own.
    try store(rig, [Self.bulletin(ids[0], "Net tonight 20:00 on 146.52")])
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    #expect(try rig.fake.wait("apns", count: 1, status: 200))
    #expect(try rig.eventuallyEmpty())
    #expect(try rig.fake.requests("fcm", token: "old-app").isEmpty)
    let fcm = try #require(try rig.fake.requests("fcm", token: "new-app").first)
    #expect(
      try data(fcm) == [
        "type": "bulletin", "subscription": ids[0], "fromCall": "WX1ABC", "to": "BLN1WX", "count": "1",
      ])
    #expect(fcm.string(at: ["body", "message", "android", "priority"]) == "normal")
    #expect(fcm.string(at: ["body", "message", "android", "collapse_key"]) == "aprs-N0CALL-7-subs")
    #expect(fcm.string(at: ["body", "message", "notification", "title"]) == "Bulletin BLN1WX from WX1ABC")
    #expect(fcm.string(at: ["body", "message", "notification", "body"]) == "Net tonight 20:00 on 146.52")
    let apns = try #require(try rig.fake.requests("apns", token: apnsToken(1)).first)
    #expect(apns.string(at: ["headers", "apns-priority"]) == "5")
    #expect(apns.string(at: ["headers", "apns-push-type"]) == "alert")
    #expect(apns.string(at: ["headers", "apns-collapse-id"]) == "aprs-N0CALL-7-subs")
    #expect(apns.string(at: ["body", "type"]) == "bulletin" && apns.string(at: ["body", "to"]) == "BLN1WX")

    // A message: every device gets it at high priority; the old app's push is what it always was, the
    // opted-in devices' count includes the bulletin they have not pulled.
    try rig.store(Self.station, ["hello"], from: "OH7AA-1")
    #expect(try rig.fake.wait("fcm", count: 3, status: 200))
    #expect(try rig.fake.wait("apns", count: 2, status: 200))
    #expect(try rig.eventuallyEmpty())
    let old = try #require(try rig.fake.requests("fcm", token: "old-app").first)
    #expect(try data(old) == ["fromCall": "OH7AA-1", "to": "N0CALL-7", "seqId": "1", "count": "1"])
    #expect(old.string(at: ["body", "message", "android", "priority"]) == "high")
    #expect(old.string(at: ["body", "message", "android", "collapse_key"]) == "aprs-N0CALL-7")
    #expect(old.string(at: ["body", "message", "notification", "title"]) == "OH7AA-1")
    let new = try #require(try rig.fake.requests("fcm", token: "new-app").last)
    #expect(try data(new) == ["fromCall": "OH7AA-1", "to": "N0CALL-7", "seqId": "1", "count": "2"])
    #expect(new.string(at: ["body", "message", "android", "priority"]) == "high")
    #expect(new.string(at: ["body", "message", "notification", "title"]) == "2 new APRS messages")
    let apnsMessage = try #require(try rig.fake.requests("apns", token: apnsToken(1)).last)
    #expect(apnsMessage.string(at: ["headers", "apns-priority"]) == "10")
    #expect(apnsMessage.string(at: ["headers", "apns-collapse-id"]) == "aprs-N0CALL-7")

    // The sender counted the bulletin once, by kind.
    #expect(
      try eventually { try rig.database.pushStatus().counters.subscriptions == [.bulletin: 1] },
      "\((try? rig.database.pushStatus().counters.subscriptions) ?? [:])")
  }

  @Test func anEmergencyGoesAtHighPriorityThroughQuietHoursButNotThroughAMute() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    let now = rig.clock.now()
    try Self.register(rig.database, token: "new-app", wants: .subscriptions, now: now)
    let ids = try Self.subscribe(
      rig.database,
      [
        SubscriptionDraft(rule: .bulletin(try BulletinPattern("BLN*"))),
        SubscriptionDraft(rule: .watch(WatchRule(call: "K1ABC-9", silentFor: 3600, emergency: true))),
      ], now: now)
    try rig.database.updateStationSettings(
      Self.station, StationSettingsUpdate(quietHours: .some(try quietNow(rig))), now: now)
    try rig.start()

    // Quiet hours: the bulletin and the watch's silence are held, the emergency goes out at once.
    try store(rig, [Self.bulletin(ids[0], "wx"), Self.watch(ids[1], .silent, "K1ABC-9 silent for 1 h")])
    #expect(try rig.eventuallyEmpty())
    #expect(try !rig.fake.wait("fcm", count: 1, timeoutMs: 1_000))
    try store(rig, [Self.watch(ids[1], .emergency, "K1ABC-9 Mic-E emergency at 42.1N 71.2W")])
    #expect(try rig.fake.wait("fcm", count: 1, status: 200), "\(rig.log())")
    let request = try #require(try rig.fake.requests("fcm").last)
    #expect(
      try data(request) == [
        "type": "watch", "subscription": ids[1], "event": "emergency", "fromCall": "K1ABC-9",
        "to": "N0CALL-7",
        "count": "3",
      ])
    #expect(request.string(at: ["body", "message", "android", "priority"]) == "high")
    #expect(request.string(at: ["body", "message", "notification", "title"]) == "EMERGENCY: K1ABC-9")
    #expect(
      request.string(at: ["body", "message", "notification", "body"])
        == "K1ABC-9 Mic-E emergency at 42.1N 71.2W")
    #expect(try rig.eventuallyEmpty())

    // Muted: even an emergency is held.
    try rig.database.updateStationSettings(
      Self.station, StationSettingsUpdate(mutedUntil: now + 3_600_000, quietHours: .some(nil)), now: now)
    try store(rig, [Self.watch(ids[1], .emergency, "K1ABC-9 still in an emergency")])
    #expect(try rig.eventuallyEmpty())
    #expect(try !rig.fake.wait("fcm", count: 2, timeoutMs: 1_000))
    #expect(rig.log().contains("push held"))
    #expect(try rig.database.pushStatus().counters.subscriptions == [.watch: 1])
  }

  @Test func aBypassSubscriptionGoesThroughQuietHoursAndAMuteAndTheOthersDoNot() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    let now = rig.clock.now()
    try Self.register(rig.database, token: "new-app", wants: .subscriptions, now: now)
    let ids = try Self.subscribe(
      rig.database,
      [
        SubscriptionDraft(rule: .bulletin(try BulletinPattern("BLN?WX")), bypass: true),
        SubscriptionDraft(rule: .bulletin(try BulletinPattern("BLN*"))),
      ], now: now)
    try rig.database.updateStationSettings(
      Self.station,
      StationSettingsUpdate(
        quietHours: .some(try quietNow(rig)),
        quietBypass: try CallList(validating: ["WX1ABC"], field: "quietBypass")),
      now: now)
    try rig.start()
    // Quiet hours: the bypass subscription's bulletin goes out; the other's is held (a sender in quietBypass
    // lets its messages through, not its subscription entries).
    try store(rig, [Self.bulletin(ids[1], "held in quiet hours")])
    #expect(try rig.eventuallyEmpty())
    #expect(try !rig.fake.wait("fcm", count: 1, timeoutMs: 1_000))
    try store(rig, [Self.bulletin(ids[0], "severe weather")])
    #expect(try rig.fake.wait("fcm", count: 1, status: 200), "\(rig.log())")
    var request = try #require(try rig.fake.requests("fcm").last)
    #expect(try data(request)["subscription"] == ids[0])
    #expect(request.string(at: ["body", "message", "android", "priority"]) == "normal")
    #expect(
      request.string(at: ["body", "message", "notification", "title"]) == "2 new APRS messages and alerts")
    #expect(try rig.eventuallyEmpty())

    // Muted too: still through; the other subscription's bulletin still held.
    try rig.database.updateStationSettings(
      Self.station, StationSettingsUpdate(mutedUntil: now + 3_600_000), now: now)
    try store(rig, [Self.bulletin(ids[1], "held while muted")])
    #expect(try rig.eventuallyEmpty())
    #expect(try !rig.fake.wait("fcm", count: 2, timeoutMs: 1_000))
    try store(rig, [Self.bulletin(ids[0], "tornado warning")])
    #expect(try rig.fake.wait("fcm", count: 2, status: 200), "\(rig.log())")
    request = try #require(try rig.fake.requests("fcm").last)
    #expect(try data(request)["subscription"] == ids[0] && data(request)["count"] == "4")
    #expect(try rig.eventuallyEmpty())
    #expect(
      try eventually { try rig.database.pushStatus().counters.subscriptions == [.bulletin: 2] },
      "only the bulletins pushed are counted")
  }

  @Test func aWebPushSubscriptionPushIsLowUrgencyUnderATopicOfItsOwn() throws {
    let rig = try WebPushRig()
    defer { rig.close() }
    let now = rig.clock.now()
    let subscription = try rig.fake.subscribe()
    let keys = try #require(
      subscription.p256dh.flatMap { p256dh in
        subscription.auth.flatMap { WebPushKeys(p256dh: p256dh, auth: $0) }
      }
    )
    try Self.register(
      rig.database, token: subscription.endpoint, platform: .webpush, wants: .subscriptions, keys: keys,
      now: now)
    let ids = try Self.subscribe(
      rig.database,
      [SubscriptionDraft(rule: .watch(WatchRule(call: "K1ABC-9", heardAfter: 3600, emergency: true)))],
      now: now)
    try rig.start()
    _ = try rig.database.storeMessages([Self.watch(ids[0], .heard, "K1ABC-9 heard again")], now: now)
    rig.service?.notify()
    #expect(try rig.fake.wait(subscription, count: 1, status: 201))
    try rig.store(Self.station, ["a message"], from: "OH7AA-1")
    #expect(try rig.fake.wait(subscription, count: 2, status: 201))
    let requests = try rig.fake.requests(subscription)
    let watch = try object(requests[0].value(at: ["json"]))
    #expect(string(watch["title"]) == "K1ABC-9 heard" && string(watch["body"]) == "K1ABC-9 heard again")
    #expect(string(watch["type"]) == "watch" && string(watch["event"]) == "heard")
    #expect(string(watch["subscription"]) == ids[0] && string(watch["to"]) == "N0CALL-7")
    #expect(requests[0].string(at: ["headers", "urgency"]) == "low")
    #expect(requests[1].string(at: ["headers", "urgency"]) == "high")
    let topics = requests.map { $0.string(at: ["headers", "topic"]) }
    #expect(topics[0] != nil && topics[1] != nil && topics[0] != topics[1], "\(topics)")
  }
}
