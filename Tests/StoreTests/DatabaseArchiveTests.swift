// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import APRS
import TestSupport
import Testing

@testable import Store

/// `Database+Archive.swift`: a station's export and its import into another database.
@Suite struct DatabaseArchiveTests {
  private static let station = "N0CALL-7"
  private static let keyHash = String(repeating: "ab", count: 32)

  /// Two migrated databases: the old server's and the new one's.
  private static func databases(options: StoreOptions = .init()) throws -> (Database, Database, TempDirectory)
  {
    let directory = try TempDirectory()
    let old = try openStore(directory.path + "/old.sqlite", options: options)
    let new = try openStore(directory.path + "/new.sqlite", options: options)
    return (old, new, directory)
  }

  /// A station on `database` with a claim, settings, a subscription, a read marker and three messages (the
  /// timestamps 10_001…10_003).
  private static func populate(_ database: Database) throws {
    try register(database, station, token: "tok-1", now: 1_000)
    _ = try database.claimStation(station, keyHash: keyHash, client: "test", now: 1_500)
    _ = try database.updateStationSettings(
      station,
      StationSettingsUpdate(blocked: try CallList(validating: ["SPAM"], field: "blocked"), mutedUntil: 77),
      now: 1_600)
    _ = try database.replaceSubscriptions(
      of: station, with: [SubscriptionDraft(rule: .bulletin(try BulletinPattern("BLN*")), bypass: true)],
      now: 1_700)
    let stored = try database.storeMessages(
      [incoming(station, "one"), incoming(station, "two", from: "KJ7XYZ"), incoming(station, "three")],
      now: 10_001)
    #expect(stored.count == 3)
    _ = try database.markRead(station: station, peer: "KJ7ABC-7", upTo: 10_001, now: 10_004)
  }

  /// An archive written by hand for ``station``: no claim, default settings, the given entries and markers.
  private static func archive(
    _ entries: [StoredMessage], readMarkers: [String: Int64] = [:], claim: ArchivedClaim? = nil
  ) -> StationArchive {
    StationArchive(
      station: station, claim: claim, settings: .defaults, subscriptions: [], readMarkers: readMarkers,
      entries: entries)
  }

  private static func received(_ text: String, at timestamp: Int64, from peer: String = "KJ7ABC-7")
    -> StoredMessage
  {
    StoredMessage(direction: .received, peer: peer, text: text, msgno: nil, timestamp: timestamp)
  }

  // MARK: export

  @Test func anUnregisteredStationHasNoExport() throws {
    let (old, _, directory) = try Self.databases()
    defer { directory.remove() }
    #expect(try old.exportStation(Self.station) == nil)
  }

  @Test func theExportCarriesEverythingOfTheStation() throws {
    let (old, _, directory) = try Self.databases()
    defer { directory.remove() }
    try Self.populate(old)
    try register(old, "N0CALL-8")
    _ = try old.storeMessages([incoming("N0CALL-8", "not mine")], now: 20_000)
    let archive = try #require(try old.exportStation("n0call-7"))
    #expect(archive.station == Self.station)
    #expect(archive.claim == ArchivedClaim(keyHash: Self.keyHash, claimedAt: 1_500))
    let blocked = try CallList(validating: ["SPAM"], field: "blocked")
    #expect(archive.settings.mutedUntil == 77 && archive.settings.blocked == blocked)
    #expect(archive.subscriptions.count == 1 && archive.subscriptions[0].bypass)
    #expect(archive.readMarkers == ["KJ7ABC-7": 10_001])
    #expect(archive.entries.map(\.text) == ["one", "two", "three"], "oldest first, the station's only")
    #expect(archive.entries.map(\.timestamp) == [10_001, 10_002, 10_003])
    #expect(try old.stationClaim(Self.station) != .unregistered, "an export changes nothing")
  }

  // MARK: import

  @Test func aRoundTripGivesTheSameStationUnclaimed() throws {
    let (old, new, directory) = try Self.databases()
    defer { directory.remove() }
    try Self.populate(old)
    let archive = try #require(try old.exportStation(Self.station))
    let result = try new.importStation(archive, now: 50_000)
    #expect(result == StationImport(entries: 3, dropped: 0, claim: nil))
    var again = try #require(try new.exportStation(Self.station))
    #expect(again.claim == nil, "the claim comes only when asked for")
    #expect(try new.stationClaim(Self.station) == .unclaimed)
    again.claim = archive.claim
    #expect(again == archive, "settings, subscriptions (their ids), markers and entries as they were")
    #expect(try new.devices(of: Self.station).isEmpty, "no devices: they register anew")
    #expect(try count(new, "outbox") == 0, "imported messages are not pushed")
    // A client's cursor from the old server goes on: nothing after the newest entry but the marker's stamp.
    let sync = try new.sync(station: Self.station, since: 10_003, now: 50_001, wants: [.inbox])
    #expect(sync.messages.isEmpty)
    #expect(try new.readMarkers(station: Self.station, changedAfter: 10_003) == ["KJ7ABC-7": 10_001])
    // The next message stored there comes after every imported one.
    try register(new, "N0CALL-8")
    let next = try new.storeMessages([incoming("N0CALL-8", "later")], now: 1)
    guard case .stored(_, let timestamp) = try #require(next.first) else {
      Issue.record("not stored: \(next)")
      return
    }
    #expect(timestamp == 10_005)
  }

  @Test func theClaimComesOnlyWithClaimUnprovenAndAudited() throws {
    let (old, new, directory) = try Self.databases()
    defer { directory.remove() }
    try Self.populate(old)
    let archive = try #require(try old.exportStation(Self.station))
    let result = try new.importStation(archive, withClaim: true, now: 50_000)
    #expect(result.claim == .unproven)
    guard case .claimed(let claim) = try new.stationClaim(Self.station) else {
      Issue.record("not claimed")
      return
    }
    #expect(claim.keyHash == Self.keyHash && claim.claimedAt == 1_500)
    #expect(claim.proof == .unproven && claim.seniority == 50_000 && claim.refreshedAt == 50_000)
    let audit = try new.auditTrail(of: Self.station)
    #expect(audit.count == 1 && audit[0].action == .claimed && audit[0].at == 50_000)
    #expect(audit[0].client == AuditEntry.operatorClient)
    // Without a claim in the archive, withClaim brings none.
    let (_, other, otherDirectory) = try Self.databases()
    defer { otherDirectory.remove() }
    var unclaimed = archive
    unclaimed.claim = nil
    #expect(try other.importStation(unclaimed, withClaim: true, now: 50_000).claim == nil)
    #expect(try other.stationClaim(Self.station) == .unclaimed)
    #expect(try other.auditTrail(of: Self.station).isEmpty)
  }

  @Test func aSecondImportIsRefusedAndChangesNothing() throws {
    let (old, new, directory) = try Self.databases()
    defer { directory.remove() }
    try Self.populate(old)
    let archive = try #require(try old.exportStation(Self.station))
    try new.importStation(archive, now: 50_000)
    let message = invalidArgument { () throws(StoreError) in try new.importStation(archive, now: 60_000) }
    #expect(message?.hasPrefix("N0CALL-7 is registered here already") == true)
    #expect(try count(new, "messages") == 3)
  }

  @Test func aTimeFromTheFutureRefusesTheWholeArchive() throws {
    let (_, new, directory) = try Self.databases()
    defer { directory.remove() }
    let now: Int64 = 1_000_000
    let latest = now + Database.importClockSkewMs
    let late = Self.archive([Self.received("ok", at: 100), Self.received("ahead", at: latest + 1)])
    let message = invalidArgument { () throws(StoreError) in try new.importStation(late, now: now) }
    #expect(message?.hasPrefix("the entry timestamp \(latest + 1) is later than this server's clock") == true)
    let claimed = Self.archive([], claim: ArchivedClaim(keyHash: Self.keyHash, claimedAt: latest + 1))
    let claimMessage = invalidArgument { () throws(StoreError) in
      try new.importStation(claimed, withClaim: true, now: now)
    }
    #expect(claimMessage?.hasPrefix("the claimedAt \(latest + 1)") == true)
    #expect(try new.station(Self.station) == nil, "nothing was written")
    // A claim left behind is not checked; a time within the skew is taken.
    #expect(try new.importStation(claimed, now: now).claim == nil)
    let (_, edge, edgeDirectory) = try Self.databases()
    defer { edgeDirectory.remove() }
    #expect(
      try edge.importStation(Self.archive([Self.received("at the edge", at: latest)]), now: now).entries == 1)
  }

  @Test func aTimestampTakenHereRollsTheImportBack() throws {
    let (_, new, directory) = try Self.databases()
    defer { directory.remove() }
    try register(new, "N0CALL-8")
    _ = try new.storeMessages([incoming("N0CALL-8", "here first")], now: 500)
    let clash = Self.archive(
      [Self.received("fine", at: 400), Self.received("clash", at: 500)], readMarkers: ["*": 400])
    let message = invalidArgument { () throws(StoreError) in try new.importStation(clash, now: 1_000) }
    #expect(message == "timestamp 500 is taken by a message of N0CALL-8 here: import into a fresh server")
    #expect(try new.station(Self.station) == nil, "no station, no half of its entries")
    #expect(try count(new, "messages") == 1)
    #expect(try count(new, "read_markers") == 0)
    #expect(try new.lastMessageTimestamp() == 500)
  }

  @Test func anAddressThatIsNoStationIsRefused() throws {
    let (_, new, directory) = try Self.databases()
    defer { directory.remove() }
    var archive = Self.archive([])
    archive.station = "NOT A CALL"
    #expect(invalidArgument { () throws(StoreError) in try new.importStation(archive, now: 1) } != nil)
    #expect(try count(new, "stations") == 0)
  }

  @Test func anEmptyArchiveMakesABareStation() throws {
    let (_, new, directory) = try Self.databases()
    defer { directory.remove() }
    #expect(
      try new.importStation(Self.archive([]), now: 1_000) == StationImport(entries: 0, dropped: 0, claim: nil)
    )
    #expect(try new.stationSettings(Self.station) == .defaults)
    #expect(try new.exportStation(Self.station) == Self.archive([]))
    #expect(try new.lastMessageTimestamp() == 0, "no entries, no markers: the cursor sequence does not move")
  }

  @Test func theRingIsTrimmedAsThisServerKeepsIt() throws {
    let (_, new, directory) = try Self.databases(options: StoreOptions(ringSize: 3))
    defer { directory.remove() }
    let entries = (1...5).map { Self.received("m\($0)", at: Int64($0) * 10) }
    let result = try new.importStation(Self.archive(entries), now: 1_000)
    #expect(result == StationImport(entries: 3, dropped: 2, claim: nil))
    #expect(try new.recentMessages(station: Self.station, limit: 10).map(\.text) == ["m3", "m4", "m5"])
    #expect(try count(new, "drops") == 0, "the older ones were never this server's to push")
    #expect(try new.droppedCount(station: Self.station, since: 0) == 0)
  }

  @Test func anUntilPulledStationKeepsItsMax() throws {
    let (_, new, directory) = try Self.databases(options: StoreOptions(ringSize: 2, maxUnpulledPerStation: 4))
    defer { directory.remove() }
    var archive = Self.archive((1...6).map { Self.received("m\($0)", at: Int64($0) * 10) })
    archive.settings.retention = .untilPulled(max: 100)
    let result = try new.importStation(archive, now: 1_000)
    #expect(result == StationImport(entries: 4, dropped: 2, claim: nil), "the max is cut to the operator's 4")
    #expect(try new.recentMessages(station: Self.station, limit: 10).map(\.text) == ["m3", "m4", "m5", "m6"])
  }

  @Test func sendsComeFinishedAndTheNumbersGoOn() throws {
    let (_, new, directory) = try Self.databases()
    defer { directory.remove() }
    let entries = [
      StoredMessage(
        direction: .sent, peer: "kj7abc-7", text: "acked", msgno: "41", timestamp: 100, state: .acked,
        clientId: "c1"),
      StoredMessage(
        direction: .sent, peer: "KJ7ABC-7", text: "in flight", msgno: "42", timestamp: 200, state: .pending,
        clientId: "c2"),
      StoredMessage(
        direction: .sent, peer: "KJ7ABC-7", text: "heard, not sent here", msgno: "99", timestamp: 300),
    ]
    try new.importStation(Self.archive(entries), now: 5_000)
    let sends = try new.columnTexts(
      "SELECT msgno || ' ' || addressee || ' ' || state || ' ' || finished_at FROM sends ORDER BY msgno")
    #expect(sends == ["41 KJ7ABC-7 acked 100", "42 KJ7ABC-7 expired 5000"])
    #expect(try new.scalarText("SELECT last FROM send_numbers WHERE station = 'N0CALL-7'") == "42")
    let exported = try #require(try new.exportStation(Self.station))
    #expect(exported.entries.map(\.state) == [.acked, .expired, nil])
  }

  @Test func markersStopAtTheNewestEntryAndAreStampedAfterIt() throws {
    let (_, new, directory) = try Self.databases()
    defer { directory.remove() }
    let archive = Self.archive(
      [Self.received("a", at: 100), Self.received("b", at: 200)],
      readMarkers: ["*": 150, "kj7abc-7": 9_999])
    try new.importStation(archive, now: 5_000)
    #expect(try new.readMarkers(station: Self.station, changedAfter: .min) == ["*": 150, "KJ7ABC-7": 200])
    #expect(try new.readMarkers(station: Self.station, changedAfter: 200) == ["*": 150, "KJ7ABC-7": 200])
    #expect(try new.readMarkers(station: Self.station, changedAfter: 201).isEmpty)
    #expect(try new.lastMessageTimestamp() == 201)
    #expect(try new.scalarText("SELECT last_sync_cursor FROM stations WHERE address = 'N0CALL-7'") == "200")
  }
}
