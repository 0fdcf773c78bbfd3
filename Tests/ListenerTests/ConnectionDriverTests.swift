import APRS
import Config
import Logging
import Platform
import Store
import Synchronization
import Testing

@testable import Listener

#if canImport(Glibc)
  import Glibc
#endif

/// A TCP server on loopback that plays APRS-IS by hand, one connection at a time.
final class LoopbackServer: @unchecked Sendable {
  let listener: Int32
  let port: Int
  private(set) var client: Int32 = -1
  private var pending: [UInt8] = []

  init() throws {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var on: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, listen(fd, 4) == 0 else {
      close(fd)
      throw TestError("cannot listen")
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    listener = fd
    port = Int(UInt16(bigEndian: address.sin_port))
  }

  deinit {
    if client >= 0 { close(client) }
    close(listener)
  }

  /// Accepts the next connection (closing the previous one), waiting at most `timeoutMs`.
  func accept(timeoutMs: Int32 = 5_000) -> Bool {
    var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
    guard poll(&fds, 1, timeoutMs) == 1 else { return false }
    if client >= 0 { close(client) }
    client = Glibc.accept(listener, nil, nil)
    pending = []
    return client >= 0
  }

  /// Closes the current connection (the server ends it).
  func dropClient() {
    if client >= 0 { close(client) }
    client = -1
  }

  func send(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
  }

  func send(_ bytes: [UInt8]) {
    _ = bytes.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
  }

  /// The next line the client sent (without CR LF), or nil after `timeoutMs` or at the end of the connection.
  func readLine(timeoutMs: Int32 = 5_000) -> String? {
    let deadline = monotonicMilliseconds() + Int64(timeoutMs)
    while true {
      if let end = pending.firstIndex(of: 0x0A) {
        let line = pending[..<end].filter { $0 != 0x0D }
        pending.removeSubrange(...end)
        return String(decoding: line, as: UTF8.self)
      }
      let remaining = deadline - monotonicMilliseconds()
      guard remaining > 0 else { return nil }
      var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0)]
      guard poll(&fds, 1, Int32(remaining)) == 1 else { return nil }
      var buffer = [UInt8](repeating: 0, count: 4096)
      let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
      guard count > 0 else { return nil }
      pending += buffer[0..<count]
    }
  }

  /// Waits for the client to close the connection.
  func waitForClose(timeoutMs: Int32 = 5_000) -> Bool {
    let deadline = monotonicMilliseconds() + Int64(timeoutMs)
    while monotonicMilliseconds() < deadline {
      var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0)]
      guard poll(&fds, 1, 100) >= 0 else { return true }
      if fds[0].revents != 0 {
        var buffer = [UInt8](repeating: 0, count: 4096)
        if recv(client, &buffer, buffer.count, 0) <= 0 { return true }
      }
    }
    return false
  }
}

/// A connection driver on its own thread against a ``LoopbackServer``.
struct DriverRig {
  let server: LoopbackServer
  let queue: LineQueue
  let counters = ListenerCounters()
  let shared = SharedState()
  let driver: ConnectionDriver
  let done: Latch

  init(
    host: String = "127.0.0.1", queueCapacity: Int = 1_000, queueBytes: Int = .max,
    watchdogMs: Int64 = 60_000,
    ackIntervalMs: Int64 = 30_000
  ) throws {
    server = try LoopbackServer()
    queue = LineQueue(capacity: queueCapacity, byteCapacity: queueBytes)
    var settings = ConnectionSettings(
      servers: [APRSISServer(host: host, port: server.port)], login: "N0CALL-10", passcode: 13023,
      watchdogMs: watchdogMs, outageBackoff: OutageBackoff(firstAtMostMs: 50, maximumMs: 100),
      refusalBackoff: Backoff(initialMs: 50, maximumMs: 100))
    settings.loginTimeoutMs = 5_000
    var machine = ConnectionStateMachine(settings: settings, jitter: { 0.5 })
    _ = machine.handle(.filterChanged(filterLine(["OH7LZB"]), now: monotonicMilliseconds()))
    driver = ConnectionDriver(
      machine: machine, queue: queue, counters: counters, shared: shared,
      logger: Logger(level: .error), connectTimeoutMs: 2_000, ackIntervalMs: ackIntervalMs, wake: WakePipe()!,
      onStatusChange: {})
    let driver = self.driver
    guard let done = try? startThread(name: "test-connection", { driver.run() }) else {
      throw TestError("no thread")
    }
    self.done = done
  }

  /// Accepts, sends the banner, checks the login line (the first line on the connection), answers verified (or
  /// unverified).
  func login(verified: Bool = true) throws {
    guard server.accept() else { throw TestError("no connection") }
    server.send("# aprsc 2.1.21-gtest\r\n")
    let line = server.readLine()
    #expect(
      line == "user N0CALL-10 pass 13023 vers aprs-cloud \(ListenerVersion.current) filter g/OH7LZB/OH7LZB-0")
    server.send("# logresp N0CALL-10 \(verified ? "verified" : "unverified"), server T2TEST\r\n")
    #expect(waitFor { shared.status.connected })
  }

  func stop() {
    driver.stop()
    #expect(done.wait(timeoutMs: 5_000))
  }
}

/// Polls `condition` every few milliseconds for at most `timeoutMs`.
func waitFor(timeoutMs: Int64 = 5_000, _ condition: () -> Bool) -> Bool {
  let deadline = monotonicMilliseconds() + timeoutMs
  while !condition() {
    if monotonicMilliseconds() >= deadline { return false }
    usleep(2_000)
  }
  return true
}

@Suite(.serialized) struct ConnectionDriverTests {
  @Test func aFullQueueDropsAndCountsButTheSocketIsAlwaysRead() throws {
    let rig = try DriverRig(queueCapacity: 10)
    defer { rig.stop() }
    try rig.login()
    var burst = ""
    for index in 0..<100 { burst += "OH7AA-1>APRS::OH7LZB   :line \(index){\(index)\r\n" }
    rig.server.send(burst)
    rig.server.send([UInt8](repeating: 0x41, count: 600) + [0x0D, 0x0A])  // too long
    rig.server.send([0x4F, 0x48, 0x00, 0xFF, 0x80, 0x0D, 0x0A])  // binary
    rig.server.send("# keepalive after the flood\r\n")
    // The driver counts a read's lines before it queues them and its drops after: wait for both.
    #expect(
      waitFor {
        rig.counters.linesRead.load(ordering: .relaxed) >= 105
          && rig.counters.drops.load(ordering: .relaxed) >= 91
      })
    #expect(rig.queue.count == 10)
    #expect(rig.counters.drops.load(ordering: .relaxed) == 91)  // 100 packets + the binary line, 10 kept
    #expect(rig.counters.tooLong.load(ordering: .relaxed) == 1)
    #expect(rig.shared.status.connected)
  }

  @Test func aQueueBoundedByBytesDropsAndCountsWhatWouldNotFit() throws {
    // Room for about 10 lines of this size: the rest of a burst is dropped, not held in memory.
    let line = "OH7AA-1>APRS::OH7LZB   :" + String(repeating: "x", count: 100)
    let rig = try DriverRig(
      queueCapacity: 100_000, queueBytes: 10 * (line.utf8.count + 3 + LineQueue.perLineOverhead))
    defer { rig.stop() }
    try rig.login()
    var burst = ""
    for index in 0..<100 { burst += line + "{\(index % 10)\r\n" }
    rig.server.send(burst)
    rig.server.send("# keepalive after the flood\r\n")
    // The driver counts a read's lines before it queues them and its drops after: wait for both.
    #expect(
      waitFor {
        rig.counters.linesRead.load(ordering: .relaxed) >= 101
          && rig.counters.drops.load(ordering: .relaxed) >= 90
      })
    #expect(rig.queue.count == 10)
    #expect(rig.queue.byteCount <= rig.queue.byteCapacity)
    #expect(rig.counters.drops.load(ordering: .relaxed) == 90)
    #expect(rig.shared.status.connected)
  }

  @Test func acksAreWrittenWhileVerifiedAndDroppedOtherwise() throws {
    let rig = try DriverRig()
    rig.driver.submit(acks: [bytes("OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack0\r\n")])  // not connected: dropped
    #expect(rig.counters.acksDropped.load(ordering: .relaxed) == 1)
    try rig.login()
    rig.driver.submit(acks: [
      bytes("OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack1\r\n"), bytes("OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack2\r\n"),
    ])
    #expect(rig.server.readLine() == "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack1")
    #expect(rig.server.readLine() == "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack2")
    #expect(waitFor { rig.counters.acksSent.load(ordering: .relaxed) == 2 })
    // A live filter change goes out as #filter.
    rig.driver.submit(filter: filterLine(["OH7LZB", "N0CALL-7"]))
    #expect(rig.server.readLine() == "#filter g/N0CALL-7/OH7LZB/OH7LZB-0")
    // So does a change to 2,000 stations: one line of at most 510 bytes on the same connection.
    let wide = filterLine(stationAddresses(2_000))
    rig.server.send("# filter g/N0CALL-7/OH7LZB/OH7LZB-0 active\r\n")
    rig.driver.submit(filter: wide)
    #expect(rig.server.readLine() == "#filter " + wide.spec)
    #expect(wide.byteCount <= 510 && rig.shared.status.reconnects == 0)
    rig.stop()
    #expect(rig.server.waitForClose())
  }

  /// aprsc never echoes a client's own packets: every ACK and message copy written goes to the writer's queue as
  /// a transmitted line (without CR LF), so a station of this server hears it; login and #filter lines do not.
  @Test func writtenAcksAndCopiesAreQueuedAsTransmittedLines() throws {
    let rig = try DriverRig()
    defer { rig.stop() }
    try rig.login()
    rig.driver.submit(filter: filterLine(["OH7LZB", "N0CALL-7"]))
    #expect(rig.server.readLine() == "#filter g/N0CALL-7/OH7LZB/OH7LZB-0")
    rig.driver.submit(acks: [bytes("OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack1\r\n")])
    rig.driver.submit(transmissions: [bytes("OH7LZB>APZACL,TCPIP*::N0CALL-7 :Hello{2\r\n")])
    #expect(rig.server.readLine() == "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack1")
    #expect(rig.server.readLine() == "OH7LZB>APZACL,TCPIP*::N0CALL-7 :Hello{2")
    #expect(waitFor { rig.queue.count == 2 })
    let batch = rig.queue.popBatch(maximum: 10, until: monotonicMilliseconds() + 1000).lines
    #expect(
      batch == [
        QueuedLine(bytes("OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack1"), origin: .transmitted),
        QueuedLine(bytes("OH7LZB>APZACL,TCPIP*::N0CALL-7 :Hello{2"), origin: .transmitted),
      ])
    // A line read from the server is queued as APRS-IS's.
    rig.server.send("OH7AA-1>APRS,qAR,T2TEST::OH7LZB   :hi{3\r\n")
    #expect(waitFor { rig.queue.count == 1 })
    #expect(
      rig.queue.popBatch(maximum: 10, until: monotonicMilliseconds() + 1000).lines.map(\.origin) == [.aprsis])
  }

  @Test func watchdogReconnectsWithAFreshLookupAndTheFilter() throws {
    let rig = try DriverRig(host: "localhost", watchdogMs: 1_500)
    defer { rig.stop() }
    try rig.login()
    // Silence: the watchdog closes and the driver comes back with the filter in its login line.
    #expect(rig.server.waitForClose(timeoutMs: 5_000))
    try rig.login()
    #expect(rig.shared.status.reconnects >= 1)
    // Closed by the server: the same.
    let before = rig.shared.status.reconnects
    rig.server.dropClient()
    try rig.login()
    #expect(rig.shared.status.reconnects > before)
  }

  /// ACKs due while the link is down (after a verified login) wait and go out right after the next verified
  /// login, after the login line and never before it.
  @Test func acksDueWhileTheLinkIsDownAreSentAfterTheNextLogin() throws {
    let rig = try DriverRig()
    defer { rig.stop() }
    try rig.login()
    #expect(rig.driver.acceptsAcks)
    rig.server.dropClient()
    #expect(waitFor { !rig.shared.status.connected })
    #expect(rig.driver.acceptsAcks, "kept through the reconnect")
    rig.driver.submit(acks: [
      bytes("OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack1\r\n"), bytes("OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack2\r\n"),
    ])
    try rig.login()  // checks that the login line comes first
    #expect(rig.server.readLine() == "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack1")
    #expect(rig.server.readLine() == "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack2")
    #expect(waitFor { rig.counters.acksSent.load(ordering: .relaxed) == 2 })
    #expect(rig.counters.acksDropped.load(ordering: .relaxed) == 0)
  }

  /// The 30 s rule on the wire: an identical ACK line within the interval is dropped as suppressed (APRS-IS
  /// would drop it as a duplicate), another line goes out.
  @Test func anIdenticalAckWithinTheIntervalIsSuppressed() throws {
    let rig = try DriverRig(ackIntervalMs: 60_000)
    defer { rig.stop() }
    try rig.login()
    let ack = bytes("OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack1\r\n")
    rig.driver.submit(acks: [ack])
    #expect(rig.server.readLine() == "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack1")
    #expect(waitFor { rig.counters.acksSent.load(ordering: .relaxed) == 1 })
    rig.driver.submit(acks: [ack, bytes("OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack2\r\n")])
    #expect(rig.server.readLine() == "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack2")
    #expect(waitFor { rig.counters.acksSent.load(ordering: .relaxed) == 2 })
    #expect(rig.counters.acksSuppressed.load(ordering: .relaxed) == 1)
  }

  /// A login that cannot transmit drops the ACKs waiting (nothing it sent would get through), and stops keeping
  /// new ones.
  @Test func anUnverifiedLoginDropsTheAcksWaiting() throws {
    let rig = try DriverRig()
    defer { rig.stop() }
    try rig.login()
    rig.server.dropClient()
    #expect(waitFor { !rig.shared.status.connected })
    rig.driver.submit(acks: [bytes("OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack1\r\n")])
    #expect(rig.counters.acksDropped.load(ordering: .relaxed) == 0)
    try rig.login(verified: false)
    #expect(waitFor { rig.counters.acksDropped.load(ordering: .relaxed) == 1 })
    #expect(!rig.driver.acceptsAcks)
    rig.driver.submit(acks: [bytes("OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack2\r\n")])
    #expect(rig.counters.acksDropped.load(ordering: .relaxed) == 2)
    #expect(rig.server.readLine(timeoutMs: 300) == nil)
  }
}
