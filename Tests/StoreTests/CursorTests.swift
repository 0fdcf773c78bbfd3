import Foundation
import TestSupport
import Testing

@testable import Store

@Suite struct CursorTests {
  @Test func serverTimeIsTheNewestTimestampNotTheClock() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL")
    try register(database, "K1ABC")
    #expect(try database.sync(station: "N0CALL", since: 0, now: 99_999).serverTime == 0)
    _ = try database.storeMessages([incoming("N0CALL", "a")], now: 1_000)
    _ = try database.storeMessages([incoming("K1ABC", "b")], now: 2_000)
    let result = try database.sync(station: "N0CALL", since: 0, now: 99_999)
    #expect(result.messages.map(\.timestamp) == [1_000])
    #expect(result.serverTime == 2_000, "the global newest timestamp, whoever it belongs to")
    #expect(try database.sync(station: "N0CALL", since: 5_000, now: 99_999).serverTime == 5_000)
    #expect(try database.sync(station: "N0CALL", since: 1_000, now: 99_999).messages.isEmpty)
    let unknown = try database.sync(station: "NOBODY", since: 0, now: 99_999)
    #expect(unknown.messages.isEmpty && unknown.serverTime == 2_000)
    #expect(try database.station("NOBODY") == nil, "a sync does not create stations")
  }

  /// A message committed by another connection while a sync is between its reads must not be
  /// covered by that sync's serverTime, and must come out of the next sync.
  @Test func commitDuringASyncIsNotSkipped() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let reader = try openStore(dir.database)
    defer { reader.close() }
    let writer = try openStore(dir.database)
    defer { writer.close() }
    try register(writer, "N0CALL")
    try register(writer, "K1ABC")
    _ = try writer.storeMessages([incoming("N0CALL", "before")], now: 1_000)

    var committed: [StoreOutcome] = []
    var hookError: (any Error)?
    reader.afterSyncMessagesRead = {
      do {
        committed += try writer.storeMessages([incoming("N0CALL", "during")], now: 2_000)
        committed += try writer.storeMessages([incoming("K1ABC", "elsewhere")], now: 2_500)
      } catch {
        hookError = error
      }
    }
    let first = try reader.sync(station: "N0CALL", since: 0, now: 9_000)
    reader.afterSyncMessagesRead = nil
    #expect(hookError == nil)
    #expect(committed == [.stored(messageID: 2, timestamp: 2_000), .stored(messageID: 3, timestamp: 2_500)])
    #expect(first.messages.map(\.text) == ["before"])
    #expect(first.serverTime == 1_000, "serverTime must not cover what the snapshot did not see")

    let second = try reader.sync(station: "N0CALL", since: first.serverTime, now: 9_500)
    #expect(second.messages.map(\.text) == ["during"])
    #expect(second.serverTime == 2_500)
    #expect(try reader.sync(station: "N0CALL", since: second.serverTime, now: 9_900).messages.isEmpty)
  }

  /// A writer thread stores 2000 messages (one transaction each, two stations, a stalling
  /// clock) while reader threads follow the cursor: each sees every message exactly once,
  /// in order.
  @Test func followersNeverSkipUnderConcurrentWrites() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let path = dir.database
    let options = StoreOptions(ringSize: 10_000)
    let setup = try openStore(path, options: options)
    try register(setup, "N0CALL")
    try register(setup, "K1ABC")
    setup.close()

    let total = 2_000
    let problems = Problems()
    let writerDone = Flag()
    let writer: @Sendable () -> Void = {
      defer { writerDone.raise() }
      do {
        let database = try openStore(path, options: options, migrate: false)
        defer { database.close() }
        for index in 0..<total {
          var batch = [incoming("N0CALL", "m\(index)", key: "N0CALL-\(index)")]
          if index.isMultiple(of: 3) { batch.append(incoming("K1ABC", "x\(index)", key: "K1ABC-\(index)")) }
          let outcomes = try database.storeMessages(batch, now: 1_000_000 + Int64(index / 7))
          if case .stored = outcomes[0] {} else { problems.add("writer: \(index) not stored: \(outcomes)") }
        }
      } catch {
        problems.add("writer: \(error)")
      }
    }
    func follower(_ name: String, readOnly: Bool) -> @Sendable () -> Void {
      {
        do {
          let database = try openStore(
            path, options: StoreOptions(ringSize: 10_000, readOnly: readOnly), migrate: false)
          defer { database.close() }
          var cursor: Int64 = 0
          var next = 0
          var lastTimestamp: Int64 = 0
          let deadline = Date().addingTimeInterval(120)
          while next < total {
            guard Date() < deadline else {
              problems.add("\(name): timed out at message \(next)")
              return
            }
            let writerFinished = writerDone.isRaised
            let result = try database.sync(station: "N0CALL", since: cursor, now: 0)
            for message in result.messages {
              guard message.text == "m\(next)" else {
                problems.add("\(name): expected m\(next), got \(message.text) (cursor \(cursor))")
                return
              }
              guard message.timestamp > lastTimestamp, message.timestamp > cursor,
                message.timestamp <= result.serverTime
              else {
                problems.add("\(name): timestamp \(message.timestamp) out of order (cursor \(cursor))")
                return
              }
              lastTimestamp = message.timestamp
              next += 1
            }
            guard result.serverTime >= cursor else {
              problems.add("\(name): serverTime went back from \(cursor) to \(result.serverTime)")
              return
            }
            cursor = result.serverTime
            if result.messages.isEmpty {
              guard !writerFinished else {
                problems.add("\(name): the writer is done but message \(next) never came")
                return
              }
              sched_yield()
            }
          }
        } catch {
          problems.add("\(name): \(error)")
        }
      }
    }
    runOnThreads([
      writer, follower("reader-1", readOnly: false), follower("reader-2", readOnly: false),
      follower("reader-ro", readOnly: true),
    ])
    #expect(problems.all == [])

    let check = try openStore(path, options: options)
    defer { check.close() }
    let everything = try syncEverything(check, station: "N0CALL")
    #expect(everything.messages.count == total)
    #expect(everything.serverTime == (try check.lastMessageTimestamp()))
    let stamps = everything.messages.map(\.timestamp)
    #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 })
  }

  /// Writers in several threads queue on BEGIN IMMEDIATE instead of failing with a busy
  /// snapshot, and every timestamp they are given is unique and increases per writer.
  @Test func concurrentWritersQueueInsteadOfFailing() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let path = dir.database
    let options = StoreOptions(ringSize: 10_000)
    let setup = try openStore(path, options: options)
    try register(setup, "N0CALL")
    setup.close()

    let perWriter = 400
    let problems = Problems()
    func writer(_ name: String) -> @Sendable () -> Void {
      {
        do {
          let database = try openStore(path, options: options, migrate: false)
          defer { database.close() }
          var previous: Int64 = 0
          for index in 0..<perWriter {
            let outcomes = try database.storeMessages(
              [incoming("N0CALL", "\(name)-\(index)", key: "\(name)-\(index)")], now: 5_000)
            guard case .stored(_, let timestamp) = outcomes.first, timestamp > previous else {
              problems.add("\(name): \(index) gave \(outcomes) after \(previous)")
              return
            }
            previous = timestamp
            _ = try database.ackDue(key: "\(name)-\(index)", now: 5_000, minIntervalMs: 30_000)
            try heartbeat(database, "N0CALL", token: "\(name)-token", now: 5_000)
          }
        } catch {
          problems.add("\(name): \(error)")
        }
      }
    }
    runOnThreads([writer("a"), writer("b"), writer("c")])
    #expect(problems.all == [])
    let check = try openStore(path, options: options)
    defer { check.close() }
    let stamps = try syncEverything(check, station: "N0CALL").messages.map(\.timestamp)
    #expect(stamps.count == 3 * perWriter)
    #expect(stamps == Array(5_000..<Int64(5_000 + 3 * perWriter)))
  }
}
