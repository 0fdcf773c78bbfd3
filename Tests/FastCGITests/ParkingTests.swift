import Foundation
import Platform
import Testing

@testable import FastCGI

#if canImport(Glibc)
  import Glibc
#endif

/// Parked requests over a real unix socket: woken by their key only, answered at their deadline,
/// freed when the client goes away, answered all at once by a stop; no worker is held meanwhile.
@Suite struct ParkingTests {
  typealias Client = FastCGIClient

  /// A request the test handler parks: `KEY` wakes it above `AFTER`; `WAIT_MS` until its deadline;
  /// `SEEN` is what its read saw; `REPARK` parks it once more when it is woken; `GROUP` is its
  /// ticket's group.
  static func parkRequest(
    _ key: String, after: Int64 = 0, waitMs: Int64 = 60_000, seen: Int64 = 0, repark: Bool = false,
    group: String? = nil
  ) -> [UInt8] {
    var extra = [("KEY", key), ("AFTER", String(after)), ("WAIT_MS", String(waitMs)), ("SEEN", String(seen))]
    if repark { extra.append(("REPARK", "1")) }
    if let group { extra.append(("GROUP", group)) }
    return Client.request(Client.params("GET", "/park", extra: extra))
  }

  /// What the test handler keeps with a parked request.
  struct Context: Sendable {
    var key: String
    var reparks: Int
  }

  /// Parks `/park` requests, answers everything else 200 `plain`; a resumed request is answered
  /// `REASON KEY` (after parking once more on its first wake when it asked to).
  static func code(_ log: Recorder, source: TestWakeSource? = nil) -> @Sendable (Int) -> WorkerHandlers {
    { _ in
      WorkerHandlers(
        handle: { request, writer in
          log.record(request)
          guard request.path == "/park" else {
            writer.send(Response(status: 200, reason: "OK", body: Array("plain".utf8)))
            return
          }
          let key = request.params["KEY"] ?? ""
          let waitMs = Int64(request.params["WAIT_MS"] ?? "") ?? 60_000
          let ticket = ParkTicket(
            key: key, group: request.params["GROUP"], after: Int64(request.params["AFTER"] ?? "") ?? 0,
            seen: Int64(request.params["SEEN"] ?? "") ?? 0, deadline: monotonicMilliseconds() + waitMs,
            context: Context(key: key, reparks: request.params["REPARK"] == nil ? 0 : 1))
          let outcome = writer.park(ticket)
          if outcome != .parked {
            writer.send(Response(status: 503, reason: "Refused", body: Array("\(outcome)".utf8)))
          }
        },
        resume: { parked, writer in
          var context = parked.ticket.context as! Context
          if parked.reason == .woken && context.reparks > 0 {
            context.reparks -= 1
            var ticket = parked.ticket
            ticket.context = context
            ticket.seen = source?.current ?? ticket.seen
            if writer.park(ticket) == .parked { return }
          }
          writer.send(
            Response(status: 200, reason: "OK", body: Array("\(parked.reason) \(context.key)".utf8)))
        })
    }
  }

  /// Parks `count` requests on new connections (keys `K0`, `K1`, …) and waits until all are parked.
  static func park(_ rig: ServerRig, count: Int, waitMs: Int64 = 60_000, prefix: String = "K") throws
    -> [FastCGIClient]
  {
    var clients: [FastCGIClient] = []
    for index in 0..<count {
      let client = try rig.connect()
      try client.send(parkRequest("\(prefix)\(index)", waitMs: waitMs))
      clients.append(client)
    }
    return clients
  }

  @Test func aParkedRequestIsAnsweredWhenItsKeyPassesItsVersionAndNotBefore() throws {
    let source = TestWakeSource()
    let rig = try ServerRig(
      workers: 2, parking: ParkingOptions(pollIntervalMs: 2, source: source), code: Self.code(Recorder()))
    let alpha = try rig.connect()
    try alpha.send(Self.parkRequest("ALPHA", after: 10))
    let beta = try rig.connect()
    try beta.send(Self.parkRequest("BETA", after: 10))
    #expect(waitFor { rig.server.parkedCount == 2 })

    source.set("ALPHA", 10)  // not above 10: still parked
    source.set("GAMMA", 99)  // nobody waits for it
    #expect(try rig.exchange(Client.request(Client.params("GET", "/plain"))).reply?.text == "plain")
    #expect(rig.server.parkedCount == 2)

    source.set("ALPHA", 11)
    #expect(alpha.receive().reply?.text == "woken ALPHA")
    #expect(rig.server.parkedCount == 1)
    source.set("BETA", 12)
    #expect(beta.receive().reply?.text == "woken BETA")
    #expect(rig.server.parkedCount == 0)
    #expect(rig.stop() == true)
  }

  @Test func aParkedRequestIsAnsweredAtItsDeadline() throws {
    let rig = try ServerRig(workers: 1, parking: ParkingOptions(), code: Self.code(Recorder()))
    let client = try rig.connect()
    let started = monotonicMilliseconds()
    try client.send(Self.parkRequest("SLOW", waitMs: 300))
    #expect(client.receive().reply?.text == "timedOut SLOW")
    #expect(monotonicMilliseconds() - started >= 300)
    #expect(rig.stop() == true)
  }

  /// Woken for nothing it shows, the resumer parks the request again: it waits on, until its deadline.
  @Test func aResumedRequestMayParkAgain() throws {
    let source = TestWakeSource()
    let rig = try ServerRig(
      workers: 1, parking: ParkingOptions(pollIntervalMs: 2, source: source),
      code: Self.code(Recorder(), source: source))
    let client = try rig.connect()
    try client.send(Self.parkRequest("AGAIN", waitMs: 1500, repark: true))
    #expect(waitFor { rig.server.parkedCount == 1 })
    source.set("AGAIN", 1)
    #expect(client.receive().reply?.text == "timedOut AGAIN")
    #expect(rig.stop() == true)
  }

  /// The source is told the oldest read a newly parked request saw, so it looks again from there.
  @Test func theSourceRechecksFromTheOldestReadOfNewlyParkedRequests() throws {
    let source = TestWakeSource()
    let rig = try ServerRig(
      workers: 1, parking: ParkingOptions(pollIntervalMs: 2, source: source), code: Self.code(Recorder()))
    let client = try rig.connect()
    try client.send(Self.parkRequest("SEEN", seen: 7))
    #expect(waitFor { source.rechecks.contains(7) })
    #expect(rig.stop() == true)
    #expect(client.receive().reply?.text == "stopping SEEN")
  }

  @Test func aClientThatGoesAwayFreesItsParkedRequest() throws {
    let log = Recorder()
    let rig = try ServerRig(workers: 1, parking: ParkingOptions(), code: Self.code(log))
    var clients = try Self.park(rig, count: 10)
    #expect(waitFor { rig.server.parkedCount == 10 })
    clients.removeFirst(4)  // closed by deinit
    #expect(waitFor { rig.server.parkedCount == 6 })
    #expect(rig.log.wait(for: "msg=\"connection closed\" reason=\"the client went away\"", count: 4))

    // An aborted request is freed too.
    try clients[0].send(Client.record(Client.RecordType.abortRequest.rawValue, []))
    #expect(clients[0].receive().closedWithoutEnd)
    #expect(waitFor { rig.server.parkedCount == 5 })
    #expect(rig.stop() == true)
    for client in clients.dropFirst() { #expect(client.receive().reply?.text.hasPrefix("stopping") == true) }
  }

  /// 500 parked requests on 2 workers: other requests are served meanwhile, and a stop answers every
  /// parked one before `run` returns; nothing is parked after the stop.
  @Test func manyParkedRequestsHoldNoWorkerAndAStopAnswersThemAll() throws {
    let rig = try ServerRig(workers: 2, parking: ParkingOptions(), code: Self.code(Recorder()))
    let clients = try Self.park(rig, count: 500)
    #expect(waitFor { rig.server.parkedCount == 500 })
    for index in 0..<20 {
      let reply = try rig.exchange(Client.request(Client.params("GET", "/plain/\(index)"))).reply
      #expect(reply?.status == 200)
    }
    rig.server.stop()
    for (index, client) in clients.enumerated() {
      #expect(client.receive().reply?.text == "stopping K\(index)")
    }
    #expect(rig.stop() == true)
    #expect(rig.server.parkedCount == 0)
  }

  @Test func pastMaxParkedTheHandlerIsToldToAnswer() throws {
    let rig = try ServerRig(workers: 1, parking: ParkingOptions(maxParked: 3), code: Self.code(Recorder()))
    let clients = try Self.park(rig, count: 3)
    #expect(waitFor { rig.server.parkedCount == 3 })
    let refused = try rig.exchange(Self.parkRequest("FOURTH")).reply
    #expect(refused?.status == 503 && refused?.text == "refused")
    #expect(rig.stop() == true)
    #expect(clients.allSatisfy { $0.receive().reply?.text.hasPrefix("stopping") == true })
  }

  /// A server run without resumers cannot park: the handler hears so and answers.
  @Test func withoutResumersParkingIsUnsupported() throws {
    let rig = try ServerRig(workers: 1) { _ in
      { _, writer in
        let outcome = writer.park(
          ParkTicket(key: "K", after: 0, seen: 0, deadline: monotonicMilliseconds() + 1000, context: 0))
        writer.send(Response(status: 200, reason: "OK", body: Array("\(outcome) \(writer.canPark)".utf8)))
      }
    }
    #expect(try rig.exchange(Client.request(Client.params("GET", "/x"))).reply?.text == "unsupported false")
    #expect(rig.stop() == true)
  }

  /// A client that sends half a header and stalls holds nothing up (libfcgi's accept lock did).
  @Test func aStalledClientDoesNotStopOthersBeingServed() throws {
    let rig = try ServerRig(workers: 1) { _ in echoHandler(Recorder()) }
    let stalled = try rig.connect()
    try stalled.send([1, 1, 0])
    for index in 0..<5 {
      #expect(try rig.exchange(Client.request(Client.params("GET", "/after/\(index)"))).reply?.status == 200)
    }
    stalled.finishSending()
    #expect(stalled.receive().closedWithoutEnd)
    #expect(rig.stop() == true)
  }

  /// `FCGI_KEEP_CONN`: two requests, one after the other, on one connection.
  @Test func aKeptConnectionCarriesSeveralRequests() throws {
    let recorder = Recorder()
    let rig = try ServerRig(workers: 1) { _ in echoHandler(recorder) }
    let client = try rig.connect()
    for path in ["/first", "/second"] {
      let body = Array(path.utf8)
      try client.send(
        Client.begin(flags: 1)
          + Client.stream(.params, Client.encodeParams(Client.params("POST", path, body: body)))
          + Client.record(Client.RecordType.params.rawValue, []) + Client.stream(.stdin, body)
          + Client.record(Client.RecordType.stdin.rawValue, []))
      #expect(client.receive().reply?.body == body)
    }
    #expect(recorder.requests.map(\.path) == ["/first", "/second"])
    client.finishSending()
    #expect(client.receive().closedWithoutEnd)
    #expect(rig.stop() == true)
  }
}

/// A wake source the test moves by hand, behaving like the database's: every `set` is a commit with
/// a sequence number; an ask reports the keys set since the last ask, or since `recheckFrom` when
/// that is older.
final class TestWakeSource: WakeSource, @unchecked Sendable {
  private let lock = NSLock()
  private var versions: [String: (version: Int64, sequence: Int64)] = [:]
  private var sequence: Int64 = 0
  private var reported: Int64 = 0
  private var recheckValues: [Int64] = []

  func set(_ key: String, _ version: Int64) {
    lock.withLock {
      sequence += 1
      versions[key] = (version, sequence)
    }
  }

  /// The sequence number of the last `set`: what a read now would have seen.
  var current: Int64 { lock.withLock { sequence } }

  /// Every `recheckFrom` the server passed.
  var rechecks: [Int64] { lock.withLock { recheckValues } }

  func changes(recheckFrom: Int64?) -> [String: Int64] {
    lock.withLock {
      if let recheckFrom { recheckValues.append(recheckFrom) }
      let from = min(reported, recheckFrom ?? reported)
      reported = sequence
      return versions.filter { $0.value.sequence > from }.mapValues(\.version)
    }
  }
}

/// Waits (at most `timeout` seconds, looking every millisecond) until `condition` holds.
func waitFor(timeout: Double = 20, _ condition: () -> Bool) -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while !condition() {
    if Date() > deadline { return false }
    usleep(1000)
  }
  return true
}

/// Workers beyond the CPU count do not watch the listening socket, but take a waiting connection
/// when the ones that do are all stuck in handlers.
@Suite struct AcceptorTests {
  @Test func connectionsAreServedWhileTheAcceptingWorkersAreStuck() throws {
    let gate = Gate()
    let workers = 6
    let rig = try ServerRig(workers: workers) { index in
      { request, writer in
        if request.path == "/stuck" {
          gate.arrive()
          _ = gate.waitUntilOpen()
        }
        writer.send(Response(status: 200, reason: "OK", body: Array("\(index)".utf8)))
      }
    }
    // Stick every worker but one in a handler.
    var stuck: [FastCGIClient] = []
    for _ in 0..<(workers - 1) {
      let client = try rig.connect()
      try client.send(FastCGIClient.request(FastCGIClient.params("GET", "/stuck")))
      stuck.append(client)
    }
    #expect(gate.wait(forArrivals: workers - 1))
    #expect(
      try rig.exchange(FastCGIClient.request(FastCGIClient.params("GET", "/free"))).reply?.status == 200)
    gate.open()
    #expect(stuck.allSatisfy { $0.receive().reply?.status == 200 })
    #expect(rig.stop() == true)
  }
}

/// A source with a wake descriptor (as the API's long-poll wake socket): the keeper asks it when the descriptor is
/// readable, when a request parks (its recheck), and at its fallback, never on the poll interval.
@Suite struct DescriptorWakeTests {
  final class PipeWakeSource: WakeSource, @unchecked Sendable {
    let inner = TestWakeSource()
    let pipe = WakePipe()!
    private let lock = NSLock()
    private var askCount = 0

    var asks: Int { lock.withLock { askCount } }
    var wakeDescriptor: Int32? { pipe.readDescriptor }
    var fallbackPollMs: Int64 { 60_000 }
    func drainWakes() { pipe.drain() }
    func changes(recheckFrom: Int64?) -> [String: Int64] {
      lock.withLock { askCount += 1 }
      return inner.changes(recheckFrom: recheckFrom)
    }
  }

  @Test func aParkedRequestWaitsForTheDescriptorNotThePollInterval() throws {
    let source = PipeWakeSource()
    let rig = try ServerRig(
      workers: 2, parking: ParkingOptions(pollIntervalMs: 2, source: source),
      code: ParkingTests.code(Recorder()))
    // BETA parks and is rechecked (ask 1), then ALPHA (ask 2): no recheck is pending after that.
    let beta = try rig.connect()
    try beta.send(ParkingTests.parkRequest("BETA", waitMs: 1_500))
    #expect(waitFor { rig.server.parkedCount == 1 && source.asks >= 1 }, "BETA parked and rechecked")
    let alpha = try rig.connect()
    try alpha.send(ParkingTests.parkRequest("ALPHA", after: 10))
    #expect(waitFor { rig.server.parkedCount == 2 && source.asks >= 2 }, "ALPHA parked and rechecked")
    // A commit that wakes nobody: ALPHA's key passes its version, but nothing is asked until the descriptor says.
    source.inner.set("ALPHA", 11)
    #expect(beta.receive().reply?.text == "timedOut BETA")
    #expect(rig.server.parkedCount == 1, "BETA's 1.5 s passed with no ask: ALPHA still waits")
    #expect(source.asks == 2, "asked \(source.asks) times: only for the rechecks, never every 2 ms")
    source.pipe.wake()
    #expect(alpha.receive().reply?.text == "woken ALPHA")
    #expect(rig.stop() == true)
  }
}
