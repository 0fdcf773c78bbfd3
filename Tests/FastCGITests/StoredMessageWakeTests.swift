import API
import CompanionFiles
import Foundation
import Platform
import Store
import TestSupport
import Testing

@testable import FastCGI

/// The whole path that wakes a held long poll in the responder, with the real parts: a message stored through a
/// connection that wakes long polls (``Store/CommitNotice``, as the listener's and the responder's are) sends one
/// byte to the long-poll wake socket (``CompanionFiles/WakeSocket``, role `.longPolls`); the keeper sleeps on it
/// and only then asks ``API/SyncWatch``, which reads the database and names the station. No look every
/// `pollIntervalMs` in between: the asks are counted.
@Suite struct StoredMessageWakeTests {
  /// `SyncWatch` with its asks and wake reads counted. Its fallback look is a minute here (5 s in the responder),
  /// so a slow machine's seconds never see one.
  final class CountedWatch: WakeSource, @unchecked Sendable {
    let watch: SyncWatch
    private let lock = NSLock()
    private var askCount = 0
    private var drainCount = 0

    init(_ watch: SyncWatch) { self.watch = watch }

    var asks: Int { lock.withLock { askCount } }
    var drains: Int { lock.withLock { drainCount } }
    var wakeDescriptor: Int32? { watch.wakeDescriptor }
    var fallbackPollMs: Int64 { 60_000 }
    func drainWakes() {
      lock.withLock { drainCount += 1 }
      watch.drainWakes()
    }
    func changes(recheckFrom: Int64?) -> [String: Int64] {
      lock.withLock { askCount += 1 }
      return watch.changes(recheckFrom: recheckFrom)
    }
  }

  @Test func aStoredMessageWakesAHeldPollThroughTheWakeSocketWithoutTheLook() throws {
    let directory = try makeTemporaryDirectory("stored-wake")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/db.sqlite"
    let setup = try Database(path: path)
    _ = try setup.migrate()
    _ = try setup.upsertStation(
      StationUpsert(
        address: "N0CALL-7", base: "N0CALL", ssid: 7, platform: nil, pushToken: nil, ackMessages: false,
        isRegistration: true), now: epochMilliseconds())
    let since = try setup.messageActivity(after: .max).newestTimestamp
    setup.close()
    // What the responder binds beside the database, and what the listener stores through.
    let socket = try #require(
      try WakeSocket.bind(.longPolls, path: WakeSocket.Role.longPolls.path(forDatabase: path)))
    let source = CountedWatch(try SyncWatch(database: try Database(path: path), wakeSocket: socket))
    defer { source.watch.close() }
    var options = StoreOptions()
    options.commitNotice = .wakingLongPolls(of: path)
    let writer = try Database(path: path, options: options)
    defer { writer.close() }

    let rig = try ServerRig(
      workers: 2, parking: ParkingOptions(pollIntervalMs: 2, source: source),
      code: ParkingTests.code(Recorder()))
    let held = try rig.connect()
    try held.send(ParkingTests.parkRequest("N0CALL-7", after: since, seen: since))
    #expect(waitFor { rig.server.parkedCount == 1 && source.asks >= 1 }, "held and rechecked")
    // A second request that runs out after 300 ms is the test's clock: with the look every 2 ms, 300 ms would be
    // about 150 asks; with the wake socket there is only its own recheck.
    let clock = try rig.connect()
    try clock.send(ParkingTests.parkRequest("CLOCK", waitMs: 300))
    #expect(waitFor { rig.server.parkedCount == 2 && source.asks >= 2 }, "the clock held and rechecked")
    #expect(clock.receive().reply?.text == "timedOut CLOCK")
    #expect(source.asks == 2, "asked \(source.asks) times in 300 ms: only the two rechecks")
    #expect(source.drains == 0 && rig.server.parkedCount == 1, "nothing committed: nothing woke, still held")

    let message = IncomingMessage(
      station: "N0CALL-7", direction: .received, peer: "W1AW", text: "wake up", msgno: nil,
      dedupKey: "wake|1",
      dedupWindowMs: 1000)
    _ = try writer.storeMessages([message], now: epochMilliseconds())
    #expect(held.receive().reply?.text == "woken N0CALL-7")
    #expect(source.drains == 1, "the commit's one datagram")
    #expect(source.asks == 3, "asked \(source.asks) times: once more, for the datagram")
    #expect(rig.stop() == true)
  }
}
