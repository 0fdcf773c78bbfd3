// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import Foundation
import TestSupport
import Testing

@testable import Store

/// Outbound messages in the store (`Database+Sends.swift`, `sql/007_sends.sql`).
@Suite struct DatabaseSendsTests {
  static let limits = SendLimits(perMinute: 10, inFlight: 20)

  private func send(
    _ database: Database, _ text: String, from station: String = "OH7LZB-9",
    to addressee: String = "KJ7ABC-7",
    clientId: String? = nil, limits: SendLimits = DatabaseSendsTests.limits, now: Int64
  ) throws -> SendCreation {
    try database.createSend(
      NewSend(station: station, addressee: addressee, text: text, clientId: clientId), limits: limits,
      now: now)
  }

  private func created(_ creation: SendCreation) throws -> StoredMessage {
    guard case .created(let message, _) = creation else {
      Issue.record("expected a new send, got \(creation)")
      throw CocoaError(.featureUnsupported)
    }
    return message
  }

  @Test func aSendIsASentMessageWithANumberAPendingStateAndTheCursorsNextTimestamp() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "OH7LZB-9")
    _ = try database.storeMessages([incoming("OH7LZB-9", "earlier")], now: 5_000)
    let creation = try send(database, "Hello", to: "kj7abc-7", clientId: "c-1", now: 4_000)
    let message = try created(creation)
    #expect(
      message
        == StoredMessage(
          direction: .sent, peer: "KJ7ABC-7", text: "Hello", msgno: "1", timestamp: 5_001, state: .pending,
          clientId: "c-1"))
    #expect(creation == .created(message, serverTime: 5_001))
    // Not news for a push's count.
    #expect(try database.unpulledCount(station: "OH7LZB-9") == 1)
    #expect(try database.sync(station: "OH7LZB-9", since: 5_000, now: 6_000).messages == [message])
    #expect(try database.recentMessages(station: "OH7LZB-9", limit: 5).last == message)
    #expect(try database.sendStatus().accepted == 1)
    #expect(try database.sendStatus().inFlight == 1)
    // Waiting for the listener to schedule it.
    let due = try database.dueSends(now: 4_000, canTransmit: false)
    #expect(due.map(\.msgno) == ["1"])
    #expect(due.first?.expiresAt == nil && due.first?.nextAt == nil && due.first?.createdAt == 4_000)
  }

  @Test func numbersCountUpPerStationAndSkipNumbersInFlight() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "OH7LZB-9")
    try register(database, "W1AW")
    #expect(try created(send(database, "a", now: 1_000)).msgno == "1")
    #expect(try created(send(database, "b", to: "W1AW", now: 1_001)).msgno == "2")
    #expect(try created(send(database, "c", from: "W1AW", to: "OH7LZB-9", now: 1_002)).msgno == "1")
    // Near the wrap: 99999 is free, then 1 and 2 are in flight, so 3.
    try database.execute("UPDATE send_numbers SET last = 99998 WHERE station = 'OH7LZB-9'")
    #expect(try created(send(database, "d", now: 1_003)).msgno == "99999")
    #expect(try created(send(database, "e", now: 1_004)).msgno == "3")
    // A number ends its flight: it may come round again.
    _ = try database.answerSends(
      [SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: "1", kind: .ack)], now: 2_000)
    try database.execute("UPDATE send_numbers SET last = 99999 WHERE station = 'OH7LZB-9'")
    #expect(try created(send(database, "f", now: 2_001)).msgno == "1")
    // The unique index holds it too.
    #expect(throws: StoreError.self) {
      try database.execute(
        "UPDATE sends SET msgno = '2' WHERE msgno = '1' AND station = 'OH7LZB-9' AND state = 'pending'")
    }
  }

  @Test func aClientIdReplaysTheFirstMessageAndStoresNothing() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "OH7LZB-9")
    try register(database, "W1AW")
    let first = try created(send(database, "Hello", clientId: "abc", now: 1_000))
    let replay = try send(database, "Something else", to: "W1AW", clientId: "abc", now: 2_000)
    #expect(replay == .replayed(first, serverTime: first.timestamp))
    #expect(try count(database, "sends") == 1)
    // Another station may use the same clientId.
    #expect(
      try created(send(database, "x", from: "W1AW", to: "OH7LZB-9", clientId: "abc", now: 2_001)).msgno == "1"
    )
    // A replay after the state changed shows the state now.
    _ = try database.answerSends(
      [SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: "1", kind: .ack)], now: 3_000)
    guard case .replayed(let again, _) = try send(database, "Hello", clientId: "abc", now: 4_000) else {
      Issue.record("not a replay")
      return
    }
    #expect(again.state == .acked && again.timestamp > first.timestamp)
    #expect(try database.sendStatus().accepted == 2, "replays are not counted")
  }

  @Test func limitsUnknownStationsAndTheMinuteWindow() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(try send(database, "x", now: 1_000) == .unknownStation)
    try register(database, "OH7LZB-9")
    let limits = SendLimits(perMinute: 3, inFlight: 2)
    _ = try created(send(database, "1", limits: limits, now: 1_000))
    _ = try created(send(database, "2", limits: limits, now: 1_001))
    #expect(try send(database, "3", limits: limits, now: 1_002) == .tooManyInFlight)
    _ = try database.answerSends(
      [SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: "1", kind: .rej)], now: 1_003)
    _ = try created(send(database, "3", limits: limits, now: 1_004))
    _ = try database.answerSends(
      [SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: "2", kind: .ack)], now: 1_005)
    #expect(try send(database, "4", limits: limits, now: 1_006) == .tooManyPerMinute(retryAfterMs: 59_994))
    _ = try created(send(database, "4", limits: limits, now: 61_000))
  }

  @Test func answersEndTheSendWithANewTimestampThatAFollowingCursorSees() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "OH7LZB-9")
    let acked = try created(send(database, "to be acked", now: 1_000))
    let rejected = try created(send(database, "to be rejected", now: 1_001))
    let replied = try created(send(database, "to get a reply", to: "W1AW", now: 1_002))
    // The phone's cursor, taken before any answer.
    let cursor = try database.sync(station: "OH7LZB-9", since: 0, now: 1_100).serverTime
    #expect(cursor == replied.timestamp)
    let finished = try database.answerSends(
      [
        SendAnswer(station: "oh7lzb-9", peer: "kj7abc-7", msgno: acked.msgno!, kind: .ack),
        SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: rejected.msgno!, kind: .rej),
        SendAnswer(station: "OH7LZB-9", peer: "W1AW", msgno: replied.msgno!, kind: .replyAck),
        // From someone else, for a number in flight: not an answer.
        SendAnswer(station: "OH7LZB-9", peer: "SOMEONE", msgno: acked.msgno!, kind: .rej),
        // Again: nothing in flight any more.
        SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: acked.msgno!, kind: .rej),
      ], now: 2_000)
    #expect(finished.map(\.state) == [.acked, .rejected, .acked])
    #expect(finished.map(\.timestamp) == [2_000, 2_001, 2_002])
    let after = try database.sync(station: "OH7LZB-9", since: cursor, now: 3_000)
    #expect(after.messages.map(\.text) == ["to be acked", "to be rejected", "to get a reply"])
    #expect(after.messages.map(\.state) == [.acked, .rejected, .acked])
    #expect(after.serverTime == 2_002)
    // Only the rejection queues a push (a sendFailed notice).
    let pushes = try database.dueOutbox(now: 10_000)
    #expect(pushes.map(\.message.text) == ["to be rejected"])
    #expect(pushes.first?.message.direction == .sent && pushes.first?.message.state == .rejected)
    let status = try database.sendStatus()
    #expect(status[.acked] == 2 && status[.rejected] == 1 && status[.expired] == 0 && status.inFlight == 0)
    #expect(try database.dueSends(now: 100_000, canTransmit: true).isEmpty)
  }

  @Test func theScheduleIsRecordedAndExpiryReStampsAndQueuesAPush() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "OH7LZB-9")
    let message = try created(send(database, "Hello", now: 1_000))
    let id = try #require(try database.dueSends(now: 1_000, canTransmit: true).first?.id)
    #expect(try database.nextSendEvent(now: 1_000, canTransmit: true) == 1_000, "never scheduled: now")
    let (transmitted, finished) = try database.recordSendSchedule(
      [.transmitted(id: id, at: 1_100, nextAt: 32_100, expiresAt: 200_000)], now: 1_100)
    #expect(transmitted == [id] && finished.isEmpty)
    #expect(try database.dueSends(now: 32_099, canTransmit: true).isEmpty)
    #expect(try database.dueSends(now: 32_100, canTransmit: false).isEmpty, "copies wait for a login")
    #expect(try database.dueSends(now: 32_100, canTransmit: true).map(\.transmissions) == [1])
    #expect(try database.nextSendEvent(now: 2_000, canTransmit: true) == 32_100)
    #expect(try database.nextSendEvent(now: 2_000, canTransmit: false) == 200_000)
    #expect(try database.dueSends(now: 200_000, canTransmit: false).map(\.lastSentAt) == [1_100])
    #expect(try database.sync(station: "OH7LZB-9", since: 0, now: 3_000).messages == [message], "no re-stamp")
    let (none, expired) = try database.recordSendSchedule([.expired(id: id)], now: 200_000)
    #expect(none.isEmpty && expired.map(\.state) == [.expired])
    let synced = try database.sync(station: "OH7LZB-9", since: message.timestamp, now: 200_001).messages
    #expect(synced.map(\.state) == [.expired] && synced.first?.timestamp == 200_000)
    #expect(try database.dueOutbox(now: 300_000).map(\.message.state) == [.expired])
    // A finished send records nothing more.
    #expect(
      try database.recordSendSchedule([.transmitted(id: id, at: 1, nextAt: nil, expiresAt: 2)], now: 1)
        .transmitted
        .isEmpty)
    let status = try database.sendStatus()
    #expect(status.transmissions == 1 && status[.expired] == 1 && status.inFlight == 0)
    #expect(try database.nextSendEvent(now: 300_000, canTransmit: true) == nil)
  }

  @Test func theRingSparesSendsInFlightAndUnregisterDropsThem() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database, options: StoreOptions(ringSize: 3))
    defer { database.close() }
    try register(database, "OH7LZB-9")
    _ = try created(send(database, "in flight", now: 1_000))
    _ = try database.storeMessages(
      (1...5).map { incoming("OH7LZB-9", "m\($0)") }, now: 2_000)
    let kept = try database.recentMessages(station: "OH7LZB-9", limit: 10).map(\.text)
    #expect(kept == ["in flight", "m3", "m4", "m5"])
    _ = try database.answerSends(
      [SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: "1", kind: .ack)], now: 3_000)
    _ = try database.storeMessages([incoming("OH7LZB-9", "m6")], now: 4_000)
    #expect(
      try database.recentMessages(station: "OH7LZB-9", limit: 10).map(\.text) == ["m5", "in flight", "m6"])
    _ = try created(send(database, "again", now: 5_000))
    _ = try database.deleteStation("OH7LZB-9")
    #expect(try count(database, "sends") == 0)
    #expect(try count(database, "send_numbers") == 1, "numbers go on where they were")
  }

  @Test func theStationsOwnSendHeardBackThroughAnIgateIsThatSendNotASecondEntry() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "OH7LZB-9")
    let sent = try created(try send(database, "Hello", to: "KJ7ABC-7", now: 10_000))
    let msgno = try #require(sent.msgno)
    // What `trackOutgoing` stores of a line the station was heard sending.
    func heard(_ text: String, to peer: String = "kj7abc-7", msgno: String) -> IncomingMessage {
      incoming(
        "OH7LZB-9", text, from: peer, msgno: msgno, key: "sent\u{1F}\(peer):\(msgno):\(text)",
        direction: .sent)
    }
    #expect(try database.storeMessages([heard("Hello", msgno: msgno)], now: 20_000) == [.duplicate])
    // Another number, another text, or another addressee is another message the station sent (its radio's).
    let others = try database.storeMessages(
      [
        heard("Hello", msgno: msgno + "1"), heard("Bye", msgno: msgno),
        heard("Hello", to: "W1AW", msgno: msgno),
      ],
      now: 20_001)
    #expect(others.allSatisfy { if case .stored = $0 { true } else { false } }, "\(others)")
    let sync = try database.sync(station: "OH7LZB-9", since: 0, now: 30_000)
    #expect(sync.messages.filter { $0.text == "Hello" && $0.peer == "KJ7ABC-7" }.count == 1)
    // Two hours later the number may have come round again: a copy is a message of its own.
    let late = try database.storeMessages(
      [heard("Hello", msgno: msgno)], now: 20_002,
      stampedAt: sent.timestamp + Database.ownSendEchoWindowMs + 1)
    #expect(late.allSatisfy { if case .stored = $0 { true } else { false } }, "\(late)")
  }
}
