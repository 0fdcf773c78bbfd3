import APRS
import TestSupport
import Testing

@testable import Store

/// The store's side of hearing the station's own radio (sql/024_own_radio.sql): `ackPolicy:"fallback"` stored as
/// `server` with its flag, the wait, `airAnswered`, `trackSent`, who asks to be followed since when, and the
/// decision of a held message.
@Suite struct OwnRadioSettingsTests {
  static let t0: Int64 = 1_800_000_000_000

  @Test func fallbackIsStoredAsServerWithItsFlagSoAnOlderReaderAcksAtOnce() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    try register(database, "N0CALL-7", now: Self.t0)
    #expect(try database.stationSettings("N0CALL-7")?.ackPolicy == .never)
    let updated = try database.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(ackPolicy: .fallback, fallbackWait: FallbackWait(seconds: 30)),
      now: Self.t0)
    #expect(updated?.ackPolicy == .fallback && updated?.fallbackWait.seconds == 30)
    #expect(updated?.airAnswered == .quiet && updated?.trackSent == false)
    #expect(try database.stationSettings("n0call-7") == updated)
    #expect(try database.scalarText("SELECT ack_policy FROM stations WHERE address = 'N0CALL-7'") == "server")
    #expect(try database.scalarText("SELECT ack_messages FROM stations WHERE address = 'N0CALL-7'") == "1")
    #expect(try database.stationsWantingAcks(["N0CALL-7"]) == ["N0CALL-7"])
    // Back to server: the flag goes, the wait stays for the next time.
    let server = try database.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(ackPolicy: .server), now: Self.t0 + 1)
    #expect(server?.ackPolicy == .server && server?.fallbackWait.seconds == 30)
    #expect(try database.stationSettings("N0CALL-7")?.ackPolicy == .server)
  }

  @Test func anotherPolicyWrittenByHandOrByRegisterClearsTheFallback() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    try register(database, "N0CALL-7", ackMessages: true, now: Self.t0)
    try database.updateStationSettings("N0CALL-7", StationSettingsUpdate(ackPolicy: .fallback), now: Self.t0)
    // Register saying ackMessages:true again keeps it (fallback does ACK).
    try register(database, "N0CALL-7", ackMessages: true, now: Self.t0 + 1)
    #expect(try database.stationSettings("N0CALL-7")?.ackPolicy == .fallback)
    try database.execute("UPDATE stations SET ack_messages = 0 WHERE address = 'N0CALL-7'")
    #expect(try database.stationSettings("N0CALL-7")?.ackPolicy == .never)
    try database.execute("UPDATE stations SET ack_messages = 1 WHERE address = 'N0CALL-7'")
    #expect(try database.stationSettings("N0CALL-7")?.ackPolicy == .server)
    #expect(try database.stationsFollowingOwnTransmissions(heardSince: 0).isEmpty)
  }

  @Test func followedStationsKeepTheTimeOfTheirFirstRequest() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    for address in ["N0CALL-7", "OH7LZB", "KJ7ABC"] { try register(database, address, now: Self.t0) }
    try database.updateStationSettings("OH7LZB", StationSettingsUpdate(trackSent: true), now: Self.t0 + 10)
    try database.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(ackPolicy: .fallback), now: Self.t0 + 20)
    try database.updateStationSettings("KJ7ABC", StationSettingsUpdate(mutedUntil: 5), now: Self.t0 + 30)
    // A second request (trackSent on top of fallback) keeps the first time; other settings keep it too.
    try database.updateStationSettings("N0CALL-7", StationSettingsUpdate(trackSent: true), now: Self.t0 + 40)
    try database.updateStationSettings("N0CALL-7", StationSettingsUpdate(mutedUntil: 9), now: Self.t0 + 50)
    #expect(
      try database.stationsFollowingOwnTransmissions(heardSince: 0) == [
        OwnTransmissionStation(address: "N0CALL-7", since: Self.t0 + 20, fallback: true, trackSent: true),
        OwnTransmissionStation(address: "OH7LZB", since: Self.t0 + 10, fallback: false, trackSent: true),
      ])
    // Live stations only.
    #expect(try database.stationsFollowingOwnTransmissions(heardSince: Self.t0 + 1).isEmpty)
    // Asking for neither any more: not followed, and a new request starts a new time.
    try database.updateStationSettings("OH7LZB", StationSettingsUpdate(trackSent: false), now: Self.t0 + 60)
    try database.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(ackPolicy: .server, trackSent: false), now: Self.t0 + 70)
    #expect(try database.stationsFollowingOwnTransmissions(heardSince: 0).isEmpty)
    try database.updateStationSettings("OH7LZB", StationSettingsUpdate(trackSent: true), now: Self.t0 + 80)
    #expect(try database.stationsFollowingOwnTransmissions(heardSince: 0).map(\.since) == [Self.t0 + 80])
  }

  @Test func theChangedFieldsNameTheNewSettings() {
    let before = StationSettings()
    var after = before
    after.ackPolicy = .fallback
    after.fallbackWait = FallbackWait(seconds: 45)!
    after.airAnswered = .none
    after.trackSent = true
    #expect(
      after.changedFields(comparedTo: before) == ["ackPolicy", "fallbackWait", "airAnswered", "trackSent"])
    #expect(after.followsOwnTransmissions && !before.followsOwnTransmissions)
    #expect(AckPolicy.fallback.storedPolicy == "server" && AckPolicy.device.storedPolicy == "device")
  }

  @Test func aHeldMessageIsMarkedAndItsPushReleasedOrDropped() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    try register(database, "N0CALL-7", now: Self.t0)
    var held = IncomingMessage(
      station: "N0CALL-7", peer: "OH7AA-1", text: "hi", msgno: "AB}CD", dedupKey: "a", dedupWindowMs: 60_000)
    held.pushHoldMs = 20_000
    var other = held
    other.msgno = "ABC"
    other.dedupKey = "b"
    _ = try database.storeMessages([held, other], now: Self.t0, stampedAt: Self.t0)
    #expect(try database.dueOutbox(now: Self.t0 + 19_999).isEmpty)
    #expect(try database.nextOutboxAttempt(after: Self.t0) == Self.t0 + 20_000)
    // The number alone finds `AB}CD`, not `ABC`.
    #expect(
      try database.decideHeldMessage(
        station: "N0CALL-7", sender: "OH7AA-1", msgno: "AB", .answeredByAir(.quiet), now: Self.t0 + 3_000))
    let due = try database.dueOutbox(now: Self.t0 + 3_000)
    #expect(due.map(\.message.msgno) == ["AB}CD"] && due.first?.message.answeredBy == .air)
    #expect(
      try database.decideHeldMessage(
        station: "N0CALL-7", sender: "OH7AA-1", msgno: "ABC", .answeredByAir(.none), now: Self.t0 + 4_000)
        == false)
    #expect(try database.dueOutbox(now: Self.t0 + 100_000).count == 1)
    #expect(
      try database.decideHeldMessage(
        station: "N0CALL-7", sender: "OH7AA-1", msgno: "ZZ", .serverAcked, now: Self.t0) == false)
    let sync = try database.sync(station: "N0CALL-7", since: 0, now: Self.t0 + 5_000, wants: [.answeredBy])
    #expect(sync.messages.map(\.answeredBy) == [.air, .air])
  }
}
