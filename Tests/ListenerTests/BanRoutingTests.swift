import APRS
import Store
import Testing

@testable import Listener

/// The operator's bans in the writer: a banned sender's messages to any station are dropped before anything is
/// stored, pushed or ACKed, in the batch's own transaction.
@Suite struct BanRoutingTests {
  @Test func aBannedSendersMessagesAreNeitherStoredNorAcked() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB", ackMessages: true)
    try test.register("KJ7ABC-7", ackMessages: true)
    try test.database.ban(Ban(target: .call("OH7AA"), reason: "flood", createdAt: 1, until: 5_000_100))
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let lines = [
      "OH7AA-1>APRS,qAR,T2TEST::OH7LZB   :spam{1", "OH7AA>APRS,qAR,T2TEST::KJ7ABC-7 :spam{2",
      "OH7BB>APRS,qAR,T2TEST::OH7LZB   :hello{3",
    ].map(bytes)
    let result = try writer.process(lines, stations: try test.stations(), canTransmit: true, now: 5_000_000)
    #expect(result.banned == 2 && result.stored == 1 && result.storedStations == ["OH7LZB"])
    #expect(result.acks.map(text) == ["OH7LZB>APZACL,TCPIP*::OH7BB    :ack3\r\n"])
    #expect(try test.database.dueOutbox(now: 5_000_001).count == 1)
    // Once the ban ends, the next copy is an ordinary message.
    let later = try writer.process(
      [lines[0]], stations: try test.stations(), canTransmit: true, now: 5_000_100)
    #expect(later.banned == 0 && later.stored == 1 && later.acks.count == 1)
  }
}
