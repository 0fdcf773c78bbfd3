import APRS
import Testing

@testable import Listener
@testable import Store

/// Nets in routing and in the writer: what a service fans out to a member, and its answers, become the entries of
/// the member's room (the real sender as peer, ACKed as a message to the station when numbered, deduplicated as
/// messages are), shown only with `want:["rooms"]`; the same packet to a station that is no member is a message.
@Suite struct NetRoutingTests {
  static let t0: Int64 = 1_800_000_000_000

  struct Rig {
    let test: TestDatabase
    let writer: MessageWriter

    init() throws {
      test = try TestDatabase()
      writer = MessageWriter(database: test.database, router: LineRouter())
      try test.register("N0CALL-7", ackMessages: true, now: NetRoutingTests.t0)
      try test.register("OH7AA", ackMessages: true, now: NetRoutingTests.t0)
      _ = try test.database.replaceSubscriptions(
        of: "N0CALL-7",
        with: [
          SubscriptionDraft(rule: .net(NetRule(service: .ansrvr, group: "HOTG", join: .silent))),
          SubscriptionDraft(rule: .net(NetRule(service: .cqsrvr, group: "MYTEST", join: .post))),
        ], now: NetRoutingTests.t0)
    }

    func process(_ lines: [String], now: Int64) throws -> BatchResult {
      var set = try test.stations(now: now)
      // As the registration watcher loads it: the live subscriptions, then the rooms left lately.
      set.subscriptions = SubscriptionIndex(
        try test.database.liveSubscriptions(heardSince: 0)
          + test.database.recentlyLeftNets(since: now - Database.netLeaveGraceMs))
      return try writer.process(lines.map(bytes), stations: set, canTransmit: true, now: now)
    }

    func sync(_ station: String, wants: Wants) throws -> [StoredMessage] {
      try test.database.sync(
        station: station, since: 0, now: NetRoutingTests.t0, countsAsPull: false, wants: wants
      )
      .messages
    }
  }

  @Test func anANSRVRFanOutIsARoomEntryAckedAsAMessage() throws {
    let rig = try Rig()
    defer { rig.test.remove() }
    let line = "HK3BCA-7>APWW11,TCPIP,KB7COX-10*::N0CALL-7 :N:HOTG Happy APRSThursday from Bogota{12"
    let first = try rig.process([line], now: Self.t0)
    #expect(first.storedEntries[.net] == 1 && first.stored == 0)
    #expect(
      first.acks.map { String(decoding: $0, as: UTF8.self) }.first?.contains(":HK3BCA-7 :ack12") == true)
    let again = try rig.process([line], now: Self.t0 + 31_000)
    #expect(again.duplicates == 1 && again.storedEntries.isEmpty, "deduplicated as messages are")
    let entry = try #require(try rig.sync("N0CALL-7", wants: .rooms).first)
    #expect(entry.peer == "HK3BCA-7" && entry.text == "Happy APRSThursday from Bogota" && entry.msgno == "12")
    #expect(entry.entry?.room == NetRoom(service: .ansrvr, group: "HOTG") && entry.entry?.kind == .net)
    #expect(try rig.sync("N0CALL-7", wants: []).isEmpty, "the shipping app sees nothing")
    #expect(try rig.sync("N0CALL-7", wants: .subscriptions).isEmpty)
  }

  @Test func theServicesAnswersAndCQSRVRsUnnumberedCopiesAreRoomEntries() throws {
    let rig = try Rig()
    defer { rig.test.remove() }
    let result = try rig.process(
      [
        "ANSRVR>APWW11,KJ4ERJ-15*,TCPIP*,qAS,KJ4ERJ-15::N0CALL-7 :N:HOTG 161 Messages Sent{JL}",
        "AE5PL-10>APJIC1,qAO,CQSRVR::N0CALL-7 :CQ MYTEST Listening for APRS contacts",
        "CQSRVR>APJIC1,TCPIP*::N0CALL-7 :Message has been sent to MYTEST{00",
      ], now: Self.t0)
    #expect(result.storedEntries[.net] == 3)
    #expect(result.acks.count == 2, "the numbered answers are ACKed; the copy is not")
    let entries = try rig.sync("N0CALL-7", wants: .rooms)
    #expect(entries.map(\.peer) == ["ANSRVR", "AE5PL-10", "CQSRVR"])
    #expect(
      entries.map(\.text) == [
        "161 Messages Sent", "Listening for APRS contacts", "Message has been sent to MYTEST",
      ])
    #expect(entries.map { $0.entry?.room?.description } == ["ANSRVR/HOTG", "CQSRVR/MYTEST", "CQSRVR/MYTEST"])
  }

  @Test func theSameFormToAStationThatIsNoMemberIsAMessage() throws {
    let rig = try Rig()
    defer { rig.test.remove() }
    let result = try rig.process(["HK3BCA-7>APWW11,TCPIP*::OH7AA    :N:HOTG hello{5"], now: Self.t0)
    #expect(result.stored == 1 && result.storedEntries.isEmpty)
    #expect(try rig.sync("OH7AA", wants: []).map(\.text) == ["N:HOTG hello"])
    let other = try rig.process(["K1ABC>APWW11,TCPIP*::N0CALL-7 :N:OTHER not our group{6"], now: Self.t0)
    #expect(other.stored == 1, "a group the station is not in is a message")
  }

  @Test func theServicesAnswerToALeaveIsStillTheRoomsEntry() throws {
    let rig = try Rig()
    defer { rig.test.remove() }
    let before = try rig.test.database.subscriptions(of: "N0CALL-7")
    let limits = SendLimits(perMinute: 10, inFlight: 20, perAddressPerMinute: 20, globalPerMinute: 30)
    _ = try rig.test.database.writeBatch { () throws(StoreError) -> NetSettlement in
      let after = try rig.test.database.replaceSubscriptions(of: "N0CALL-7", with: [], now: Self.t0) ?? []
      return try rig.test.database.settleNets(
        "N0CALL-7", before: before, after: after, limits: limits, client: "x", now: Self.t0)
    }
    let result = try rig.process(
      ["CQSRVR>APJIC1,TCPIP*::N0CALL-7 :Removed from MYTEST{01"], now: Self.t0 + 5_000)
    #expect(
      result.storedEntries[.net] == 1 && result.stored == 0, "not a direct message the shipping app shows")
    #expect(try rig.sync("N0CALL-7", wants: []).isEmpty)
    let late = try rig.process(
      ["CQSRVR>APJIC1,TCPIP*::N0CALL-7 :Removed from MYTEST{02"], now: Self.t0 + Database.netLeaveGraceMs + 1)
    #expect(late.stored == 1, "after the grace, the packet is the message it always was")
  }
}
