import Testing

@testable import APRS

@Suite struct BulletinPatternTests {
  @Test func wildcardsMatchAsGlobs() throws {
    let all = try BulletinPattern("bln*")
    #expect(all.text == "BLN*" && all.literalPrefix == "BLN" && !all.isExact)
    for addressee in ["BLN", "BLN1", "BLNA", "BLN3WX", "BLN9SLCARE"] { #expect(all.matches(addressee)) }
    let weather = try BulletinPattern("BLN?WX")
    #expect(weather.matches("BLN3WX") && weather.matches("BLNAWX"))
    #expect(!weather.matches("BLNWX") && !weather.matches("BLN3WXX") && !weather.matches("BLN33WX"))
    let exact = try BulletinPattern("BLN3")
    #expect(exact.isExact && exact.matches("BLN3") && !exact.matches("BLN3WX") && !exact.matches("BLN"))
    #expect(try BulletinPattern("BLN*WX*").matches("BLN1WXALL"))
    #expect(try BulletinPattern("BLN**?").matches("BLN1") && !(try BulletinPattern("BLN**?").matches("BLN")))
  }

  @Test(arguments: [
    ("", BulletinPattern.Problem.empty), ("BLN1234567", .tooLong), ("NWS-WARN", .notBulletin),
    ("ABC*", .notBulletin), ("BLN$", .badCharacter), ("BLN 1", .badCharacter), ("BLN\u{0}", .badCharacter),
    ("BLNé", .badCharacter), ("bl", .notBulletin),
  ])
  func badPatternsAreRefusedWithTheReason(pattern: String, problem: BulletinPattern.Problem) {
    #expect(throws: problem) { try BulletinPattern(pattern) }
  }
}

/// The zone forms of ``NWSZones`` (sources in its documentation), each with vectors from real alerts.
@Suite struct NWSZonesTests {
  @Test func plainAndCompressedListsAreExpanded() {
    #expect(NWSZones.zones(in: "092010z,THUNDER_STORM,OHC081,PAC125") == ["OHC081", "PAC125"])
    #expect(
      NWSZones.zones(in: "311730z,WINTER_STORM,OHC081>083-085-PAC125")
        == ["OHC081", "OHC082", "OHC083", "OHC085", "PAC125"])
    #expect(NWSZones.zones(in: "011200z,FLOOD,ohz001-002,OHZ001") == ["OHZ001", "OHZ002"])
    #expect(NWSZones.zones(in: "011200z,FLOOD,OHC081>OHC082") == ["OHC081", "OHC082"])
    // Xastir's compressed example (`NWS-ADVIS`, LZKNPW): ranges and single numbers under one prefix.
    #expect(
      NWSZones.zones(in: "221000z,WINTER_STORM,ARZ003>007-012>016-021")
        == [
          "ARZ003", "ARZ004", "ARZ005", "ARZ006", "ARZ007", "ARZ012", "ARZ013", "ARZ014", "ARZ015", "ARZ016",
          "ARZ021",
        ])
    #expect(NWSZones.isZone("OHC081") && NWSZones.isZone("PKZ120") && !NWSZones.isZone("OHX081"))
  }

  @Test func numbersWithoutTheirLeadingZerosArePadded() {
    // A real one, quoted by Xastir: DVNFFS>APRS,qAO,WXSVR::NWS_ADVIS:…{2FsAA
    #expect(
      NWSZones.zones(in: "022300z,FLOOD,IAC57-95-103-111-115-163-171-ILC1-67-71-131-MOC45")
        == [
          "IAC057", "IAC095", "IAC103", "IAC111", "IAC115", "IAC163", "IAC171", "ILC001", "ILC067", "ILC071",
          "ILC131", "MOC045",
        ])
    // Xastir's example with the zeros removed: the same zones as ARZ003>007-012>016.
    #expect(
      NWSZones.zones(in: "221000z,WINTER_STORM,ARZ3>7-12>16")
        == NWSZones.zones(in: "221000z,WINTER_STORM,ARZ003>007-012>016"))
    #expect(NWSZones.zones(in: "OHC8,OHC08") == ["OHC008"])
    #expect(NWSZones.zones(in: "OHC9>OHC11") == ["OHC009", "OHC010", "OHC011"])
  }

  @Test func theOriginalServersUnderscoreFormIsNormalised() {
    // Xastir's examples of the original server's packets.
    #expect(
      NWSZones.zones(in: "191700z,WIND,CA_Z007,CA_Z065, ALAMEDA AND CON & NAPA COUNTY")
        == ["CAZ007", "CAZ065"])
    #expect(NWSZones.zones(in: "120230z,SVRTSM,OK_C113,  OSAGE COUNTY") == ["OKC113"])
    #expect(
      NWSZones.zones(in: "180400z,WINTER_STORM,OK_Z001,OK_Z002,TX_Z001,TX_Z002,TX_Z003,")
        == ["OKZ001", "OKZ002", "TXZ001", "TXZ002", "TXZ003"])
    #expect(NWSZones.zones(in: "CA_Z007>009") == ["CAZ007", "CAZ008", "CAZ009"])
    // The CWA form (`CW_AFWD`) is an office, not a zone.
    #expect(NWSZones.zones(in: "181100z,SKY,CW_AFWD, -NO Activation Expected").isEmpty)
  }

  @Test func bomAreasAreReadInTheAustralianServersForm() {
    // Xastir's examples from WXSVR-AU (BOM_WARN, BOM_ADVIS).
    #expect(
      NWSZones.zones(in: "141300z,WIND,TAS_MW002>003-005>007-009")
        == ["TAS_MW002", "TAS_MW003", "TAS_MW005", "TAS_MW006", "TAS_MW007", "TAS_MW009"])
    #expect(NWSZones.zones(in: "131330z,WIND,SA_MW005") == ["SA_MW005"])
    #expect(
      NWSZones.zones(in: "131330z,FIRE,nsw_fw1-3,VIC_PW010") == ["NSW_FW001", "NSW_FW003", "VIC_PW010"])
    for code in ["XX_MW005", "NSW_ZZ001", "NSWFW001", "NSW__FW001", "NSW_FW0001"] {
      #expect(NWSZones.zones(in: "131330z,WIND," + code).isEmpty, "\(code)")
    }
    #expect(NWSZones.isZone("TAS_MW002") && NWSZones.isZone("SA_MW005") && !NWSZones.isZone("SA_MW5"))
  }

  @Test func aSpaceEndsTheListOnceAZoneWasRead() {
    #expect(
      NWSZones.zones(in: "092345z,SEVERE_WEATHER,OHC081,PAC125 Tornado, OHC999") == ["OHC081", "PAC125"])
    #expect(NWSZones.zones(in: "092345z,SEVERE WEATHER,OHC081") == ["OHC081"])
    #expect(NWSZones.zones(in: "191800z,WINTER_STORM,WY_Z014, GREEN MOUNTAINS") == ["WYZ014"])
  }

  @Test func oneCodeInAnyFormHasOneCanonicalForm() {
    #expect(NWSZones.canonical("ohc081") == "OHC081")
    #expect(NWSZones.canonical("OHC81") == "OHC081")
    #expect(NWSZones.canonical("OH_C081") == "OHC081")
    #expect(NWSZones.canonical("tas_mw002") == "TAS_MW002")
    #expect(NWSZones.canonical("NT_CW7") == "NT_CW007")
    for code in ["OHC081>083", "OHC081-082", "OHC081,PAC125", "081", "OHX081", "OHC0811", "NSW_FW0001", ""] {
      #expect(NWSZones.canonical(code) == nil, "\(code)")
    }
  }

  @Test func textWithoutZonesNamesNone() {
    for text in [
      "092010z,Remarks follow here", "SEVERE WEATHER EXPECTED", "", ",,,", "OHC", "OHC0811", "OH081",
      "081-082", "OHC083>081", "OHC081>PAC090", "OHC081>", ">083", "O1C081",
      "WINTER STORM WARNING CONTINUING TODAY",
      "THROUGH SATURDAY", "Cancellation of Marine Wind Warning for Wednesday for",
    ] {
      #expect(NWSZones.zones(in: text).isEmpty, "\(text)")
    }
  }

  @Test func aHugeRangeIsCut() {
    let zones = NWSZones.zones(in: "AAC000>999,BBZ000>999")
    #expect(zones.count == NWSZones.maximumZones && zones.first == "AAC000" && zones.last == "AAC999")
  }
}

/// A weather line's identity, as the servers number their alerts and the lines that continue them.
@Suite struct WeatherAlertIdentityTests {
  @Test func senderAndTheFirstFourCharactersOfTheNumber() throws {
    // Xastir's example: the alert (line A) and two lines continuing it (B, C).
    let alert = try #require(
      addressed("RIWWSW>APRS::NWS-WARN :191800z,WINTER_STORM,WY_Z014, GREEN MOUNTAINS {JBNBA"))
    let more = try #require(addressed("RIWWSW>APRS::SKYRIW   :WINTER STORM WARNING CONTINUING TODAY {JBNBB"))
    let identity = try #require(WeatherAlertIdentity(alert))
    #expect(identity == WeatherAlertIdentity(sender: "RIWWSW", sequence: "JBNB"))
    #expect(WeatherAlertIdentity(more) == identity)
    #expect(more.kind == .weather && NWSZones.zones(in: more.text).isEmpty)
    // Case tells numbers apart; another sender, a short number, no number or no weather: no identity or another.
    #expect(WeatherAlertIdentity(try #require(addressed("RIWWSW>APRS::SKYRIW   :more {JbNBB"))) != identity)
    #expect(WeatherAlertIdentity(try #require(addressed("RIWWSX>APRS::SKYRIW   :more {JBNBB"))) != identity)
    #expect(WeatherAlertIdentity(try #require(addressed("RIWWSW>APRS::SKYRIW   :more {JBN"))) == nil)
    #expect(WeatherAlertIdentity(try #require(addressed("RIWWSW>APRS::SKYRIW   :more"))) == nil)
    #expect(WeatherAlertIdentity(try #require(addressed("RIWWSW>APRS::N0CALL   :more {JBNBB"))) == nil)
  }
}

@Suite struct SubscriptionMatcherTests {
  static let subscriptions = [
    Subscription(id: "s1", rule: .bulletin(try! BulletinPattern("BLN?WX"))),
    Subscription(id: "s2", rule: .group(call: "SLCARES")),
    Subscription(id: "s3", rule: .nws(zones: ["OHC081"])),
    Subscription(id: "s4", rule: .nws(zones: ["PAC999"])),
    Subscription(id: "s5", rule: .watch(WatchRule(call: "K1ABC", heardAfter: 3600))),
  ]

  func ids(_ line: String) -> [String] {
    guard let message = addressed(line) else { return ["not a message"] }
    return SubscriptionMatcher(Self.subscriptions).matches(message).map(\.id)
  }

  @Test func eachKindMatchesItsTraffic() {
    #expect(ids("W1AW>APRS::BLN3WX   :Storm tonight") == ["s1"])
    #expect(ids("W1AW>APRS::BLN3     :General") == [])
    #expect(ids("KD7XYZ>APRS::SLCARES  :Net at 8{12") == ["s2"])
    #expect(ids("KD7XYZ>APRS::slcares  :lower case addressee") == ["s2"])
    #expect(ids("KD7XYZ>APRS::SLCARES  :ack12") == [])
    #expect(ids("CLEFFW>APRS::NWS-WARN :092010z,FLOOD,OHC081>083,PAC125{A1B") == ["s3"])
    #expect(ids("CLEFFW>APRS::NWS_WARN :092010z,FLOOD,OHC082{A1B") == [])
    #expect(ids("CLEFFW>APRS::NWS-WARN :092010z,FLOOD{A1B") == [])
    #expect(ids("K1ABC>APRS::OH7LZB   :hi{1") == [])
  }
}

@Suite struct StationReportTests {
  func report(_ line: String) throws -> StationReport {
    StationReport.read(try #require(packet(line)))
  }

  func near(_ value: Double?, _ expected: Double) -> Bool {
    guard let value else { return false }
    return abs(value - expected) < 0.00001
  }

  /// APRS101 ch. 8's examples: with and without a timestamp, and with ambiguity.
  @Test func plainPositions() throws {
    let plain = try report("K1ABC>APRS:!4903.50N/07201.75W-Test 001234")
    #expect(plain.kind == .position && near(plain.latitude, 49.058333) && near(plain.longitude, -72.029167))
    let stamped = try report("K1ABC>APRS:/092345z4903.50N/07201.75W>Test1234")
    #expect(stamped.kind == .position && near(stamped.latitude, 49.058333))
    let ambiguous = try report("K1ABC>APRS:=4903.  N/07201.  W-")
    #expect(near(ambiguous.latitude, 49.05) && near(ambiguous.longitude, -72.016667))
    let south = try report("VK2ABC>APRS:!3351.00S\\15112.00E#")
    #expect(near(south.latitude, -33.85) && near(south.longitude, 151.2))
    #expect(try report("K1ABC>APRS:!4903.50X/07201.75W-").kind == .other)
    #expect(try report("K1ABC>APRS:!9903.50N/07201.75W-").kind == .other)
    #expect(try report("K1ABC>APRS:!4903.50N").kind == .other)
  }

  /// APRS101 ch. 9's example `/5L!!<*e7>7P[`: 49°30' N, 72°45' W.
  @Test func compressedPositions() throws {
    let compressed = try report("K1ABC>APRS:=/5L!!<*e7>7P[")
    #expect(
      compressed.kind == .position && near(compressed.latitude, 49.5) && near(compressed.longitude, -72.75))
    #expect(try report("K1ABC>APRS:=/5L!").kind == .other)
  }

  /// APRS101 ch. 10's destination `S32U6T`: 33°25.64' N, message M3 ("Returning", bits 100); a longitude of
  /// 72°01.75' W (degrees 72+28 `d`, minutes 1+60+28 `Y`, hundredths 75+28 `g`).
  @Test func micEPositionsAndTheirMessageCode() throws {
    let micE = try report("K1ABC>S32U6T:`dYgl\u{1C}\u{1C}>/")
    #expect(micE.kind == .micE && near(micE.latitude, 33.427333) && near(micE.longitude, -72.029167))
    #expect(!micE.emergency)
    let decoded = try #require(MicE(destination: "S32U6T-2", information: Array("`dYgl\u{1C}\u{1C}>/".utf8)))
    #expect(decoded.messageCode == 0b100)
    // All three message characters 0–9 or L: code 000, "Emergency".
    let emergency = try report("K1ABC>332U6T:`dYgl\u{1C}\u{1C}>/")
    #expect(emergency.kind == .micE && emergency.emergency && near(emergency.latitude, 33.427333))
    #expect(try report("K1ABC>L32U6T:'dYgl\u{1C}\u{1C}>/").emergency)
    // Offset +100 (fifth character P–Z) and east (sixth 0–9): 112°07.74' E.
    let east = try report("K1ABC>S32UP3:`(#fl\u{1C}\u{1C}>/")
    #expect(near(east.longitude, 112.129))
    #expect(try report("K1ABC>APRS:`dYgl\u{1C}\u{1C}>/").kind == .other)  // no Mic-E destination
    #expect(try report("K1ABC>S32U6T:`dY").kind == .other)  // too short
  }

  @Test func statusReportsAndTheirEmergency() throws {
    let status = try report("K1ABC>APRS:>On the air")
    #expect(status.kind == .status && status.status == "On the air" && !status.emergency)
    let alarm = try report("K1ABC>APRS:>EMERGENCY: car off the road")
    #expect(alarm.emergencyIn == .status && alarm.emergencyText == nil)
    #expect(!(try report("K1ABC>APRS:>emergency drill, not real").emergency))
    #expect(try report("K1ABC>APRS:T#005,199,000,255,073,123,01101001").kind == .other)
  }

  /// `EMERGENCY` in capitals anywhere in the packet, as Xastir and YAAC alarm on it; placed by the packet's type.
  @Test func anEmergencyAnywhereInThePacketAndWhereItWas() throws {
    let plain = try report("K1ABC>APRS:!4903.50N/07201.75W-EMERGENCY car in the ditch ")
    #expect(plain.kind == .position && near(plain.latitude, 49.058333))
    #expect(plain.emergencyIn == .positionComment && plain.emergencyText == "EMERGENCY car in the ditch")
    let stamped = try report("K1ABC>APRS:@092345z4903.50N/07201.75W>Send help: EMERGENCY")
    #expect(stamped.emergencyIn == .positionComment && stamped.emergencyText == "Send help: EMERGENCY")
    let compressed = try report("K1ABC>APRS:=/5L!!<*e7>7P[EMERGENCY")
    #expect(compressed.emergencyIn == .positionComment && compressed.emergencyText == "EMERGENCY")
    // A Mic-E of another code whose comment says it.
    let micE = try report("K1ABC>S32U6T:`dYgl\u{1C}\u{1C}>/EMERGENCY")
    #expect(micE.kind == .micE && micE.emergencyIn == .positionComment && micE.emergencyText == "EMERGENCY")
    #expect(try report("K1ABC>332U6T:`dYgl\u{1C}\u{1C}>/").emergencyIn == .micE)
    let object = try report("K1ABC>APRS:;FIRE1    *092345z4903.50N/07201.75W:EMERGENCY brush fire")
    #expect(object.emergencyIn == .object("FIRE1") && object.emergencyText == "EMERGENCY brush fire")
    let item = try report("K1ABC>APRS:)TENT!4903.50N/07201.75W;EMERGENCY aid station")
    #expect(item.emergencyIn == .item("TENT") && item.emergencyText == "EMERGENCY aid station")
    let message = try report("K1ABC>APRS::N0CALL-7 :EMERGENCY need help{12")
    #expect(message.emergencyIn == .message && message.emergencyText == "EMERGENCY need help{12")
    #expect(try report("K1ABC>APRS:T#005,EMERGENCY").emergencyIn == .packet)
    // Mixed or lower case is no alarm (the peers' authors ask for it when none is meant).
    for line in [
      "K1ABC>APRS:!4903.50N/07201.75W-Emergency services net",
      "K1ABC>APRS:;FIRE1    *092345z4903.50N/07201.75W:emergency",
      "K1ABC>APRS:!4903.50N/07201.75W-EMERGENC", "K1ABC>S32U6T:`dYgl\u{1C}\u{1C}>/",
    ] {
      #expect(!(try report(line).emergency), "\(line)")
    }
  }
}

@Suite struct WatchTrackerTests {
  static let t0: Int64 = 1_800_000_000_000
  static let hour: Int64 = 3_600_000
  let position = StationReport(source: "K1ABC", kind: .position, latitude: 1, longitude: 2)

  @Test func heardAfterASilenceIsReportedOnce() {
    let rule = WatchRule(call: "K1ABC", heardAfter: 3600)
    var state = WatchState(startingAt: Self.t0)
    var (next, events) = WatchTracker.heard(position, rule: rule, state: state, now: Self.t0 + 2 * Self.hour)
    #expect(events == [.heard(position, silenceMs: 2 * Self.hour)])
    state = next
    (next, events) = WatchTracker.heard(
      position, rule: rule, state: state, now: Self.t0 + 2 * Self.hour + 300_000)
    #expect(events.isEmpty && next.lastHeardAt == Self.t0 + 2 * Self.hour + 300_000)
    // A clock step back: nothing reported, the last time kept.
    (next, events) = WatchTracker.heard(position, rule: rule, state: next, now: Self.t0)
    #expect(events.isEmpty && next.lastHeardAt == Self.t0 + 2 * Self.hour + 300_000)
  }

  @Test func aSilenceIsReportedOnceUntilTheCallIsHeardAgain() {
    let rule = WatchRule(call: "K1ABC", silentFor: 7200)
    let state = WatchState(startingAt: Self.t0)
    #expect(WatchTracker.nextTick(rule: rule, state: state) == Self.t0 + 2 * Self.hour)
    #expect(WatchTracker.tick(rule: rule, state: state, now: Self.t0 + 2 * Self.hour - 1).1.isEmpty)
    let (silent, events) = WatchTracker.tick(rule: rule, state: state, now: Self.t0 + 2 * Self.hour)
    #expect(events == [.silent(silenceMs: 2 * Self.hour)] && silent.silenceReported)
    #expect(WatchTracker.tick(rule: rule, state: silent, now: Self.t0 + 10 * Self.hour).1.isEmpty)
    #expect(WatchTracker.nextTick(rule: rule, state: silent) == nil)
    let (heard, none) = WatchTracker.heard(position, rule: rule, state: silent, now: Self.t0 + 11 * Self.hour)
    #expect(none.isEmpty && !heard.silenceReported)
    #expect(WatchTracker.tick(rule: rule, state: heard, now: Self.t0 + 13 * Self.hour).1.count == 1)
  }

  @Test func anEmergencyIsOneEventPerWindow() {
    let rule = WatchRule(call: "K1ABC", emergency: true)
    let calm = StationReport(source: "K1ABC", kind: .micE)
    let alarm = StationReport(source: "K1ABC", kind: .micE, emergencyIn: .micE)
    let statusAlarm = StationReport(source: "K1ABC", kind: .status, emergencyIn: .status, status: "EMERGENCY")
    let statusCalm = StationReport(source: "K1ABC", kind: .status, status: "ok")
    let comment = StationReport(source: "K1ABC", kind: .position, emergencyIn: .positionComment)
    let position = StationReport(source: "K1ABC", kind: .position)
    let minute: Int64 = 60_000
    let window = WatchTracker.emergencyWindowMs
    var state = WatchState(startingAt: Self.t0)
    var pushed: [WatchEvent] = []
    var at = Self.t0
    func hear(_ report: StationReport, after ms: Int64) {
      at += ms
      let (next, events) = WatchTracker.heard(report, rule: rule, state: state, now: at)
      state = next
      pushed += events
    }
    // Into an emergency (Mic-E); the status and the Mic-E again within the window: the same one.
    hear(alarm, after: 1)
    hear(statusAlarm, after: minute)
    hear(alarm, after: minute)
    #expect(pushed == [.emergency(alarm)] && state.emergencyAt == at)
    // A Mic-E of another code ends it: the next is new at once.
    hear(calm, after: minute)
    #expect(state.emergencyAt == nil)
    hear(statusAlarm, after: minute)
    #expect(pushed == [.emergency(alarm), .emergency(statusAlarm)])
    // A comment repeated every 10 minutes for 5 hours, between other packets: each repeat extends the window.
    for _ in 0..<30 {
      hear(position, after: 5 * minute)
      hear(statusCalm, after: 1)
      hear(comment, after: 5 * minute)
    }
    #expect(pushed.count == 2)
    // Silent about it for the whole window: the next report is a new emergency.
    hear(position, after: window - 1)
    hear(comment, after: 1)
    #expect(pushed == [.emergency(alarm), .emergency(statusAlarm), .emergency(comment)])
    // A clock step back stays within the window, and the latest report is kept.
    let latest = at
    hear(comment, after: -window * 2)
    #expect(pushed.count == 3 && state.emergencyAt == latest)
    // A watch without emergency:true reports none (its state still follows).
    let off = WatchRule(call: "K1ABC", emergency: false)
    let (next, events) = WatchTracker.heard(
      alarm, rule: off, state: WatchState(startingAt: Self.t0), now: Self.t0)
    #expect(events.isEmpty && next.emergencyAt == Self.t0)
  }
}
