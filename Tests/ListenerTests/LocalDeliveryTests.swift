import APRS
import Store
import Testing

@testable import Listener

/// A `/v1/send` between two stations of this server: aprsc never sends the listener its own copy back, so the
/// connection routes what it wrote locally (``LineOrigin/transmitted``), through the same writer as APRS-IS lines.
@Suite struct LocalDeliveryTests {
  static let t0: Int64 = 1_800_000_000_000
  static let copy = "OH7LZB-9>APZACL,TCPIP*::KJ7ABC-7 :Hello{1"
  static let ack = "KJ7ABC-7>APZACL,TCPIP*::OH7LZB-9 :ack1"

  private func sendHello(_ test: TestDatabase) throws {
    let creation = try test.database.createSend(
      NewSend(station: "OH7LZB-9", addressee: "KJ7ABC-7", text: "Hello", clientId: nil),
      limits: SendLimits(), now: Self.t0)
    guard case .created = creation else { throw TestError("not created: \(creation)") }
  }

  private func sent(_ test: TestDatabase) throws -> [StoredMessage] {
    try test.database.sync(station: "OH7LZB-9", since: 0, now: Self.t0 + 100_000).messages
  }

  @Test func aSendToAStationHereIsStoredForItAndItsAckEndsTheSend() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB-9")
    try test.register("KJ7ABC-7", ackMessages: true)
    try sendHello(test)
    // Outgoing tracking on: the transmitted copy is still no second sent entry for the sender.
    let writer = MessageWriter(database: test.database, router: LineRouter(trackOutgoing: true))
    let stations = try test.stations()
    let first = try writer.process(
      [QueuedLine(bytes(Self.copy), origin: .transmitted)], stations: stations, canTransmit: true,
      now: Self.t0 + 10)
    #expect(first.stored == 1 && first.storedStations == ["KJ7ABC-7"])
    #expect(first.acks.map(text) == ["KJ7ABC-7>APZACL,TCPIP*::OH7LZB-9 :ack1\r\n"])
    let inbox = try test.database.sync(station: "KJ7ABC-7", since: 0, now: Self.t0 + 100).messages
    #expect(inbox.map(\.peer) == ["OH7LZB-9"] && inbox.map(\.text) == ["Hello"] && inbox.first?.msgno == "1")
    #expect(try sent(test).count == 1)
    // The ACK, written by the connection, comes back the same way: the sender's entry is acked.
    let answered = try writer.process(
      [QueuedLine(bytes(Self.ack), origin: .transmitted)], stations: stations, canTransmit: true,
      now: Self.t0 + 20)
    #expect(answered.sendsAnswered.map(\.state) == [.acked] && answered.receipts == 1)
    #expect(try sent(test).map(\.state) == [.acked])
    // A second copy (written before the ACK arrived) and a copy heard from APRS-IS (an igate) are the same
    // message: stored once, one push.
    let again = try MessageWriter(database: test.database, router: LineRouter()).process(
      [
        QueuedLine(bytes(Self.copy), origin: .transmitted),
        QueuedLine(bytes("OH7LZB-9>APZACL,TCPIP*,qAR,OH7RDA::KJ7ABC-7 :Hello{1")),
      ], stations: stations, canTransmit: true, now: Self.t0 + 31_000)
    #expect(again.stored == 0 && again.duplicates == 2 && again.storedStations.isEmpty)
    #expect(try test.database.sync(station: "KJ7ABC-7", since: 0, now: Self.t0 + 40_000).messages.count == 1)
  }

  @Test func anAddresseeThatNeverAcksLeavesTheSendPending() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB-9")
    try test.register("KJ7ABC-7", ackMessages: false)
    try sendHello(test)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let result = try writer.process(
      [QueuedLine(bytes(Self.copy), origin: .transmitted)], stations: try test.stations(), canTransmit: true,
      now: Self.t0 + 10)
    #expect(result.stored == 1 && result.acks.isEmpty)
    #expect(try sent(test).map(\.state) == [.pending])
  }

  /// What the listener wrote for stations elsewhere (ACKs, sends) is no APRS-IS traffic: not counted as skipped.
  @Test func transmittedLinesForNobodyHereAreNotCountedAsSkipped() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB-9")
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let lines = [
      "OH7LZB-9>APZACL,TCPIP*::OH7AA-1  :ack5", "OH7LZB-9>APZACL,TCPIP*::KJ7ABC-7 :Hello{1",
    ]
    let mine = try writer.process(
      lines.map { QueuedLine(bytes($0), origin: .transmitted) }, stations: try test.stations(),
      canTransmit: true, now: Self.t0)
    #expect(mine.stored == 0 && mine.skipped.isEmpty)
    let heard = try writer.process(
      lines.map { bytes($0) }, stations: try test.stations(), canTransmit: true, now: Self.t0)
    #expect(heard.skipped[.notForUs] == 2)
  }
}
