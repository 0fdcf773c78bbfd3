import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Subscriptions end to end, through nginx, the responder, the real `aprs-listener`, the APRS-IS fake and the
/// push fake: a bulletin repeated three times is one entry and one low-priority push to the device registered
/// with `want:["subscriptions"]` (none to the shipping app's device), never ACKed; an NWS alert naming the
/// subscribed zone likewise; inside quiet hours a watched station's Mic-E emergency is pushed at once at high
/// priority while a new bulletin is held. A tracker without Mic-E typing `EMERGENCY` into its position comment is
/// the watch's emergency, once however often it repeats; an Australian (BOM) area is subscribed in WXSVR-AU's form
/// and its alert, with the line continuing it, reaches the subscriber.
@Suite(.serialized) struct SubscriptionsEndToEndTests {
  static let optedIn = "subs-fcm:APA91bOpted_in-0123456789"

  /// The owner's phone registers with the key and `want:["subscriptions"]`; then waits (at most 10 s) until the
  /// listener's live filter holds every entry of `filterHolds`.
  static func registerOptedInPhone(_ rig: SettingsRig, filterHolds entries: [String]) throws {
    let registered = try rig.stack.post(
      "/v1/register",
      json:
        #"{"callsign":"N0CALL","ssid":7,"platform":"android","pushToken":"\#(Self.optedIn)","wantHistory":false,"since":0,"auth":"13023","want":["subscriptions"]}"#,
      headers: ["Authorization: Bearer \(rig.stationKey)"])
    #expect(registered.status == 200, "\(registered.text)")
    let widened = waitUntil(timeout: 10, interval: 0.05) {
      let filter = ((try? rig.aprsis.currentFilter()) ?? nil) ?? ""
      return entries.allSatisfy { filter.contains($0) }
    }
    #expect(widened, "filter: \(String(describing: try? rig.aprsis.currentFilter()))\n\(rig.listener.log)")
  }

  @Test func bulletinsAlertsAndEmergenciesReachOnlyTheOptedInDeviceAtTheirPriority() throws {
    let rig = try SettingsRig()
    defer { rig.stop() }
    let answer = try rig.settings(
      #""subscriptions":[{"kind":"bulletin","match":"BLN*"},{"kind":"nws","zones":["OHC081"]},"#
        + #"{"kind":"watch","call":"K1ABC","emergency":true}]"#)
    #expect(answer.objects("subscriptions").count == 3, "\(answer)")
    try Self.registerOptedInPhone(rig, filterHolds: ["BLN*", "NWS*", "b/K1ABC"])

    let bulletin = "WX1ABC>APRS,TCPIP*::BLN1WX   :Storm warning tonight"
    // Three copies 20 minutes apart on the fake's clock (past its, aprsc's, 30 s duplicate filter); the listener's
    // sliding window over the 20 minutes themselves is SubscriptionRoutingTests'.
    for copy in 0..<3 {
      if copy > 0 { try rig.aprsis.advance(1200) }
      #expect(try rig.aprsis.inject([bulletin]) == 1)
    }
    #expect(
      try rig.aprsis.inject(["WXSVR>APRS,TCPIP*::NWS-WARN :092345z,SEVERE_WEATHER,OHC081,PAC125 Tornado"])
        == 1)
    #expect(
      try rig.database.waitUntil { try $0.int("SELECT count(*) FROM messages WHERE kind IS NOT NULL") == 2 },
      "\(rig.listener.log)")
    #expect(try rig.push.endToEndWait("fcm", count: 1), "no push:\n\(rig.listener.log)")
    #expect(
      try rig.database.waitUntil { try $0.int("SELECT count(*) FROM outbox") == 0 }, "\(rig.listener.log)")
    var requests = try rig.push.endToEndRequests("fcm")
    #expect(
      requests.compactMap { endToEndObject($0, "body", "message")?.string("token") }.allSatisfy {
        $0 == Self.optedIn
      }, "only the opted-in device")
    let priorities = requests.compactMap {
      endToEndObject($0, "body", "message", "android")?.string("priority")
    }
    #expect(!priorities.isEmpty && priorities.allSatisfy { $0 == "normal" }, "\(priorities)")
    #expect(
      requests.compactMap { endToEndObject($0, "body", "message", "data")?.string("type") }.last == "nws")
    let pushedBefore = requests.count
    #expect(try rig.aprsis.ackLines().isEmpty, "never ACKed")

    // Quiet hours around now: the emergency goes through at high priority, a new bulletin is held.
    let minute = Int(Date().timeIntervalSince1970 / 60) % 1440
    _ = try rig.settings(
      #""quietHours":{"start":\#((minute + 1380) % 1440),"end":\#((minute + 60) % 1440),"utcOffsetMinutes":0}"#
    )
    #expect(
      try rig.aprsis.inject([
        "WX1ABC>APRS,TCPIP*::BLN2     :Club meeting moved", "K1ABC>332U6T,TCPIP*:`dYgl\u{1C}\u{1C}>/",
      ]) == 2)
    #expect(
      try rig.database.waitUntil { try $0.int("SELECT count(*) FROM messages WHERE kind IS NOT NULL") == 4 },
      "\(rig.listener.log)")
    #expect(
      try rig.database.waitUntil { try $0.int("SELECT count(*) FROM outbox") == 0 }, "\(rig.listener.log)")
    #expect(
      try rig.push.endToEndWait("fcm", count: pushedBefore + 1), "no emergency push:\n\(rig.listener.log)")
    requests = try rig.push.endToEndRequests("fcm")
    let last = try #require(requests.last)
    #expect(endToEndObject(last, "body", "message", "android")?.string("priority") == "high")
    #expect(endToEndObject(last, "body", "message", "data")?.string("event") == "emergency")
    #expect(requests.count == pushedBefore + 1, "the bulletin inside quiet hours was held")

    // Answers: nothing for the shipping app; the four entries with the opt-in.
    #expect(try rig.sync().objects("messages").isEmpty)
    let opted = try rig.stack.post(
      "/v1/sync", json: #"{"callsign":"N0CALL","ssid":7,"auth":"13023","since":0,"want":["subscriptions"]}"#,
      headers: ["Authorization: Bearer \(rig.stationKey)"])
    #expect(
      opted.jsonObject?.objects("messages").map { $0.string("type") } == [
        "bulletin", "nws", "bulletin", "watch",
      ],
      "\(opted.text)")
    #expect(rig.listener.terminate() == 0)
  }

  @Test func anEmergencyInAPositionCommentAndABOMAreaReachTheSubscriber() throws {
    let rig = try SettingsRig()
    defer { rig.stop() }
    let answer = try rig.settings(
      #""subscriptions":[{"kind":"nws","zones":["tas_mw006"]},{"kind":"watch","call":"K1ABC","emergency":true}]"#
    )
    #expect(answer.objects("subscriptions").first?.strings("zones") == ["TAS_MW006"], "\(answer)")
    try Self.registerOptedInPhone(rig, filterHolds: ["BOM*", "SKY*", "b/K1ABC"])

    // The tracker beacons its comment every 10 minutes on the fake's clock (past aprsc's duplicate filter).
    for copy in 0..<3 {
      if copy > 0 { try rig.aprsis.advance(600) }
      #expect(
        try rig.aprsis.inject(["K1ABC>APRS,TCPIP*:!4903.50N/07201.75W-EMERGENCY car in the ditch"]) == 1)
    }
    #expect(
      try rig.aprsis.inject([
        "NECMWW>APRS,TCPIP*::BOM_WARN :141300z,WIND,TAS_MW002>003-005>007-009 {D55AA",
        "NECMWW>APRS,TCPIP*::SKYNEC   :GALES EXPECTED ON THE EAST COAST {D55AB",
      ]) == 2)
    #expect(
      try rig.database.waitUntil { try $0.int("SELECT count(*) FROM messages WHERE kind IS NOT NULL") == 3 },
      "\(rig.listener.log)")
    #expect(
      try rig.database.waitUntil { try $0.int("SELECT count(*) FROM outbox") == 0 }, "\(rig.listener.log)")
    let urgent = waitUntil(timeout: 10, interval: 0.05) {
      ((try? rig.push.endToEndRequests("fcm")) ?? []).contains {
        endToEndObject($0, "body", "message", "android")?.string("priority") == "high"
      }
    }
    #expect(urgent, "the emergency was pushed at high priority:\n\(rig.listener.log)")

    let opted = try rig.stack.post(
      "/v1/sync", json: #"{"callsign":"N0CALL","ssid":7,"auth":"13023","since":0,"want":["subscriptions"]}"#,
      headers: ["Authorization: Bearer \(rig.stationKey)"])
    let entries = opted.jsonObject?.objects("messages") ?? []
    #expect(entries.map { $0.string("type") } == ["watch", "nws", "nws"], "\(opted.text)")
    #expect(entries.first?.string("event") == "emergency")
    #expect(
      entries.first?.string("text")
        == "EMERGENCY (position comment) at 49.05833, -72.02917: EMERGENCY car in the ditch")
    #expect(entries.dropFirst().map { $0.string("to") } == ["BOM_WARN", "SKYNEC"])
    #expect(entries.last?.string("text") == "GALES EXPECTED ON THE EAST COAST")
    #expect(rig.listener.terminate() == 0)
  }
}
