import Foundation
import TestSupport
import Testing

@testable import Store

/// The sending limits per client address and over everyone, cancelling a send, the transmit budget's delay on
/// the row and its counter (`Database+Sends.swift`, `sql/012_send_budget.sql`).
@Suite struct SendBudgetStoreTests {
  private func send(
    _ database: Database, _ text: String, from station: String = "OH7LZB-9", clientId: String? = nil,
    limits: SendLimits, now: Int64
  ) throws -> SendCreation {
    try database.createSend(
      NewSend(station: station, addressee: "KJ7ABC-7", text: text, clientId: clientId), limits: limits,
      now: now)
  }

  private func isCreated(_ creation: SendCreation) -> Bool {
    if case .created = creation { return true }
    return false
  }

  @Test func thePerAddressLimitCountsEveryStationOfOneAddressAndARefusalCountsNowhere() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    for station in ["OH7LZB-9", "OH7LZB-8", "W1AW"] { try register(database, station) }
    let limits = SendLimits(
      perMinute: 10, address: "203.0.113.7", perAddressPerMinute: 2, globalPerMinute: 100)
    #expect(isCreated(try send(database, "1", from: "OH7LZB-9", limits: limits, now: 1_000)))
    #expect(isCreated(try send(database, "2", from: "OH7LZB-8", limits: limits, now: 2_000)))
    #expect(
      try send(database, "3", from: "W1AW", limits: limits, now: 3_000)
        == .tooManyFromAddress(retryAfterMs: 58_000))
    #expect(try database.limitStatus()[.sendsPerAddressPerMinute] == 1)
    // Another address is not held by it.
    var other = limits
    other.address = "2001:db8:0:1::/64"
    #expect(isCreated(try send(database, "3", from: "W1AW", limits: other, now: 3_000)))
    // The refusal counted against no limit: W1AW's own minute has one send, not two.
    var station = other
    station.perMinute = 2
    #expect(isCreated(try send(database, "4", from: "W1AW", limits: station, now: 4_000)))
    #expect(
      try send(database, "5", from: "W1AW", limits: station, now: 5_000)
        == .tooManyPerMinute(retryAfterMs: 58_000))
    // The minute ends: the address may send again.
    #expect(isCreated(try send(database, "6", from: "OH7LZB-9", limits: limits, now: 61_000)))
    #expect(try database.sendStatus().accepted == 5)
  }

  @Test func theGlobalLimitHoldsEveryAddressAndStationTogether() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    for station in ["OH7LZB-9", "W1AW", "K1ABC", "N1XYZ", "W2XYZ", "K2ABC", "N2XYZ"] {
      try register(database, station)
    }
    func limits(_ address: String) -> SendLimits {
      SendLimits(perMinute: 10, address: address, perAddressPerMinute: 10, globalPerMinute: 3)
    }
    // One station sends at most a third of everyone's (docs/design.md "Who may do what"): three stations here.
    #expect(isCreated(try send(database, "1", from: "OH7LZB-9", limits: limits("192.0.2.1"), now: 0)))
    #expect(isCreated(try send(database, "2", from: "W1AW", limits: limits("192.0.2.2"), now: 10)))
    #expect(
      try send(database, "2b", from: "W1AW", limits: limits("192.0.2.9"), now: 15)
        == .tooManyPerMinute(retryAfterMs: 59_995))
    #expect(isCreated(try send(database, "3", from: "K1ABC", limits: limits("192.0.2.3"), now: 20)))
    // Past everyone's budget: a minute's worth more waits (its first copy when the window reopens), then refused.
    for (text, station) in [("4", "N1XYZ"), ("5", "W2XYZ"), ("6", "K2ABC")] {
      #expect(isCreated(try send(database, text, from: station, limits: limits("192.0.2.\(text)"), now: 30)))
    }
    #expect(
      try database.dueSends(now: .max, canTransmit: true).filter { $0.budgetDelayMs == 59_970 }.count == 3)
    #expect(
      try send(database, "7", from: "N2XYZ", limits: limits("192.0.2.7"), now: 30)
        == .tooManyGlobal(retryAfterMs: 59_970))
    #expect(try database.limitStatus()[.sendsPerMinuteGlobal] == 1)
    #expect(try database.limitStatus()[.sendsPerAddressPerMinute] == 0)
    // A replay is answered at the limit (it sends nothing).
    _ = try send(database, "r", from: "W1AW", clientId: "x", limits: limits("192.0.2.5"), now: 70_000)
    guard
      case .replayed = try send(
        database, "r", from: "W1AW", clientId: "x", limits: limits("192.0.2.5"), now: 70_010)
    else {
      Issue.record("no replay")
      return
    }
  }

  @Test func aCancelEndsTheSendWithANewTimestampAndTheListenerNeverSeesItAgain() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "OH7LZB-9")
    guard
      case .created(let message, _) = try send(
        database, "Hi", clientId: "c-1", limits: SendLimits(), now: 1_000)
    else {
      Issue.record("not created")
      return
    }
    let id = try #require(try database.dueSends(now: 1_000, canTransmit: true).first?.id)
    _ = try database.recordSendSchedule(
      [.transmitted(id: id, at: 1_000, nextAt: 32_000, expiresAt: 200_000)], now: 1_000)
    let cancellation = try database.cancelSend(station: "oh7lzb-9", clientId: "c-1", now: 5_000)
    guard case .cancelled(let cancelled, let serverTime) = cancellation else {
      Issue.record("\(cancellation)")
      return
    }
    #expect(cancelled.state == .cancelled && cancelled.clientId == "c-1" && cancelled.msgno == message.msgno)
    #expect(cancelled.timestamp > message.timestamp && serverTime == cancelled.timestamp)
    #expect(
      try database.sync(station: "OH7LZB-9", since: message.timestamp, now: 6_000).messages == [cancelled])
    // Nothing due any more, a copy planned before the cancel is not recorded, and no push was queued.
    #expect(try database.dueSends(now: 100_000, canTransmit: true).isEmpty)
    #expect(try database.nextSendEvent(now: 100_000, canTransmit: true) == nil)
    #expect(
      try database.recordSendSchedule(
        [.transmitted(id: id, at: 32_000, nextAt: nil, expiresAt: 200_000)], now: 32_000
      ).transmitted.isEmpty)
    #expect(try database.dueOutbox(now: 300_000).isEmpty)
    // Again: answered as it is, unchanged.
    #expect(
      try database.cancelSend(station: "OH7LZB-9", clientId: "c-1", now: 7_000)
        == .finished(cancelled, serverTime: cancelled.timestamp))
    let status = try database.sendStatus()
    #expect(status[.cancelled] == 1 && status.inFlight == 0 && status.transmissions == 1)
    // An ACK after the cancel changes nothing.
    #expect(
      try database.answerSends(
        [SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: message.msgno ?? "", kind: .ack)],
        now: 8_000
      ).isEmpty)
  }

  @Test func cancellingAnAnsweredOrUnknownSend() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "OH7LZB-9")
    _ = try send(database, "Hi", clientId: "a", limits: SendLimits(), now: 1_000)
    _ = try database.answerSends(
      [SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: "1", kind: .ack)], now: 2_000)
    guard
      case .finished(let acked, _) = try database.cancelSend(station: "OH7LZB-9", clientId: "a", now: 3_000)
    else {
      Issue.record("not answered as it is")
      return
    }
    #expect(acked.state == .acked)
    #expect(try database.sendStatus()[.cancelled] == 0)
    #expect(try database.cancelSend(station: "OH7LZB-9", clientId: "b", now: 3_000) == .unknownClientId)
    #expect(try database.cancelSend(station: "W1AW", clientId: "a", now: 3_000) == .unknownStation)
    // Another station's clientId is not this one's.
    try register(database, "W1AW")
    #expect(try database.cancelSend(station: "W1AW", clientId: "a", now: 3_000) == .unknownClientId)
  }

  @Test func theBudgetDelayIsAddedToTheRowAndCopiesThatWaitedAreCounted() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "OH7LZB-9")
    _ = try send(database, "one", limits: SendLimits(), now: 1_000)
    _ = try send(database, "two", limits: SendLimits(), now: 1_000)
    let ids = try database.dueSends(now: 1_000, canTransmit: true).map(\.id)
    #expect(ids.count == 2)
    _ = try database.recordSendSchedule(
      [
        .transmitted(id: ids[0], at: 1_000, nextAt: 32_000, expiresAt: 200_000),
        .transmitted(id: ids[1], at: 9_000, nextAt: 40_000, expiresAt: 200_000, budgetDelayMs: 8_000),
      ], now: 9_000)
    #expect(try database.sendStatus().budgetDelayed == 1)
    #expect(try database.sendStatus().transmissions == 2)
    let rows = try database.dueSends(now: 50_000, canTransmit: true)
    #expect(rows.map(\.budgetDelayMs) == [0, 8_000])
    // The copy due first comes first.
    #expect(rows.map(\.nextAt) == [32_000, 40_000])
    _ = try database.recordSendSchedule(
      [.transmitted(id: ids[1], at: 50_000, nextAt: nil, expiresAt: 200_000, budgetDelayMs: 10_000)],
      now: 50_000)
    let two = try database.dueSends(now: 200_000, canTransmit: true).first { $0.text == "two" }
    #expect(two?.budgetDelayMs == 18_000)
    #expect(try database.sendStatus().budgetDelayed == 2)
  }

  @Test func theDueCopyFirstComesFirstWhateverTheOrderOfTheSends() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "OH7LZB-9")
    _ = try send(database, "old", limits: SendLimits(), now: 1_000)
    _ = try send(database, "new", limits: SendLimits(), now: 2_000)
    let ids = try database.dueSends(now: 2_000, canTransmit: true).map(\.id)
    _ = try database.recordSendSchedule(
      [
        .transmitted(id: ids[0], at: 2_000, nextAt: 90_000, expiresAt: 900_000),
        .transmitted(id: ids[1], at: 2_000, nextAt: 40_000, expiresAt: 900_000),
      ], now: 2_000)
    #expect(try database.dueSends(now: 100_000, canTransmit: true).map(\.text) == ["new", "old"])
  }

  @Test func theMigrationKeepsEverySendAndAllowsTheCancelledState() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try Database(path: dir.database)
    defer { database.close() }
    try database.migrate(upTo: 9)
    // Registered as schema 9 stores a station (this build's upsert writes columns of later schemas).
    try database.execute(
      """
      INSERT INTO stations (address, base, ssid, platform, ack_messages, registered_at, heartbeat_at)
        VALUES ('OH7LZB-9', 'OH7LZB', 9, NULL, 0, 1000, 1000)
      """)
    // A send in flight with one copy recorded, as schema 9's responder and listener wrote it (this build's
    // message writes use columns of later schemas).
    try database.execute(
      """
      INSERT INTO messages (id, station, direction, peer, text, msgno, timestamp)
        VALUES (1, 'OH7LZB-9', 'sent', 'KJ7ABC-7', 'before', '1', 1000);
      INSERT INTO sends (message_id, station, addressee, msgno, client_id, state, created_at, transmissions,
                         last_sent_at, next_at, expires_at)
        VALUES (1, 'OH7LZB-9', 'KJ7ABC-7', '1', 'k', 'pending', 1000, 1, 1000, 32000, 200000);
      UPDATE meta SET value = '1000' WHERE key = 'last_message_ts';
      """)
    // Upgraded with a send in flight: it is still there, as it was, and can be cancelled.
    try database.migrate()
    let row = try #require(try database.dueSends(now: 32_000, canTransmit: true).first)
    #expect(
      row.text == "before" && row.transmissions == 1 && row.lastSentAt == 1_000 && row.budgetDelayMs == 0)
    guard
      case .cancelled(let message, _) = try database.cancelSend(
        station: "OH7LZB-9", clientId: "k", now: 40_000)
    else {
      Issue.record("not cancelled")
      return
    }
    #expect(message.state == .cancelled)
    #expect(
      try database.sync(station: "OH7LZB-9", since: 0, now: 41_000).messages.map(\.state) == [.cancelled])
  }
}
