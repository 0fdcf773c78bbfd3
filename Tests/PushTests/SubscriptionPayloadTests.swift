import APRS
import JSON
import Testing

@testable import Push
@testable import Store

/// The pure side of subscription pushes: who sees which entry, the priority, the banner of each kind with and
/// without previews, the data keys, the collapse id, the providers' priority headers, and the quiet-hours split.
@Suite struct SubscriptionPayloadTests {
  private func content(
    _ entry: SubscriptionEntry?, to: String? = "BLN1WX", from peer: String = "WX1ABC",
    text: String = "Net at 8",
    count: Int = 1, senders: [String] = [], priority: PushPriority = .low
  ) -> PushContent {
    PushContent(
      station: "N0CALL-7", fromCall: peer, seqId: nil, text: text, count: count, senders: senders, to: to,
      entry: entry, priority: priority)
  }

  private func outbox(
    _ id: Int64, to: String? = nil, entry: SubscriptionEntry? = nil, from peer: String = "WX1ABC"
  )
    -> OutboxEntry
  {
    OutboxEntry(
      id: id, station: "N0CALL-7", messageID: id,
      message: StoredMessage(
        direction: .received, peer: peer, text: "m\(id)", msgno: nil, timestamp: id, to: to, entry: entry),
      createdAt: 0, attempts: 0, nextAttemptAt: 0)
  }

  private let bulletin = SubscriptionEntry(kind: .bulletin, subscription: "s1")
  private let emergency = SubscriptionEntry(kind: .watch, subscription: "s2", event: .emergency)

  @Test func eachDeviceSeesItsRingsAndOnlyNonUrgentEntriesGoAtLowPriority() {
    let direct = outbox(1)
    let otherSSID = outbox(2, to: "N0CALL-9")
    let entry = outbox(3, to: "BLN1WX", entry: bulletin)
    let urgent = outbox(4, entry: emergency)
    let all = [direct, otherSSID, entry, urgent]
    #expect(PushAudience.visible(all, to: []).map(\.id) == [1])
    #expect(PushAudience.visible(all, to: .ssids).map(\.id) == [1, 2])
    #expect(PushAudience.visible(all, to: .subscriptions).map(\.id) == [1, 3, 4])
    #expect(PushAudience.visible(all, to: [.ssids, .subscriptions]).map(\.id) == [1, 2, 3, 4])
    #expect(PushAudience.priority(of: [entry]) == .low)
    #expect(PushAudience.priority(of: [entry, outbox(5, entry: bulletin)]) == .low)
    #expect(PushAudience.priority(of: [entry, urgent]) == .high)
    #expect(PushAudience.priority(of: [entry, direct]) == .high)
    #expect(PushAudience.priority(of: [otherSSID]) == .high)
  }

  @Test func whatTheStationsRadioAnsweredGoesQuietlyUnlessTheOwnerAskedForAPush() {
    var answered = outbox(6)
    answered.message.answeredBy = .air
    let direct = outbox(1)
    let entry = outbox(3, to: "BLN1WX", entry: bulletin)
    #expect(PushAudience.priority(of: [answered]) == .low)
    #expect(PushAudience.priority(of: [answered], airAnswered: .quiet) == .low)
    #expect(PushAudience.priority(of: [answered, entry]) == .low)
    #expect(PushAudience.priority(of: [answered], airAnswered: .push) == .high)
    #expect(PushAudience.priority(of: [answered, direct]) == .high)
  }

  @Test func eachKindHasItsBannerAndWithoutPreviewsNoText() {
    let cases: [(SubscriptionEntry, String?, String, String, String)] = [
      (bulletin, "BLN1WX", "WX1ABC", "Bulletin BLN1WX from WX1ABC", "New APRS bulletin"),
      (
        SubscriptionEntry(kind: .group, subscription: "s3"), "SLCARES", "KJ7ABC", "SLCARES: KJ7ABC",
        "New APRS group message"
      ),
      (
        SubscriptionEntry(kind: .nws, subscription: "s4"), "NWS-WARN", "NWSBOX", "NWS-WARN from NWSBOX",
        "New NWS alert"
      ),
      (
        SubscriptionEntry(kind: .watch, subscription: "s5", event: .heard), nil, "K1ABC", "K1ABC heard",
        "A watched station was heard"
      ),
      (
        SubscriptionEntry(kind: .watch, subscription: "s5", event: .silent), nil, "K1ABC", "K1ABC is silent",
        "A watched station went silent"
      ),
      (emergency, nil, "K1ABC", "EMERGENCY: K1ABC", "A watched station reported an emergency"),
    ]
    for (entry, to, peer, title, generic) in cases {
      let push = content(entry, to: to, from: peer, text: "the text")
      #expect(NotificationText.make(push, preview: true) == NotificationText(title: title, body: "the text"))
      #expect(NotificationText.make(push, preview: false) == NotificationText(title: title, body: generic))
    }
    let several = content(bulletin, count: 3, senders: ["WX1ABC", "OH7AA"])
    #expect(
      NotificationText.make(several, preview: true)
        == NotificationText(title: "3 new APRS messages and alerts", body: "From WX1ABC and OH7AA"))
    let urgent = content(emergency, to: nil, from: "K1ABC", text: "Mic-E emergency", count: 4)
    #expect(NotificationText.make(urgent, preview: true).title == "EMERGENCY: K1ABC", "an emergency is named")
  }

  @Test func theDataKeysNameTheEntryAndMessagesKeepTheirs() {
    let push = content(bulletin)
    #expect(
      PushPayload.data(push).map { "\($0.key)=\($0.value)" } == [
        "type=bulletin", "subscription=s1", "fromCall=WX1ABC", "to=BLN1WX", "count=1",
      ])
    let watch = content(emergency, to: nil, from: "K1ABC")
    #expect(
      PushPayload.data(watch).map { "\($0.key)=\($0.value)" } == [
        "type=watch", "subscription=s2", "event=emergency", "fromCall=K1ABC", "to=N0CALL-7", "count=1",
      ])
    let message = PushContent(station: "N0CALL-7", fromCall: "OH7AA", seqId: "7", text: "hi", count: 1)
    #expect(
      PushPayload.data(message).map(\.key) == ["fromCall", "to", "seqId", "count"]
        && message.priority == .high && message.collapseID == "aprs-N0CALL-7")
    #expect(push.collapseID == "aprs-N0CALL-7-subs" && push.collapseName == "N0CALL-7-subs")
    let long = PushContent(
      station: String(repeating: "X", count: 70), fromCall: "A", seqId: nil, text: "", count: 1,
      entry: bulletin)
    #expect(long.collapseID.utf8.count == PushPayload.maxCollapseIDBytes)
  }

  @Test func theProvidersCarryThePriority() throws {
    for (priority, fcm, apns, urgency) in [
      (PushPriority.low, "normal", "5", "low"), (.high, "high", "10", "high"),
    ] {
      let push = content(bulletin, priority: priority)
      let body = try PushPayload.fcm(push, token: "t", preview: true, ttlSeconds: 60).get()
      let json = try parseObject(body.bytes)
      #expect(json.string(at: ["message", "android", "priority"]) == fcm)
      #expect(json.string(at: ["message", "android", "collapse_key"]) == "aprs-N0CALL-7-subs")
      let headers = PushPayload.apnsHeaders(
        station: "N0CALL-7", bundleId: "b", expiration: 1, collapseID: push.collapseID, priority: priority)
      #expect(headers.first { $0.0 == "apns-priority" }?.1 == apns)
      #expect(headers.first { $0.0 == "apns-push-type" }?.1 == "alert")
      #expect(
        WebPushPayload.headers(ttlSeconds: 60, priority: priority).map { "\($0.0): \($0.1)" } == [
          "ttl: 60", "urgency: \(urgency)",
        ])
    }
    #expect(
      PushPayload.apnsHeaders(station: "N0CALL-7", bundleId: "b", expiration: 1)[2] == ("apns-priority", "10")
    )
  }

  @Test func quietHoursAndMuteHoldEntriesUnlessTheirSubscriptionBypassesAndAnEmergencyOnlyAMute() throws {
    let batch = PushBatch(
      station: "N0CALL-7",
      entries: [
        outbox(1, to: "BLN1WX", entry: bulletin, from: "KJ7ABC"),
        outbox(2, to: "BLN2WX", entry: SubscriptionEntry(kind: .bulletin, subscription: "s9")),
        outbox(3, entry: emergency), outbox(4, from: "KJ7ABC-7"), outbox(5, from: "OH7AA"),
      ])
    let always = try QuietHours(start: 0, end: 1439, utcOffsetMinutes: 0)
    let bypass = try CallList(validating: ["KJ7ABC"], field: "quietBypass")
    let quiet = QuietSplit.split(
      batch, settings: StationSettings(quietHours: always, quietBypass: bypass), bypassing: ["s9"],
      now: 60_000)
    // The quietBypass sender's message goes, its bulletin does not; the bypass subscription's and the emergency go.
    #expect(quiet.held.map(\.id) == [1, 5] && quiet.batch?.ids == [2, 3, 4] && quiet.reason == .quietHours)
    let muted = QuietSplit.split(
      batch, settings: StationSettings(mutedUntil: 60_001, quietBypass: bypass), bypassing: ["s9"],
      now: 60_000)
    #expect(muted.held.map(\.id) == [1, 3, 4, 5] && muted.batch?.ids == [2] && muted.reason == .muted)
    let free = QuietSplit.split(batch, settings: .defaults, now: 60_000)
    #expect(free.held.isEmpty && free.batch == batch)
  }
}
