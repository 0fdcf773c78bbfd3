import TestSupport
import Testing

@testable import Store

/// The store's side of the all-SSID inbox: the settings `ssids` and `ackSsids` (validated, stored, read), entries
/// for other SSIDs in a ring of their own and hidden from answers that did not ask for them (sync, push count),
/// and devices: what their register opted in to, and one token registered for several stations.
@Suite struct AllSSIDStoreTests {
  static let t0: Int64 = 1_800_000_000_000

  private func message(_ text: String, to: String? = nil, station: String = "N0CALL-7") -> IncomingMessage {
    IncomingMessage(
      station: station, peer: "OH7AA-1", text: text, msgno: nil, dedupKey: "k" + text + (to ?? ""),
      dedupWindowMs: 60_000, to: to)
  }

  // MARK: Settings

  @Test func ssidListsAreValidatedDeduplicatedAndSorted() throws {
    #expect(try SSIDSet(validating: [9, 0, 7, 9], field: "ssids").ssids == [0, 7, 9])
    #expect(try SSIDSet(validating: [], field: "ackSsids").isEmpty)
    #expect(throws: SettingsError(field: "ssids[1]", reason: "must be an SSID from 0 to 15, not 16")) {
      try SSIDSet(validating: [1, 16], field: "ssids")
    }
    #expect(throws: SettingsError(field: "ackSsids[0]", reason: "must be an SSID from 0 to 15, not -1")) {
      try SSIDSet(validating: [-1], field: "ackSsids")
    }
    #expect(throws: SettingsError.self) {
      try SSIDSet(validating: Array(repeating: 1, count: 17), field: "ssids")
    }
    #expect(throws: SettingsError.self) { try SSIDSet(validating: [Int64.max], field: "ssids") }
    #expect(SSIDSelection(stored: "exact") == .exact && SSIDSelection(stored: "all") == .all)
    #expect(SSIDSelection(stored: "0 7 9") == .list(SSIDSet([0, 7, 9])))
    #expect(SSIDSelection(stored: "junk") == .exact)
    #expect(SSIDSelection.all.others(own: 7) == SSIDSet.every.removing(7))
    #expect(SSIDSelection.list(SSIDSet([0, 7])).others(own: 7) == SSIDSet([0]))
  }

  @Test func settingsAreStoredAndTheOwnSSIDIsImpliedInAList() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    try register(database, "N0CALL-7")
    #expect(try database.stationSettings("N0CALL-7")?.ssids == .exact)
    #expect(try database.stationSettings("N0CALL-7")?.ackSsids == .empty)
    let updated = try database.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(ssids: .list(SSIDSet([9, 0])), ackSsids: SSIDSet([9])), now: Self.t0)
    #expect(updated?.ssids == .list(SSIDSet([0, 7, 9])))
    #expect(try database.stationSettings("n0call-7")?.ssids == .list(SSIDSet([0, 7, 9])))
    #expect(try database.stationSettings("N0CALL-7")?.ackSsids == SSIDSet([9]))
    // ACKs only for SSIDs that are stations of the same owner here: N0CALL-9 is none yet, then claimed with
    // another key, then with the owner's.
    #expect(
      try database.stationsCollectingOtherSSIDs(heardSince: 0) == [
        OtherSSIDStation(address: "N0CALL-7", ssids: SSIDSet([0, 9]), ackSsids: .empty)
      ])
    let owner = String(repeating: "ab", count: 32)
    #expect(
      try database.claimStation("N0CALL-7", keyHash: owner, client: "a", now: Self.t0)
        == .claimed(at: Self.t0, proof: .proven))
    try register(database, "N0CALL-9")
    #expect(
      try database.claimStation(
        "N0CALL-9", keyHash: String(repeating: "cd", count: 32), client: "b", now: Self.t0)
        == .claimed(at: Self.t0, proof: .proven))
    #expect(try database.stationsCollectingOtherSSIDs(heardSince: 0).first?.ackSsids == .empty)
    #expect(try database.releaseClaim("N0CALL-9", now: Self.t0))
    #expect(
      try database.claimStation("N0CALL-9", keyHash: owner, client: "a", now: Self.t0)
        == .claimed(at: Self.t0, proof: .proven))
    #expect(
      try database.stationsCollectingOtherSSIDs(heardSince: 0) == [
        OtherSSIDStation(address: "N0CALL-7", ssids: SSIDSet([0, 9]), ackSsids: SSIDSet([9]))
      ])
    // A provisional claim of the same key governs nothing: no ACK.
    #expect(try database.releaseClaim("N0CALL-9", now: Self.t0))
    _ = try database.claimStation("N0CALL-9", keyHash: owner, proof: .provisional, client: "a", now: Self.t0)
    #expect(try database.stationsCollectingOtherSSIDs(heardSince: 0).first?.ackSsids == .empty)
    // Expired stations are left out; back to exact, none.
    #expect(try database.stationsCollectingOtherSSIDs(heardSince: Self.t0).isEmpty)
    try database.updateStationSettings("N0CALL-7", StationSettingsUpdate(ssids: .exact), now: Self.t0)
    #expect(try database.stationsCollectingOtherSSIDs(heardSince: 0).isEmpty)
    #expect(try database.stationSettings("N0CALL-7")?.ackSsids == SSIDSet([9]), "the other setting stays")
  }

  // MARK: Messages

  @Test func otherSSIDEntriesHaveTheirOwnRingAndOldAnswersStayAsTheyWere() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database, options: StoreOptions(ringSize: 3))
    try register(database, "N0CALL-7")
    _ = try database.storeMessages((1...3).map { message("own \($0)") }, now: Self.t0)
    _ = try database.storeMessages((1...5).map { message("nine \($0)", to: "N0CALL-9") }, now: Self.t0 + 10)
    let old = try database.sync(station: "N0CALL-7", since: 0, now: Self.t0 + 100)
    #expect(old.messages.map(\.text) == ["own 1", "own 2", "own 3"], "the direct ring keeps its 3")
    #expect(old.messages.allSatisfy { $0.to == nil })
    let opted = try database.sync(station: "N0CALL-7", since: 0, now: Self.t0 + 100, wants: .ssids)
    #expect(opted.messages.map(\.text) == ["own 1", "own 2", "own 3", "nine 3", "nine 4", "nine 5"])
    #expect(opted.messages.suffix(3).allSatisfy { $0.to == "N0CALL-9" })
    #expect(old.serverTime == opted.serverTime)
    // More direct messages push out only direct ones.
    _ = try database.storeMessages([message("own 4")], now: Self.t0 + 200)
    let after = try database.sync(station: "N0CALL-7", since: 0, now: Self.t0 + 300, wants: .ssids)
    #expect(after.messages.map(\.text) == ["own 2", "own 3", "nine 3", "nine 4", "nine 5", "own 4"])
  }

  @Test func thePushCountAndSendersSeeOtherSSIDEntriesOnlyWhenAsked() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    try register(database, "N0CALL-7")
    _ = try database.storeMessages([message("own"), message("nine", to: "N0CALL-9")], now: Self.t0)
    #expect(try database.unpulledCount(station: "N0CALL-7") == 1)
    #expect(try database.unpulledCount(station: "N0CALL-7", wants: .ssids) == 2)
    let due = try database.dueOutbox(now: Self.t0)
    #expect(due.map(\.message.to) == [nil, "N0CALL-9"])
    #expect(try database.recentMessages(station: "N0CALL-7", limit: 10).map(\.to) == [nil, "N0CALL-9"])
  }

  // MARK: Devices

  @Test func aTokenWithWantSsidsMayServeSeveralStationsAndOneWithoutMovesAsBefore() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    func upsert(_ address: String, wants: Wants?, isRegistration: Bool = true, now: Int64) throws {
      var upsert = stationUpsert(
        address, platform: .android, token: "tok", ackMessages: nil, isRegistration: isRegistration)
      upsert.wants = wants
      try database.upsertStation(upsert, now: now)
    }
    try upsert("N0CALL-7", wants: .ssids, now: 1_000)
    try upsert("KJ7ABC", wants: .ssids, now: 2_000)
    #expect(try database.devices(of: "N0CALL-7").map(\.wants) == [.ssids])
    #expect(try database.devices(of: "KJ7ABC").map(\.token) == ["tok"])
    // A heartbeat keeps what the register opted in to (and keeps both).
    try upsert("N0CALL-7", wants: nil, isRegistration: false, now: 3_000)
    #expect(try database.devices(of: "N0CALL-7").map(\.wants) == [.ssids])
    #expect(try database.devices(of: "KJ7ABC").count == 1)
    // A register without `want` moves the token, as before: its other stations lose it.
    try upsert("OH7LZB", wants: [], now: 4_000)
    #expect(try database.devices(of: "N0CALL-7").isEmpty && database.devices(of: "KJ7ABC").isEmpty)
    #expect(try database.devices(of: "OH7LZB").map(\.wants) == [[]])
    // And one with `want` does not keep a station that did not opt in.
    try upsert("N0CALL-7", wants: .ssids, now: 5_000)
    #expect(try database.devices(of: "OH7LZB").isEmpty)
    // Dropping a dead token drops it everywhere; unregistering one station's drops only that one.
    try upsert("KJ7ABC", wants: .ssids, now: 6_000)
    #expect(try database.deleteDevice(token: "tok", station: "KJ7ABC"))
    #expect(try database.devices(of: "N0CALL-7").count == 1)
    try upsert("KJ7ABC", wants: .ssids, now: 7_000)
    #expect(try database.deleteDevice(token: "tok"))
    #expect(try database.devices(of: "N0CALL-7").isEmpty && database.devices(of: "KJ7ABC").isEmpty)
  }

  @Test func theMigrationKeepsEveryDeviceAndMessageAsTheyWere() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.database)
    defer { database.close() }
    try database.migrate(upTo: 12)
    try database.execute(
      """
      INSERT INTO stations (address, base, ssid, platform, ack_messages, registered_at, heartbeat_at)
        VALUES ('N0CALL-7', 'N0CALL', 7, 'android', 0, 1000, 1000);
      INSERT INTO devices (id, token, station, platform, registered_at, refreshed_at, keyed)
        VALUES (5, 'tok', 'N0CALL-7', 'android', 1000, 2000, 1);
      INSERT INTO station_settings (station, blocked, updated_at) VALUES ('N0CALL-7', 'KJ7ABC', 1000);
      INSERT INTO messages (station, direction, peer, text, msgno, timestamp)
        VALUES ('N0CALL-7', 'received', 'OH7AA-1', 'before', '1', 1500);
      UPDATE meta SET value = '1500' WHERE key = 'last_message_ts';
      """)
    try database.migrate()
    let device = try #require(try database.devices(of: "N0CALL-7").first)
    #expect(device.token == "tok" && device.keyed && device.refreshedAt == 2_000 && device.wants == [])
    #expect(try database.scalarText("SELECT id FROM devices") == "5")
    let settings = try #require(try database.stationSettings("N0CALL-7"))
    #expect(settings.blocked.calls == ["KJ7ABC"] && settings.ssids == .exact && settings.ackSsids == .empty)
    let synced = try database.sync(station: "N0CALL-7", since: 0, now: 3_000, wants: .ssids)
    #expect(synced.messages.map(\.text) == ["before"] && synced.messages.first?.to == nil)
    #expect(try database.scalarText("PRAGMA foreign_key_check") == nil)
  }

  @Test func wantNamesParseForwardCompatibly() {
    #expect(Wants(name: "ssids") == .ssids)
    #expect(Wants(name: "subscriptions") == .subscriptions)
    #expect(Wants(name: "inbox") == .inbox)
    #expect(Wants(name: "read-markers") == nil && Wants(name: "SSIDS") == nil)
    #expect(Wants.ssids.nameList == ["ssids"])
    #expect(Wants([.subscriptions, .ssids]).nameList == ["ssids", "subscriptions"])
  }
}
