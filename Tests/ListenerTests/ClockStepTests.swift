import APRS
import Logging
import Platform
import Store
import Synchronization
import Testing

@testable import Listener

/// Steps of the wall clock (±1 h, +2 h) while messages arrive and sends are in flight: durations are measured on
/// the monotonic clock (the writer's steady clock, the sender's step following), the wall clock only stamps.
@Suite struct ClockStepTests {
  static let message = "OH7AA-1>APRS,WIDE1-1,qAo,OH7AA::OH7LZB   :Testing, 1 2 3{42"
  static let t0: Int64 = 1_800_000_000_000
  static let hour: Int64 = 3_600_000

  /// The writer as the listener runs it: `now` from the steady clock (monotonic since the anchor), `stampedAt`
  /// from the wall clock, which steps between the first copy and a retransmission 31 s later.
  @Test(arguments: [hour, 2 * hour, -hour])
  func aRetransmissionAfterAStepIsStoredOncePushedOnceAndAckedByThe30SecondRule(step: Int64) throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB", ackMessages: true)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let stations = try test.stations()
    let steady = SteadyClock(epochMs: Self.t0, monotonicMs: 5_000)
    // Copies at 0, 10 s (suppressed ACK), 31 s (ACK again) on the monotonic clock; the wall clock steps after
    // the first.
    var results: [BatchResult] = []
    for (offset, wall) in [
      (0, Self.t0), (10_000, Self.t0 + step + 10_000), (31_000, Self.t0 + step + 31_000),
    ] {
      results.append(
        try writer.process(
          [bytes(Self.message)], stations: stations, canTransmit: true,
          now: steady.now(monotonicMs: 5_000 + Int64(offset)), stampedAt: wall))
    }
    #expect(results.map(\.stored) == [1, 0, 0])
    #expect(results.map(\.duplicates) == [0, 1, 1])
    #expect(results.map(\.acks.count) == [1, 0, 1])
    let sync = try test.database.sync(station: "OH7LZB", since: 0, now: Self.t0 + 2 * Self.hour + 60_000)
    #expect(sync.messages.count == 1)
    #expect(sync.messages.first?.timestamp == Self.t0, "the wall clock stamps")
    #expect(try test.database.dueOutbox(now: Self.t0 + 3 * Self.hour).count == 1, "pushed once")

    // Maintenance on the stepped wall clock prunes no open window, in the listener (its steady clock) and in
    // `aprs-cloud maintenance` (never past the newest stored window): the next copy is still a duplicate.
    let wall = Self.t0 + step + 40_000
    try test.database.pruneExpired(now: wall, windowsNow: steady.now(monotonicMs: 5_000 + 40_000))
    try test.database.pruneExpired(now: wall, windowsNow: min(wall, try test.database.steadyClockFloor()))
    let later = try writer.process(
      [bytes(Self.message)], stations: stations, canTransmit: true,
      now: steady.now(monotonicMs: 5_000 + 62_000), stampedAt: Self.t0 + step + 62_000)
    #expect(later.stored == 0 && later.duplicates == 1 && later.acks.count == 1)
  }

  @Test func aBackwardStepKeepsTheCursorIncreasing() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB", ackMessages: true)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let stations = try test.stations()
    let first = try writer.process(
      [bytes("OH7AA-1>APRS::OH7LZB   :one{1")], stations: stations, canTransmit: true, now: Self.t0)
    let second = try writer.process(
      [bytes("OH7AA-1>APRS::OH7LZB   :two{2")], stations: stations, canTransmit: true, now: Self.t0 + 1_000,
      stampedAt: Self.t0 - Self.hour)
    #expect(first.stored == 1 && second.stored == 1)
    let stamps = try test.database.sync(station: "OH7LZB", since: 0, now: Self.t0).messages.map(\.timestamp)
    #expect(stamps == [Self.t0, Self.t0 + 1])
  }

  /// The listener's clock floor: the newest dedup and ACK times stored.
  @Test func theSteadyClocksFloorIsTheNewestStoredWindow() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    #expect(try test.database.steadyClockFloor() == 0)
    try test.register("OH7LZB", ackMessages: true)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    _ = try writer.process(
      [bytes(Self.message)], stations: try test.stations(), canTransmit: true, now: Self.t0 + Self.hour,
      stampedAt: Self.t0)
    #expect(try test.database.steadyClockFloor() == Self.t0 + Self.hour)
  }

  // MARK: Sends in flight

  final class Rig: Sendable {
    let wall = Atomic<Int64>(ClockStepTests.t0)
    let mono = Atomic<Int64>(1_000)
    let lines = Mutex<[String]>([])

    func advance(_ ms: Int64, step: Int64 = 0) {
      wall.add(ms + step, ordering: .relaxed)
      mono.add(ms, ordering: .relaxed)
    }

    func sender(_ path: String) throws -> OutboundSender {
      OutboundSender(
        database: try Database(path: path),
        scheduler: SendScheduler(offsetsMs: [0, 31_000, 62_000, 124_000], ackWaitMs: 60_000), pollMs: 50,
        logger: Logger(level: .error), canTransmit: { true },
        transmit: { lines in self.lines.withLock { $0 += lines.map { String(decoding: $0, as: UTF8.self) } }
        },
        clock: { self.wall.load(ordering: .relaxed) }, monotonic: { self.mono.load(ordering: .relaxed) },
        followsClockSteps: true)
    }
  }

  static func inFlight(step: Int64) throws -> (copies: Int, state: SendState?) {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB-9")
    let rig = Rig()
    let sender = try rig.sender(test.path)
    defer { sender.database.close() }
    _ = try test.database.createSend(
      NewSend(station: "OH7LZB-9", addressee: "KJ7ABC-7", text: "Hello", clientId: nil), limits: SendLimits(),
      now: t0)
    try sender.check()  // the first copy
    rig.advance(31_000, step: step)
    try sender.check()  // the second, 31 s later on the monotonic clock
    let state = try test.database.sync(station: "OH7LZB-9", since: 0, now: rig.wall.load(ordering: .relaxed))
      .messages.last { $0.direction == .sent }?.state
    return (rig.lines.withLock { $0.count }, state)
  }

  @Test(arguments: [-hour, hour, 2 * hour])
  func aSendInFlightKeepsItsScheduleAcrossAStep(step: Int64) throws {
    let result = try Self.inFlight(step: step)
    #expect(result.copies == 2, "step \(step): \(result.copies) copies")
    #expect(result.state == .pending, "step \(step): \(String(describing: result.state))")
  }

  @Test func withoutAStepNothingMoves() throws {
    let result = try Self.inFlight(step: 0)
    #expect(result.copies == 2 && result.state == .pending)
  }
}
