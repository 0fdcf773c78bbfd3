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

@Suite struct NWSZonesTests {
  @Test func plainAndCompressedListsAreExpanded() {
    #expect(NWSZones.zones(in: "092010z,THUNDER_STORM,OHC081,PAC125") == ["OHC081", "PAC125"])
    #expect(
      NWSZones.zones(in: "311730z,WINTER_STORM,OHC081>083-085-PAC125")
        == ["OHC081", "OHC082", "OHC083", "OHC085", "PAC125"])
    #expect(NWSZones.zones(in: "011200z,FLOOD,ohz001-002,OHZ001") == ["OHZ001", "OHZ002"])
    #expect(NWSZones.zones(in: "011200z,FLOOD,OHC081>OHC082") == ["OHC081", "OHC082"])
    #expect(NWSZones.isZone("OHC081") && NWSZones.isZone("PKZ120") && !NWSZones.isZone("OHX081"))
  }

  @Test func textWithoutZonesNamesNone() {
    for text in [
      "092010z,Remarks follow here", "SEVERE WEATHER EXPECTED", "", ",,,", "OHC08", "OHC0811", "OH081",
      "081-082", "OHC083>081", "OHC081>PAC090", "OHC081>", ">083", "O1C081",
    ] {
      #expect(NWSZones.zones(in: text).isEmpty, "\(text)")
    }
  }

  @Test func aHugeRangeIsCut() {
    let zones = NWSZones.zones(in: "AAC000>999,BBZ000>999")
    #expect(zones.count == NWSZones.maximumZones && zones.first == "AAC000" && zones.last == "AAC999")
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
    #expect(try report("K1ABC>APRS:>EMERGENCY: car off the road").emergency)
    #expect(!(try report("K1ABC>APRS:>emergency drill, not real").emergency))
    #expect(try report("K1ABC>APRS:T#005,199,000,255,073,123,01101001").kind == .other)
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

  @Test func anEmergencyIsReportedOnEachTransition() {
    let rule = WatchRule(call: "K1ABC", emergency: true)
    let calm = StationReport(source: "K1ABC", kind: .micE, emergency: false)
    let alarm = StationReport(source: "K1ABC", kind: .micE, emergency: true)
    let statusAlarm = StationReport(source: "K1ABC", kind: .status, emergency: true, status: "EMERGENCY")
    let statusCalm = StationReport(source: "K1ABC", kind: .status, emergency: false, status: "ok")
    var state = WatchState(startingAt: Self.t0)
    var pushed: [WatchEvent] = []
    for (offset, report) in [calm, alarm, alarm, statusAlarm, calm, statusCalm, alarm].enumerated() {
      let (next, events) = WatchTracker.heard(report, rule: rule, state: state, now: Self.t0 + Int64(offset))
      state = next
      pushed += events
    }
    // Into emergency (Mic-E), still in it (Mic-E again, then the status too, then Mic-E calm while the status
    // holds), out (status calm), into it again.
    #expect(pushed == [.emergency(alarm), .emergency(alarm)])
    let off = WatchRule(call: "K1ABC", emergency: false)
    #expect(
      WatchTracker.heard(alarm, rule: off, state: WatchState(startingAt: Self.t0), now: Self.t0).1.isEmpty)
  }
}
