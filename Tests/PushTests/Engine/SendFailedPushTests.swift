import JSON
import TestSupport
import Testing

@testable import Push
@testable import Store

/// The `sendFailed` push (docs/protocol.md "Sending messages"): a message the station sent ended rejected or expired.
@Suite struct SendFailedPushTests {
  static let rejected = PushContent.sendFailed(
    station: "OH7LZB-9", to: "KJ7ABC-7", seqId: "12", text: "Are you there?", state: .rejected)
  static let expired = PushContent.sendFailed(
    station: "OH7LZB-9", to: "KJ7ABC-7", seqId: "13", text: "Hello?", state: .expired)

  @Test func theDataCarryKindToSeqIdAndStateAsStringsInBothProviders() throws {
    let expected: [String: String] = [
      "kind": "sendFailed", "to": "KJ7ABC-7", "seqId": "12", "state": "rejected", "fromCall": "KJ7ABC-7",
    ]
    guard
      case .success(let fcm) = PushPayload.fcm(Self.rejected, token: "tok", preview: true, ttlSeconds: 60),
      case .success(let apns) = PushPayload.apns(Self.rejected, preview: true, messageID: "m:1")
    else {
      Issue.record("did not fit")
      return
    }
    let message = try #require(fcmObject(fcm.bytes, "message"))
    let data = try #require(fcmObject(message, "data"))
    #expect(strings(data) == expected)
    #expect(!data.keys.contains { PushPayload.isReserved($0) })
    let payload = try #require(parsed(apns.bytes))
    var top = strings(payload)
    top["gcm.message_id"] = nil
    top["aps"] = nil
    #expect(top == expected)
    #expect(payload["gcm.message_id"] == .string("m:1"))
  }

  @Test func theBannerSaysWhatHappenedAndNeverHidesAMessageBanner() {
    #expect(
      NotificationText.make(Self.rejected, preview: true)
        == NotificationText(title: "KJ7ABC-7 rejected your message", body: "Are you there?"))
    #expect(NotificationText.make(Self.expired, preview: false).title == "No answer from KJ7ABC-7")
    #expect(NotificationText.make(Self.expired, preview: false).body.contains("never acknowledged"))
    let messages = PushContent(station: "OH7LZB-9", fromCall: "KJ7ABC-7", seqId: "1", text: "hi", count: 1)
    #expect(Self.rejected.collapseID != messages.collapseID)
    #expect(messages.collapseID == PushPayload.collapseID(station: "OH7LZB-9"))
    let headers = PushPayload.apnsHeaders(
      station: "OH7LZB-9", bundleId: "b", expiration: 1, collapseID: Self.rejected.collapseID)
    #expect(headers.contains { $0.0 == "apns-collapse-id" && $0.1 == Self.rejected.collapseID })
  }

  @Test func aSendFailedNoticeIsABurstOfItsOwn() {
    var coalescer = Coalescer(windowMs: 0, maxAgeMs: 3_600_000)
    func entry(_ id: Int64, _ direction: MessageDirection, state: SendState? = nil) -> OutboxEntry {
      OutboxEntry(
        id: id, station: "OH7LZB-9", messageID: id,
        message: StoredMessage(
          direction: direction, peer: "KJ7ABC-7", text: "m\(id)", msgno: "\(id)", timestamp: 1_000 + id,
          state: state),
        createdAt: 1_000, attempts: 0, nextAttemptAt: 1_000)
    }
    let plan = coalescer.plan(
      due: [entry(1, .received), entry(2, .sent, state: .expired), entry(3, .received)], now: 2_000)
    #expect(plan.batches.map(\.ids) == [[1, 3], [2]])
    #expect(plan.batches.allSatisfy { $0.station == "OH7LZB-9" })
  }

  private func parsed(_ bytes: [UInt8]) -> JSONObject? {
    if case .object(let object)? = try? JSONParser.parse(bytes) { return object }
    return nil
  }

  private func fcmObject(_ bytes: [UInt8], _ key: String) -> JSONObject? {
    parsed(bytes).flatMap { fcmObject($0, key) }
  }

  private func fcmObject(_ object: JSONObject, _ key: String) -> JSONObject? {
    if case .object(let inner)? = object[key] { return inner }
    return nil
  }

  private func strings(_ object: JSONObject) -> [String: String] {
    var result: [String: String] = [:]
    for (key, value) in object.members {
      if case .string(let text) = value { result[key] = text } else { result[key] = "<\(value.typeName)>" }
    }
    return result
  }
}

/// The `sendFailed` notice through the push sender and the fake FCM: an expired send's outbox row becomes a push
/// of its own, with its own collapse key, and a message that arrives meanwhile keeps its usual push.
@Suite(.serialized) struct SendFailedDeliveryTests {
  @Test func anExpiredSendIsPushedAsSendFailedBesideAMessagePush() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    try rig.register("OH7LZB-9", [(.android, "fcm-token-1")])
    let creation = try rig.database.createSend(
      NewSend(station: "OH7LZB-9", addressee: "KJ7ABC-7", text: "Anyone there?", clientId: nil),
      limits: SendLimits(), now: rig.clock.now())
    guard case .created = creation else { throw TestFailure("not created: \(creation)") }
    let id = try #require(try rig.database.dueSends(now: rig.clock.now(), canTransmit: false).first?.id)
    _ = try rig.database.recordSendSchedule([.expired(id: id)], now: rig.clock.now())
    try rig.start()
    try rig.store("OH7LZB-9", ["A message meanwhile"])
    #expect(try rig.fake.wait("fcm", count: 2, status: 200))
    let requests = try rig.fake.requests("fcm")
    let notices = requests.filter { $0.string(at: ["body", "message", "data", "kind"]) == "sendFailed" }
    #expect(requests.count == 2 && notices.count == 1)
    let notice = try #require(notices.first)
    let data = try object(notice.value(at: ["body", "message", "data"]))
    #expect(data.keys == ["kind", "to", "seqId", "state", "fromCall"])
    #expect(
      string(data["to"]) == "KJ7ABC-7" && string(data["seqId"]) == "1" && string(data["state"]) == "expired")
    #expect(notice.string(at: ["body", "message", "notification", "title"]) == "No answer from KJ7ABC-7")
    #expect(notice.string(at: ["body", "message", "android", "collapse_key"]) == "aprs-OH7LZB-9-sent")
    let message = try #require(requests.first { $0.string(at: ["body", "message", "data", "kind"]) == nil })
    #expect(message.string(at: ["body", "message", "data", "count"]) == "1", "a sent message is not counted")
    #expect(message.string(at: ["body", "message", "android", "collapse_key"]) == "aprs-OH7LZB-9")
    #expect(try rig.eventuallyEmpty())
  }
}
