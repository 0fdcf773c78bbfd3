import Logging
import Platform
import Store
import Synchronization
import Testing

@testable import Push

/// The push sender across steps of the wall clock: a push waiting in its coalescing window keeps its wait and is
/// not dropped as older than `maxAge` after a step of +2 h, nor held for an hour after −1 h.
@Suite struct PushClockStepTests {
  /// A monotonic clock the test moves (with the rig's wall clock for time passing, without it for a step).
  final class Monotonic: Sendable {
    let offset = Atomic<Int64>(0)
    func now() -> Int64 { monotonicMilliseconds() + offset.load(ordering: .relaxed) }
  }

  @Test(arguments: [2 * 3_600_000, -3_600_000] as [Int64])
  func aWaitingPushKeepsItsWindowAcrossAStep(step: Int64) throws {
    let rig = try PushRig(messaging: "coalesceWindow = 10s\nmaxAge = 1h")
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.android, "fcm-token-1")])
    try rig.store("N0CALL-7", ["one"])
    let clock = rig.clock
    let monotonic = Monotonic()
    var options = PushServiceOptions(
      databasePath: rig.databasePath, push: try rig.pushConfig(), logger: Logger(level: .error),
      clock: { clock.now() })
    options.monotonic = { monotonic.now() }
    let engine = try PushEngine(options: options)
    defer { engine.close() }
    _ = engine.iterate(woken: true)  // the window opens
    #expect(try rig.pending().count == 1)
    clock.advance(by: step)  // the wall clock steps; no time passes
    _ = engine.iterate(woken: true)
    #expect(try rig.pending().count == 1, "dropped or sent at the step")
    #expect(try rig.fake.requests().isEmpty)
    // 11 s pass on both clocks: the window closes and the push goes out (not dropped, not held).
    clock.advance(by: 11_000)
    monotonic.offset.add(11_000, ordering: .relaxed)
    let sent = try eventually {
      _ = engine.iterate(woken: true)
      return try rig.pending().isEmpty
    }
    #expect(sent, "the push was not sent after its window")
    #expect(try rig.fake.requests().count == 1)
  }
}
