import API
import Foundation
import JSON
import Store
import TestSupport
import Testing

/// `subscriptions` in `POST /v1/settings`: the whole list replaced, ids kept where given, every kind's fields
/// echoed, and every bad value a 400 naming it with nothing changed.
@Suite struct SubscriptionSettingsTests {
  private func subscriptions(_ reply: Reply) -> [[String: Any]] {
    let object = try? JSONSerialization.jsonObject(with: Data(reply.text.utf8)) as? [String: Any]
    return object?["subscriptions"] as? [[String: Any]] ?? []
  }

  @Test func everyKindIsStoredAndEchoedAndIdsAreKept() throws {
    let fixture = try APIFixture.withClaimedStation()
    var reply = fixture.settings(
      [
        "subscriptions": [
          ["kind": "bulletin", "match": "bln?wx"],
          ["kind": "group", "call": "slcares"],
          ["kind": "nws", "zones": ["pac125", "OHC081", "OHC081"]],
          [
            "kind": "watch", "call": "K1ABC-0", "heardAfter": 3600, "silentFor": 7200, "emergency": true,
            "bypass": true,
          ],
        ]
      ])
    #expect(reply.status == 200, "\(reply.text)")
    var list = subscriptions(reply)
    #expect(list.map { $0["kind"] as? String } == ["bulletin", "group", "nws", "watch"])
    #expect(list[0]["match"] as? String == "BLN?WX" && list[1]["call"] as? String == "SLCARES")
    #expect(list[2]["zones"] as? [String] == ["OHC081", "PAC125"])
    #expect(list[3]["call"] as? String == "K1ABC" && list[3]["heardAfter"] as? Int == 3600)
    #expect(list[3]["emergency"] as? Bool == true && list[3]["bypass"] as? Bool == true)
    #expect(list[0]["bypass"] as? Bool == false)
    let ids = list.compactMap { $0["id"] as? String }
    #expect(Set(ids).count == 4 && ids.allSatisfy { $0.hasPrefix("s") })
    // Other settings leave them alone; a new list keeps the ids it names and drops the rest.
    reply = fixture.settings(["mutedUntil": 0])
    #expect(subscriptions(reply).count == 4)
    reply = fixture.settings(
      ["subscriptions": [["id": ids[3], "kind": "watch", "call": "K1ABC", "silentFor": 600]]])
    list = subscriptions(reply)
    #expect(list.count == 1 && list[0]["id"] as? String == ids[3] && list[0]["heardAfter"] is NSNull)
    reply = fixture.settings(["subscriptions": [Any]()])
    #expect(reply.status == 200 && subscriptions(reply).isEmpty)
  }

  /// BOM areas in the form WXSVR-AU sends them, and the NWS codes in the forms the weather servers used, are
  /// stored canonical (a BOM zone was a 400).
  @Test func bomAreasAndEveryNWSFormAreAccepted() throws {
    let fixture = try APIFixture.withClaimedStation()
    let reply = fixture.settings([
      "subscriptions": [["kind": "nws", "zones": ["NSW_FW001", "tas_mw002", "SA_MW5", "OH_C081", "pac125"]]]
    ])
    #expect(reply.status == 200, "\(reply.text)")
    #expect(
      subscriptions(reply).first?["zones"] as? [String] == [
        "NSW_FW001", "OHC081", "PAC125", "SA_MW005", "TAS_MW002",
      ])
    #expect(
      subscriptions(fixture.settings()).first?["zones"] as? [String] == subscriptions(reply).first?["zones"]
        as? [String])
  }

  static let badSubscriptions: [(String, String)] = [
    (#"{"kind":"bulletin"}"#, "subscriptions[0].match is required"),
    (#"{"kind":"bulletin","match":"NWS*"}"#, "subscriptions[0].match must be a bulletin addressee pattern"),
    (#"{"kind":"bulletin","match":7}"#, "subscriptions[0].match must be a string"),
    (#"{"kind":"radio"}"#, #"subscriptions[0].kind must be "bulletin""#),
    (#"{"match":"BLN*"}"#, "subscriptions[0].kind is required"),
    (#"{"kind":"group","call":"not a call"}"#, "subscriptions[0].call must be a call"),
    (#"{"kind":"nws","zones":[]}"#, "subscriptions[0].zones must be an array of 1 to 50"),
    (#"{"kind":"nws","zones":["OHX081"]}"#, "subscriptions[0].zones[0] must be a county or zone code"),
    (#"{"kind":"nws","zones":["OHC081>083"]}"#, "subscriptions[0].zones[0] must be a county or zone code"),
    (#"{"kind":"nws","zones":["XX_FW001"]}"#, "or a BOM area"),
    (#"{"kind":"nws","zones":["NSW_FW0001"]}"#, "or a BOM area"),
    (#"{"kind":"nws","zones":"OHC081"}"#, "subscriptions[0].zones must be an array"),
    (#"{"kind":"watch","call":"K1ABC"}"#, "subscriptions[0] watches nothing"),
    (
      #"{"kind":"watch","call":"K1ABC","heardAfter":10}"#,
      "subscriptions[0].heardAfter must be a number of seconds"
    ),
    (#"{"kind":"watch","call":"K1ABC","silentFor":1e30}"#, "subscriptions[0].silentFor must be a number"),
    (
      #"{"kind":"watch","call":"K1ABC","emergency":"yes"}"#,
      "subscriptions[0].emergency must be true or false"
    ),
    (#"{"kind":"group","call":"SLCARES","id":"s-unknown"}"#, "subscriptions: no subscription s-unknown"),
    (#"{"kind":"group","call":"SLCARES","__proto__":1,"id":"xxxxxxxxxxxxxxxxxxxxxxxx"}"#, "id must be"),
    (#""BLN*""#, "subscriptions[0] must be an object"),
  ]

  @Test(arguments: badSubscriptions)
  func badSubscriptionsAre400AndChangeNothing(subscription json: String, error: String) throws {
    let subscription = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
    let fixture = try APIFixture.withClaimedStation()
    let before = fixture.settings(["subscriptions": [["kind": "group", "call": "KEEP"]]])
    #expect(subscriptions(before).count == 1)
    let reply = fixture.settings(["subscriptions": [subscription], "mutedUntil": 1_800_000_360_000])
    #expect(reply.status == 400, "\(reply.text)")
    #expect(reply["error"]?.stringValue?.contains(error) == true, "\(reply.text)")
    let after = fixture.settings()
    #expect(subscriptions(after).map { $0["call"] as? String } == ["KEEP"])
    #expect(after.text.contains(#""mutedUntil":0"#), "nothing changed")
  }

  @Test func moreThanTwentyOrNotAnArrayIs400() throws {
    let fixture = try APIFixture.withClaimedStation()
    let many = (0..<21).map { ["kind": "group", "call": "NET\($0)"] }
    #expect(fixture.settings(["subscriptions": many]).status == 400)
    #expect(fixture.settings(["subscriptions": "BLN*"]).status == 400)
    #expect(fixture.settings(["subscriptions": [7]]).status == 400)
    let twenty = (0..<20).map { ["kind": "group", "call": "NET\($0)"] }
    #expect(subscriptions(fixture.settings(["subscriptions": twenty])).count == 20)
  }

  @Test func anIdNamedTwiceIsA400NamingTheSecond() throws {
    let fixture = try APIFixture.withClaimedStation()
    let stored = subscriptions(fixture.settings(["subscriptions": [["kind": "group", "call": "KEEP"]]]))
    let id = try #require(stored.first?["id"] as? String)
    let reply = fixture.settings([
      "subscriptions": [
        ["id": id, "kind": "group", "call": "KEEP"], ["id": id, "kind": "group", "call": "TWICE"],
      ]
    ])
    #expect(reply.status == 400, "\(reply.text)")
    #expect(reply["error"]?.stringValue == "subscriptions[1].id: subscription \(id) is named twice")
    #expect(subscriptions(fixture.settings()).map { $0["call"] as? String } == ["KEEP"])
  }
}
