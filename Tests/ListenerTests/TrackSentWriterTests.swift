import APRS
import Testing

@testable import Listener
@testable import Store

/// `trackSent` in the writer: what the station's radio sends is one `sent` entry, its peer's ack or rej makes it
/// `acked` or `rejected`, shown only to `want:["sent"]`, never pushed or ACKed.
@Suite struct TrackSentWriterTests {
  static let t0: Int64 = 1_800_000_000_000
  static let radioSends = "OH7LZB>APK005,WIDE1-1,qAR,OH2XYZ::KJ7ABC-7 :See you at 8{17"
  static let peerAcks = "KJ7ABC-7>APRS,TCPIP*,qAC,T2X::OH7LZB   :ack17"
  static let peerRejects = "KJ7ABC-7>APRS,TCPIP*,qAC,T2X::OH7LZB   :rej17"

  private func setup(followed: Bool = true) throws -> (TestDatabase, MessageWriter, LiveStationSet) {
    let test = try TestDatabase()
    try test.register("OH7LZB", ackMessages: true)
    try test.database.updateStationSettings("OH7LZB", StationSettingsUpdate(trackSent: true), now: 1_500)
    var stations = try test.stations()
    var own = OwnTransmissions(try test.database.stationsFollowingOwnTransmissions(heardSince: 0))
    if followed { own.planned(OwnTransmissionPlan(followed: ["OH7LZB"], fellBack: [])) }
    stations.own = own
    return (test, MessageWriter(database: test.database, router: LineRouter()), stations)
  }

  private func sent(_ test: TestDatabase, wants: Wants = [.sent]) throws -> [StoredMessage] {
    try test.database.sync(station: "OH7LZB", since: 0, now: Self.t0 + 100_000, wants: wants).messages
  }

  @Test func theRadiosMessageIsOneSentEntryThatItsPeersAckMakesAcked() throws {
    let (test, writer, stations) = try setup()
    defer { test.remove() }
    for offset: Int64 in [0, 30_000] {  // the radio's retry is the same entry
      _ = try writer.process(
        [bytes(Self.radioSends)], stations: stations, canTransmit: true, now: Self.t0 + offset)
    }
    var entries = try sent(test)
    #expect(entries.count == 1)
    #expect(entries.first?.direction == .sent && entries.first?.peer == "KJ7ABC-7")
    #expect(entries.first?.msgno == "17" && entries.first?.heardState == .sent)
    let first = entries.first?.timestamp ?? 0
    // Not for clients that did not ask; never pushed, never ACKed.
    #expect(try sent(test, wants: []).isEmpty)
    #expect(try test.database.dueOutbox(now: Self.t0 + 100_000).isEmpty)
    let acked = try writer.process(
      [bytes(Self.peerAcks)], stations: stations, canTransmit: true, now: Self.t0 + 40_000)
    #expect(acked.heardSendsAnswered == 1 && acked.acks.isEmpty)
    entries = try sent(test)
    #expect(entries.map(\.heardState) == [.acked])
    #expect((entries.first?.timestamp ?? 0) > first)  // re-stamped: the next sync carries the change
    // A repeated ack changes nothing.
    #expect(
      try writer.process(
        [bytes(Self.peerAcks)], stations: stations, canTransmit: true, now: Self.t0 + 50_000
      ).heardSendsAnswered == 0)
  }

  @Test func itsPeersRejMakesItRejected() throws {
    let (test, writer, stations) = try setup()
    defer { test.remove() }
    _ = try writer.process([bytes(Self.radioSends)], stations: stations, canTransmit: true, now: Self.t0)
    _ = try writer.process([bytes(Self.peerRejects)], stations: stations, canTransmit: true, now: Self.t0 + 1)
    #expect(try sent(test).map(\.heardState) == [.rejected])
  }

  @Test func aStationTheFilterDoesNotFollowStoresNothingOfItsRadio() throws {
    let (test, writer, stations) = try setup(followed: false)
    defer { test.remove() }
    let result = try writer.process(
      [bytes(Self.radioSends)], stations: stations, canTransmit: true, now: Self.t0)
    #expect(result.stored == 0 && result.skipped[.notForUs] == 1)
    #expect(try sent(test).isEmpty)
  }
}
