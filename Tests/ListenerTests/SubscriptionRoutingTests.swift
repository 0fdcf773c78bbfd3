import APRS
import Testing

@testable import Listener
@testable import Store

/// Subscriptions in routing and in the writer's transaction: bulletins, NWS zones, group calls and watches give
/// entries of their own (deduplicated with a sliding window, never ACKed, shown only with
/// `want:["subscriptions"]`), watches run their state machine across batches and clock ticks.
@Suite struct SubscriptionRoutingTests {
  static let t0: Int64 = 1_800_000_000_000
  static let minute: Int64 = 60_000

  struct Rig {
    let test: TestDatabase
    let writer: MessageWriter

    init() throws {
      test = try TestDatabase()
      writer = MessageWriter(database: test.database, router: LineRouter())
    }

    @discardableResult
    func subscribe(_ station: String, _ rules: [SubscriptionRule], now: Int64 = SubscriptionRoutingTests.t0)
      throws -> [Subscription]
    {
      if try test.database.subscriptions(of: station).isEmpty { try test.register(station, now: now) }
      return try #require(
        try test.database.replaceSubscriptions(
          of: station, with: rules.map { SubscriptionDraft(rule: $0) }, now: now))
    }

    func stations(now: Int64) throws -> LiveStationSet {
      var set = try test.stations(now: now)
      set.subscriptions = SubscriptionIndex(try test.database.liveSubscriptions(heardSince: 0))
      return set
    }

    func process(_ lines: [String], now: Int64) throws -> BatchResult {
      try writer.process(lines.map(bytes), stations: try stations(now: now), canTransmit: true, now: now)
    }

    func entries(_ station: String) throws -> [StoredMessage] {
      try test.database.sync(
        station: station, since: 0, now: SubscriptionRoutingTests.t0, countsAsPull: false,
        wants: .subscriptions
      ).messages.filter { $0.entry != nil }
    }
  }

  @Test func aBulletinRepeatedEvery20MinutesIsOneEntryNeverAcked() throws {
    let rig = try Rig()
    defer { rig.test.remove() }
    let subscription = try rig.subscribe("N0CALL-7", [.bulletin(try BulletinPattern("BLN?WX"))])
    var stored = 0
    for copy in 0..<3 {
      let result = try rig.process(
        ["WX1ABC>APRS::BLN1WX   :Storm warning tonight{12"], now: Self.t0 + Int64(copy) * 20 * Self.minute)
      stored += result.storedEntries[.bulletin] ?? 0
      #expect(result.acks.isEmpty && result.stored == 0)
      #expect(result.storedStations == (copy == 0 ? ["N0CALL-7"] : []))
    }
    #expect(stored == 1)
    let entries = try rig.entries("N0CALL-7")
    #expect(entries.count == 1)
    #expect(
      entries[0].peer == "WX1ABC" && entries[0].to == "BLN1WX" && entries[0].text == "Storm warning tonight")
    #expect(entries[0].entry == SubscriptionEntry(kind: .bulletin, subscription: subscription[0].id))
    #expect(try rig.test.database.sync(station: "N0CALL-7", since: 0, now: Self.t0).messages.isEmpty)
    // A changed text is a new entry; a bulletin the pattern does not match is over-delivery, skipped.
    #expect(
      try rig.process(["WX1ABC>APRS::BLN1WX   :Storm moved east"], now: Self.t0 + 70 * Self.minute)
        .storedEntries[.bulletin] == 1)
    #expect(try rig.process(["WX1ABC>APRS::BLN2    :Club meeting"], now: Self.t0).skipped[.bulletin] == 1)
  }

  @Test func anNWSAlertReachesTheZoneSubscriberOnly() throws {
    let rig = try Rig()
    defer { rig.test.remove() }
    try rig.subscribe("N0CALL-7", [.nws(zones: ["OHC081"])])
    try rig.subscribe("K9XYZ", [.nws(zones: ["PAC999"])])
    for minute in 0..<5 {
      _ = try rig.process(
        ["WXSVR>APRS::NWS-WARN :092345z,SEVERE_WEATHER,OHC081,PAC125 Tornado Warning"],
        now: Self.t0 + Int64(minute) * Self.minute)
    }
    #expect(try rig.entries("N0CALL-7").map(\.to) == ["NWS-WARN"])
    #expect(try rig.entries("K9XYZ").isEmpty)
    // A weather message without zones never matches.
    #expect(
      try rig.process(["WXSVR>APRS::NWS-ADVIS:Statement without zones"], now: Self.t0)
        .skipped[.weather] == 1)
  }

  @Test func aGroupMessageReachesEverySubscriberAndIsNeverAcked() throws {
    let rig = try Rig()
    defer { rig.test.remove() }
    try rig.subscribe("N0CALL-7", [.group(call: "SLCARES")])
    try rig.subscribe("K9XYZ", [.group(call: "SLCARES")])
    try rig.test.register("OH7AA")
    let result = try rig.process(["OH7AA>APRS::SLCARES  :Net tonight 2000{33"], now: Self.t0)
    #expect(result.storedEntries[.group] == 2 && result.acks.isEmpty)
    #expect(Set(result.storedStations) == ["N0CALL-7", "K9XYZ"])
    for station in ["N0CALL-7", "K9XYZ"] {
      let entries = try rig.entries(station)
      #expect(entries.map(\.peer) == ["OH7AA"] && entries.map(\.msgno) == ["33"])
    }
    // The sender's own group message is not news to it (when it subscribes too).
    try rig.subscribe("OH7AA", [.group(call: "SLCARES")])
    _ = try rig.process(["OH7AA>APRS::SLCARES  :Second call{34"], now: Self.t0 + Self.minute)
    #expect(try rig.entries("OH7AA").isEmpty)
  }

  @Test func aWatchReportsHeardOnceAfterSilenceThenSilenceOnceByTheClock() throws {
    let rig = try Rig()
    defer { rig.test.remove() }
    let watch = try rig.subscribe(
      "N0CALL-7", [.watch(WatchRule(call: "K1ABC", heardAfter: 3600, silentFor: 7200, emergency: true))])
    let position = "K1ABC>APRS,TCPIP*:!4903.50N/07201.75W-Test"
    // Heard after 2 h of silence (since the watch began): one entry; 5 minutes later nothing new.
    let first = try rig.process([position], now: Self.t0 + 120 * Self.minute)
    #expect(first.storedEntries[.watch] == 1 && first.skipped.isEmpty)
    #expect(try rig.process([position], now: Self.t0 + 125 * Self.minute).storedEntries.isEmpty)
    var entries = try rig.entries("N0CALL-7")
    #expect(entries.map(\.entry?.event) == [.heard])
    #expect(entries[0].text == "heard after 2 h at 49.05833, -72.02917")
    #expect(entries[0].entry?.subscription == watch[0].id && entries[0].entry?.latitude != nil)
    // Silent 2 h after the last packet: one silent entry, reported once.
    let quiet = Self.t0 + 125 * Self.minute + 7_200_000
    #expect(try rig.writer.reportSilences(now: quiet - 1, stampedAt: quiet - 1).storedEntries.isEmpty)
    let silent = try rig.writer.reportSilences(now: quiet, stampedAt: quiet)
    #expect(silent.storedEntries[.watch] == 1 && silent.storedStations == ["N0CALL-7"])
    #expect(
      try rig.writer.reportSilences(now: quiet + 60_000, stampedAt: quiet + 60_000).storedEntries.isEmpty)
    entries = try rig.entries("N0CALL-7")
    #expect(entries.map(\.entry?.event) == [.heard, .silent] && entries[1].text == "silent for 2 h")
  }

  @Test func aMicEEmergencyIsReportedOncePerTransition() throws {
    let rig = try Rig()
    defer { rig.test.remove() }
    try rig.subscribe("N0CALL-7", [.watch(WatchRule(call: "K1ABC", emergency: true))])
    let emergency = "K1ABC>332U6T:`dYgl\u{1C}\u{1C}>/"
    #expect(try rig.process([emergency], now: Self.t0 + 1).storedEntries[.watch] == 1)
    #expect(try rig.process([emergency], now: Self.t0 + 2).storedEntries.isEmpty, "still in it: no new one")
    _ = try rig.process(["K1ABC>S32U6T:`dYgl\u{1C}\u{1C}>/"], now: Self.t0 + 3)
    #expect(try rig.process([emergency], now: Self.t0 + 4).storedEntries[.watch] == 1, "a new transition")
    let entries = try rig.entries("N0CALL-7")
    #expect(entries.map(\.entry?.event) == [.emergency, .emergency])
    #expect(entries[0].text.hasPrefix("EMERGENCY (Mic-E) at 33.42733"))
    #expect(entries[0].entry?.isUrgent == true)
  }

  @Test func aBlockedSenderGivesNoEntryAndOldClientsSeeNothing() throws {
    let rig = try Rig()
    defer { rig.test.remove() }
    try rig.subscribe("N0CALL-7", [.bulletin(try BulletinPattern("BLN*"))])
    try rig.test.database.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(blocked: CallList(trusted: ["SPAM1"])), now: Self.t0)
    let result = try rig.process(
      ["SPAM1>APRS::BLN1     :buy now", "WX1ABC>APRS::BLNA     :Hamfest"], now: Self.t0)
    #expect(result.blocked == 1 && result.storedEntries[.bulletin] == 1)
    #expect(try rig.entries("N0CALL-7").map(\.peer) == ["WX1ABC"])
    #expect(try rig.test.database.sync(station: "N0CALL-7", since: 0, now: Self.t0).messages.isEmpty)
    #expect(try rig.test.database.unpulledCount(station: "N0CALL-7") == 0)
  }
}
