import APRS
import Testing

@testable import Listener
@testable import Store

@Suite struct MessageWriterTests {
  static let message = "OH7AA-1>APRS,WIDE1-1,qAo,OH7AA::OH7LZB   :Testing, 1 2 3{42"

  @Test func retransmissionsAreStoredOnceAndAckedAtMostOncePer30Seconds() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB", ackMessages: true)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let stations = try test.stations()
    let t0: Int64 = 1_800_000_000_000
    var acks: [String] = []
    var stored = 0
    var duplicates = 0
    var suppressed = 0
    // Copies at 0 s, 10 s, 30 s, 45 s, 61 s: ACKs at 0, 30 and 61 (each at least 30 s after the previous one).
    for offset: Int64 in [0, 10_000, 30_000, 45_000, 61_000] {
      let result = try writer.process(
        [bytes(Self.message)], stations: stations, canTransmit: true, now: t0 + offset)
      acks += result.acks.map(text)
      stored += result.stored
      duplicates += result.duplicates
      suppressed += result.acksSuppressed
    }
    #expect(stored == 1 && duplicates == 4 && suppressed == 2)
    #expect(acks == Array(repeating: "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack42\r\n", count: 3))
    let sync = try test.database.sync(station: "OH7LZB", since: 0, now: t0 + 70_000)
    #expect(sync.messages.count == 1)
    #expect(sync.messages.first?.peer == "OH7AA-1" && sync.messages.first?.msgno == "42")
    #expect(try test.database.dueOutbox(now: t0 + 70_000).count == 1)
  }

  /// Unregistered and registered again between two copies: the next copy is stored for the new station, then
  /// ACKed (never ACKed while nobody has it).
  @Test func aCopyAfterReRegisteringIsStoredForTheNewStationThenAcked() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB", ackMessages: true)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let t0: Int64 = 1_800_000_000_000
    let first = try writer.process(
      [bytes(Self.message)], stations: try test.stations(), canTransmit: true, now: t0)
    #expect(first.stored == 1 && first.acks.count == 1)
    let stale = try test.stations()
    try test.database.deleteStation("OH7LZB")
    // A batch routed with the old snapshot: the station is gone at commit, nothing stored, nothing ACKed.
    let gone = try writer.process([bytes(Self.message)], stations: stale, canTransmit: true, now: t0 + 31_000)
    #expect(gone.stored == 0 && gone.duplicates == 0 && gone.unknownStation == 1 && gone.acks.isEmpty)
    try test.register("OH7LZB", ackMessages: true, now: t0 + 40_000)
    let again = try writer.process(
      [bytes(Self.message)], stations: try test.stations(now: t0 + 40_000), canTransmit: true,
      now: t0 + 62_000)
    #expect(again.stored == 1 && again.duplicates == 0)
    #expect(again.acks.map(text) == ["OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack42\r\n"])
    #expect(again.storedStations == ["OH7LZB"])
    let sync = try test.database.sync(station: "OH7LZB", since: 0, now: t0 + 70_000)
    #expect(sync.messages.map(\.text) == ["Testing, 1 2 3"])
  }

  @Test func copiesInOneBatchAreStoredOnceAndAckedOnce() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB", ackMessages: true)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let result = try writer.process(
      [bytes(Self.message), bytes(Self.message), bytes("OH7AA-1>APRS::OH7LZB   :second{43")],
      stations: try test.stations(), canTransmit: true, now: 5_000_000)
    #expect(result.stored == 2 && result.duplicates == 1)
    #expect(
      result.acks.map(text) == [
        "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack42\r\n", "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack43\r\n",
      ])
    #expect(result.storedStations == ["OH7LZB"])
  }

  @Test func aBatchIsOneWriteTransactionAndABatchOfNothingIsNone() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB", ackMessages: true)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let stations = try test.stations()
    let before = test.database.transactionCounts
    // Messages (with ACKs due) and a receipt: stored, recorded and ACKed in one transaction.
    let result = try writer.process(
      [
        bytes(Self.message), bytes("OH7AA-1>APRS::OH7LZB   :second{43"),
        bytes("OH7AA-1>APRS::OH7LZB   :ack5"),
      ],
      stations: stations, canTransmit: true, now: 5_000_000)
    #expect(result.stored == 2 && result.receipts == 1 && result.acks.count == 2)
    #expect(
      test.database.transactionCounts == TransactionCounts(writes: before.writes + 1, reads: before.reads))
    // Lines that lead to nothing take no transaction (and no write lock) at all.
    let skipped = try writer.process(
      [bytes("N0CALL>APRS:!4903.50N/07201.75W-"), bytes("not a packet")], stations: stations,
      canTransmit: true, now: 5_001_000)
    #expect(skipped.stored == 0 && skipped.acks.isEmpty)
    #expect(
      test.database.transactionCounts == TransactionCounts(writes: before.writes + 1, reads: before.reads))
  }

  @Test func noAckWithoutCommit() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB", ackMessages: true)
    let stations = try test.stations()
    // Another connection holds the write lock past the busy timeout: the batch's transaction fails.
    let blocked = try Database(path: test.path, options: StoreOptions(busyTimeoutMs: 50))
    defer { blocked.close() }
    let other = try Database(path: test.path)
    defer { other.close() }
    let locker = LockHolder(database: other)
    try locker.begin()
    let writer = MessageWriter(database: blocked, router: LineRouter())
    #expect(throws: StoreError.busy) {
      _ = try writer.process([bytes(Self.message)], stations: stations, canTransmit: true, now: 1_000_000)
    }
    try locker.rollback()
    #expect(try test.database.sync(station: "OH7LZB", since: 0, now: 1).messages.isEmpty)
    // The retry (the sender's next copy) stores it and ACKs it: nothing was recorded as ACKed before.
    let retry = try writer.process(
      [bytes(Self.message)], stations: stations, canTransmit: true, now: 1_000_100)
    #expect(retry.stored == 1 && retry.acks.count == 1)
  }

  @Test func ackMessagesFalseAndUnverifiedStoreWithoutAcks() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB", ackMessages: false)
    try test.register("N0CALL-7", ackMessages: true)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let quiet = try writer.process(
      [bytes(Self.message)], stations: try test.stations(), canTransmit: true, now: 1_000)
    #expect(quiet.stored == 1 && quiet.acks.isEmpty)
    let unverified = try writer.process(
      [bytes("OH7AA-1>APRS::N0CALL-7 :hi{1")], stations: try test.stations(), canTransmit: false, now: 2_000)
    #expect(unverified.stored == 1 && unverified.acks.isEmpty)
  }

  @Test func receiptsAndSkipsAreCountedAndUnknownStationsNotStored() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB", ackMessages: true)
    let stations = try test.stations()
    try test.database.deleteStation("OH7LZB")  // unregistered after the snapshot
    try test.register("N0CALL-7", ackMessages: true)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let result = try writer.process(
      [
        bytes(Self.message), bytes("OH7AA-1>APRS::N0CALL-7 :ack9"), bytes("garbage"),
        bytes("OH7AA-1>APRS::BLN1     :x"),
        bytes("OH7AA-1>APRS:!6028.51N/02505.68E#"),
      ],
      stations: LiveStationSet(
        stations.ackMessages.map { LiveStation(address: $0.key, ackMessages: $0.value) } + [
          LiveStation(address: "N0CALL-7", ackMessages: true)
        ]), canTransmit: true, now: 3_000)
    #expect(result.stored == 0 && result.unknownStation == 1 && result.acks.isEmpty)
    #expect(result.receipts == 1)
    #expect(result.skipped == [.invalid: 1, .bulletin: 1, .notMessage: 1])
    let receipts = try test.database.receipts(station: "N0CALL-7")
    #expect(receipts.map(\.msgno) == ["9"] && receipts.first?.receivedAt == 3_000)
  }

  @Test func theStationsOwnSendHeardBackThroughAnIgateIsNotStoredTwice() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB", ackMessages: true)
    let creation = try test.database.createSend(
      NewSend(station: "OH7LZB", addressee: "W1AW", text: "going out", clientId: nil),
      limits: SendLimits(perMinute: 10, inFlight: 20), now: 8_000)
    guard case .created(let sent, _) = creation, let msgno = sent.msgno else {
      Issue.record("no send: \(creation)")
      return
    }
    let writer = MessageWriter(database: test.database, router: LineRouter(trackOutgoing: true))
    let result = try writer.process(
      [bytes("OH7LZB>APRS,qAR,IGATE::W1AW     :going out{\(msgno)")], stations: try test.stations(),
      canTransmit: true, now: 9_000)
    #expect(result.stored == 0, "the igate's copy is the send itself")
    let sync = try test.database.sync(station: "OH7LZB", since: 0, now: 9_001)
    #expect(sync.messages.map(\.text) == ["going out"])
  }

  @Test func trackedSentMessagesAreStoredForTheSender() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB", ackMessages: true)
    let writer = MessageWriter(database: test.database, router: LineRouter(trackOutgoing: true))
    let result = try writer.process(
      [bytes("OH7LZB>APRS::W1AW     :going out{4")], stations: try test.stations(), canTransmit: true,
      now: 9_000)
    #expect(result.stored == 1 && result.acks.isEmpty && result.storedStations.isEmpty)
    let sync = try test.database.sync(station: "OH7LZB", since: 0, now: 9_001)
    #expect(sync.messages.map(\.direction) == [.sent] && sync.messages.first?.peer == "W1AW")
    #expect(try test.database.dueOutbox(now: 10_000).isEmpty)  // no push for one's own message
  }
}

extension MessageWriterTests {
  @Test func withTheListenersRegistryTheDatabaseSaysWhoWantsAcksInsideTheOneTransaction() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB", ackMessages: true)
    try test.register("N0CALL-7", ackMessages: false)
    try test.register("EXPIRED", ackMessages: true)  // registered, but not served (not in the registry)
    var planner = FilterPlanner()
    planner.insert(address: "OH7LZB")
    planner.insert(address: "N0CALL-7")
    let registry = StationRegistry(planner)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let before = test.database.transactionCounts
    let result = try writer.process(
      [
        bytes(Self.message), bytes("OH7AA-1>APRS::N0CALL-7 :no ack wanted{2"),
        bytes("OH7AA-1>APRS::EXPIRED  :not served{3"), bytes("OH7AA-1>APRS::OH7LZ    :a neighbour{4"),
        bytes("OH7AA-1>APRS::OH7LZB-1 :other ssid{5"),
      ],
      stations: registry, canTransmit: true, now: 7_000)
    #expect(result.stored == 2)
    #expect(result.acks.map(text) == ["OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack42\r\n"])
    #expect(result.skipped == [.notForUs: 3])
    #expect(
      test.database.transactionCounts == TransactionCounts(writes: before.writes + 1, reads: before.reads))
    // The station changes its mind: the next copy's ACK follows the database, not a snapshot.
    try test.database.execute("UPDATE stations SET ack_messages = 1 WHERE address = 'N0CALL-7'")
    let again = try writer.process(
      [bytes("OH7AA-1>APRS::N0CALL-7 :now acked{6")], stations: registry, canTransmit: true, now: 8_000)
    #expect(again.acks.map(text) == ["N0CALL-7>APZACL,TCPIP*::OH7AA-1  :ack6\r\n"])
  }
}

/// Holds the write lock of a database from another connection (an open BEGIN IMMEDIATE).
final class LockHolder {
  let database: Database
  init(database: Database) { self.database = database }
  func begin() throws { try database.execute("BEGIN IMMEDIATE") }
  func rollback() throws { try database.execute("ROLLBACK") }
}
