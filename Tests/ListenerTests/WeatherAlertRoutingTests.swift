import APRS
import Testing

@testable import Listener
@testable import Store

/// Weather alerts in every zone form, the lines that continue them, and emergencies anywhere in a watched
/// station's packet, through the router and the writer's transaction.
extension SubscriptionRoutingTests {
  @Test func everyZoneFormReachesItsSubscriber() throws {
    let rig = try Rig()
    defer { rig.test.remove() }
    let nws = try rig.subscribe("N0CALL-7", [.nws(zones: ["IAC057", "CAZ007"])])
    let bom = try rig.subscribe("VK2ABC", [.nws(zones: ["TAS_MW006"])])
    let result = try rig.process(
      [
        "DVNFFS>APRS::NWS_ADVIS:022300z,FLOOD,IAC57-95-103-ILC1-67 {2FsAA",
        "SFONPW>APRS::NWS-ADVIS:191700z,WIND,CA_Z007,CA_Z065, ALAMEDA AND CON & NAPA COUNTY {JDIAA",
        "NECMWW>APRS::BOM_WARN :141300z,WIND,TAS_MW002>003-005>007-009 {D55AG",
      ], now: Self.t0)
    #expect(result.storedEntries[.nws] == 3, "\(result)")
    let entries = try rig.entries("N0CALL-7")
    #expect(
      entries.map(\.peer) == ["DVNFFS", "SFONPW"]
        && entries.allSatisfy { $0.entry?.subscription == nws[0].id })
    let australian = try rig.entries("VK2ABC")
    #expect(australian.map(\.to) == ["BOM_WARN"] && australian[0].entry?.subscription == bom[0].id)
    #expect(australian[0].msgno == "D55AG")
  }

  @Test func linesContinuingAnAlertAreStoredWithIt() throws {
    let rig = try Rig()
    defer { rig.test.remove() }
    let watching = try rig.subscribe(
      "N0CALL-7", [.bulletin(try BulletinPattern("BLN*")), .nws(zones: ["WYZ014"])])
    try rig.subscribe("K9XYZ", [.nws(zones: ["PAC999"])])
    // Xastir's example: the alert (line A), then two lines continuing it (B, C), one a batch later.
    let alert = "RIWWSW>APRS::NWS-WARN :191800z,WINTER_STORM,WY_Z014, GREEN MOUNTAINS {JBNBA"
    let first = try rig.process(
      [alert, "RIWWSW>APRS::SKYRIW   :WINTER STORM WARNING CONTINUING TODAY {JBNBB"], now: Self.t0)
    #expect(first.storedEntries[.nws] == 2 && first.skipped.isEmpty, "\(first)")
    let second = try rig.process(
      [
        "RIWWSW>APRS::SKYRIW   :THROUGH SATURDAY {JBNBC",
        // Another alert of the office (another fourth character), another sender: not this one.
        "RIWWSW>APRS::SKYRIW   :A DIFFERENT PRODUCT {JBNCB", "CYSWSW>APRS::SKYCYS   :THROUGH SATURDAY {JBNBC",
        // Its letters in the other case are another number.
        "RIWWSW>APRS::SKYRIW   :lower case number {jbnbD",
      ], now: Self.t0 + 2 * Self.minute)
    #expect(second.storedEntries[.nws] == 1 && second.skipped[.weather] == 3, "\(second)")
    var entries = try rig.entries("N0CALL-7")
    #expect(entries.map(\.msgno) == ["JBNBA", "JBNBB", "JBNBC"])
    #expect(entries.map(\.to) == ["NWS-WARN", "SKYRIW", "SKYRIW"])
    #expect(entries.allSatisfy { $0.entry == SubscriptionEntry(kind: .nws, subscription: watching[1].id) })
    #expect(entries[2].text == "THROUGH SATURDAY" && entries[2].peer == "RIWWSW")
    #expect(try rig.entries("K9XYZ").isEmpty)
    // The repeats the server sends are the same entries; a line after the window continues nothing stored.
    _ = try rig.process(
      [alert, "RIWWSW>APRS::SKYRIW   :THROUGH SATURDAY {JBNBC"], now: Self.t0 + 20 * Self.minute)
    #expect(try rig.entries("N0CALL-7").count == 3)
    let late = try rig.process(
      ["RIWWSW>APRS::SKYRIW   :AND SUNDAY {JBNBD"],
      now: Self.t0 + 20 * Self.minute + LineRouter.subscriptionWindowMs + 1)
    #expect(late.storedEntries.isEmpty && late.skipped[.weather] == 1)
    entries = try rig.entries("N0CALL-7")
    #expect(entries.count == 3)
  }

  @Test func withoutZoneSubscriptionsNoLineIsAContinuation() throws {
    let rig = try Rig()
    defer { rig.test.remove() }
    try rig.subscribe("N0CALL-7", [.bulletin(try BulletinPattern("BLN*"))])
    let routed = LineRouter().route(
      bytes("RIWWSW>APRS::SKYRIW   :THROUGH SATURDAY {JBNBC"), stations: try rig.stations(now: Self.t0),
      canTransmit: true, subscriptions: try rig.stations(now: Self.t0).subscriptions)
    #expect(routed.continuation == nil && routed.skip == .weather)
  }

  @Test func anEmergencyInAPositionCommentIsOneEventPerWindow() throws {
    let rig = try Rig()
    defer { rig.test.remove() }
    let watch = try rig.subscribe("N0CALL-7", [.watch(WatchRule(call: "K1ABC", emergency: true))])
    let beacon = "K1ABC>APRS:!4903.50N/07201.75W-EMERGENCY car in the ditch"
    let first = try rig.process([beacon], now: Self.t0 + 1)
    #expect(first.storedEntries[.watch] == 1)
    // Repeats (the beacon, a status saying it too) within the window: the same emergency.
    for minute in 1...12 {
      let line = minute % 2 == 0 ? beacon : "K1ABC>APRS:>EMERGENCY send help"
      #expect(try rig.process([line], now: Self.t0 + Int64(minute) * 10 * Self.minute).storedEntries.isEmpty)
    }
    let entries = try rig.entries("N0CALL-7")
    #expect(entries.map(\.entry?.event) == [.emergency])
    #expect(
      entries[0].text == "EMERGENCY (position comment) at 49.05833, -72.02917: EMERGENCY car in the ditch")
    #expect(entries[0].entry?.subscription == watch[0].id && entries[0].entry?.isUrgent == true)
    #expect(entries[0].entry?.latitude != nil)
    // An object's text, after a whole window without: a new one, saying where.
    let later = Self.t0 + 120 * Self.minute + WatchTracker.emergencyWindowMs
    let object = try rig.process(
      ["K1ABC>APRS:;FIRE1    *092345z4903.50N/07201.75W:EMERGENCY brush fire"], now: later)
    #expect(object.storedEntries[.watch] == 1)
    #expect(try rig.entries("N0CALL-7").last?.text == "EMERGENCY (object FIRE1): EMERGENCY brush fire")
  }
}
