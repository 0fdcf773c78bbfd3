import Config
import Logging
import Testing

@testable import Push
@testable import Store

/// The push engine's own database work, one iteration at a time on the test's thread.
@Suite struct PushEngineTests {
  @Test func eachBatchIsReadInOneSnapshot() throws {
    let rig = try PushRig()
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.android, "fcm-token-1"), (.ios, apnsToken(1))])
    try rig.register("KJ7ABC", [(.ios, apnsToken(2))])
    try rig.store("N0CALL-7", ["one", "two"])
    try rig.store("KJ7ABC", ["three"])
    let clock = rig.clock
    let engine = try PushEngine(
      options: PushServiceOptions(
        databasePath: rig.databasePath, push: try rig.pushConfig(), logger: Logger(level: .error),
        clock: { clock.now() }))
    defer { engine.close() }
    let before = engine.database.transactionCounts
    _ = engine.iterate(woken: true)
    // Two stations, two batches: each batch's devices, count, senders and avatar come from one read transaction.
    #expect(engine.database.transactionCounts.reads == before.reads + 2)
  }

  @Test func theEngineSleepsUntilItsNextRetryNotUntilItsNextLook() throws {
    let rig = try PushRig()
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.android, "fcm-token-1")])
    try rig.store("N0CALL-7", ["one"])
    let clock = rig.clock
    let ids = try rig.database.dueOutbox(now: clock.now()).map(\.id)
    #expect(ids.count == 1)
    try rig.database.rescheduleOutbox(ids: ids, nextAttemptAt: clock.now() + 5000)
    var options = PushServiceOptions(
      databasePath: rig.databasePath, push: try rig.pushConfig(), logger: Logger(level: .error),
      clock: { clock.now() })
    options.pollIntervalMs = 600_000
    let engine = try PushEngine(options: options)
    defer { engine.close() }
    let wait = engine.iterate(woken: true)
    // Without a look for ten minutes, the retry due in 5 s still wakes the engine on time.
    #expect((4000...5000).contains(wait), "\(wait) ms")
    #expect(try rig.database.nextOutboxAttempt(after: clock.now()) != nil)
  }
}
