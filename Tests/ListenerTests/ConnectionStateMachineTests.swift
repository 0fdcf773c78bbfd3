import APRS
import Config
import Store
import Testing

@testable import Listener

/// Drives a state machine like the driver does, with a fake clock and a scripted jitter source.
struct MachineHarness {
  var machine: ConnectionStateMachine
  var now: Int64 = 1_000_000
  /// Every action so far.
  var actions: [ConnectionAction] = []

  static let user = APRSISServer(host: "rotate.example", port: 14580)
  static let backup = APRSISServer(host: "backup.example", port: 14580)

  init(
    login: String = "N0CALL-10", passcode: Int = 13023, servers: [APRSISServer] = [Self.user],
    jitter: @escaping @Sendable () -> Double = { 0.5 }
  ) {
    let settings = ConnectionSettings(servers: servers, login: login, passcode: passcode)
    machine = ConnectionStateMachine(settings: settings, jitter: jitter)
  }

  @discardableResult
  mutating func handle(_ event: ConnectionEvent) -> [ConnectionAction] {
    let result = machine.handle(event)
    actions += result
    return result
  }

  @discardableResult
  mutating func advance(_ milliseconds: Int64) -> [ConnectionAction] {
    now += milliseconds
    return handle(.tick(now: now))
  }

  @discardableResult
  mutating func comment(_ line: String) -> [ConnectionAction] { handle(.comment(bytes(line), now: now)) }

  /// Start, connect, banner: returns the login line.
  mutating func connectAndLogin() -> String? {
    handle(.start(now: now))
    handle(.connected(now: now, address: "192.0.2.1:14580"))
    return comment("# aprsc 2.1.21-g1234").compactMap(\.sent).first.map(text)
  }

  /// Up to online.
  mutating func online(verified: Bool = true) {
    _ = connectAndLogin()
    comment("# logresp N0CALL-10 \(verified ? "verified" : "unverified"), server T2TEST")
  }
}

extension ConnectionAction {
  var sent: [UInt8]? {
    if case .send(let bytes) = self { return bytes }
    return nil
  }
  var connectTarget: APRSISServer? {
    if case .connect(let server) = self { return server }
    return nil
  }
  var isClose: Bool {
    if case .close = self { return true }
    return false
  }
  var logMessage: String? {
    if case .log(let entry) = self { return entry.message }
    return nil
  }
}

@Suite struct ConnectionStateMachineTests {
  @Test func bannerThenLoginLineWithVersAndFilterThenVerifiedLogresp() {
    var harness = MachineHarness()
    harness.handle(.filterChanged(filterLine(["oh7lzb"]), now: 0))
    let first = harness.handle(.start(now: harness.now))
    #expect(first.compactMap(\.connectTarget).first == MachineHarness.user)
    #expect(harness.machine.state == .connecting(server: MachineHarness.user))
    harness.handle(.connected(now: harness.now, address: "192.0.2.1:14580"))
    #expect(harness.machine.state == .awaitingBanner)
    let login = harness.comment("# aprsc 2.1.21-g1234").compactMap(\.sent).map(text)
    #expect(
      login == [
        "user N0CALL-10 pass 13023 vers aprs-cloud \(ListenerVersion.current) filter g/OH7LZB/OH7LZB-0\r\n"
      ])
    #expect(harness.machine.state == .awaitingLogresp)
    harness.comment("# logresp N0CALL-10 verified, server T2TEST")
    #expect(harness.machine.state == .online(verified: true))
    let status = harness.machine.status
    #expect(status.connected && status.verified && !status.receiveOnly && status.canTransmit)
    #expect(status.server == "rotate.example:14580" && status.address == "192.0.2.1:14580")
    // The login line carried the filter: no #filter line follows.
    #expect(harness.actions.compactMap(\.sent).count == 1)
  }

  @Test func keepaliveBeforeLogrespIsIgnored() {
    var harness = MachineHarness()
    _ = harness.connectAndLogin()
    harness.comment("# aprsc 2.1.21-g1234 29 Nov 2026 14:00:00 GMT T2TEST 192.0.2.1:14580")
    #expect(harness.machine.state == .awaitingLogresp)
    harness.comment("# logresp N0CALL-10 verified, server T2TEST")
    #expect(harness.machine.state == .online(verified: true))
  }

  @Test func unverifiedAnswerToAConfiguredPasscodeIsReceiveOnly() {
    var harness = MachineHarness(passcode: 12345)
    harness.online(verified: false)
    #expect(harness.machine.state == .online(verified: false))
    #expect(harness.machine.status.receiveOnly)
    #expect(!harness.machine.status.canTransmit)
    #expect(harness.actions.compactMap(\.logMessage).contains { $0.hasPrefix("login unverified") })
  }

  @Test func receiveOnlyLogsInWithPassMinusOne() {
    var harness = MachineHarness(login: "ACLD1A2B", passcode: -1)
    let login = harness.connectAndLogin()
    #expect(login == "user ACLD1A2B pass -1 vers aprs-cloud \(ListenerVersion.current) filter g/ACLD1A2B\r\n")
    harness.comment("# logresp ACLD1A2B unverified, server T2TEST")
    #expect(harness.machine.status.receiveOnly && !harness.machine.status.canTransmit)
    #expect(harness.actions.compactMap(\.logMessage).contains { $0.hasPrefix("receive-only") })
  }

  @Test(arguments: ["# Login by user not allowed", "# Invalid login string, too few arguments"])
  func refusalClosesAndBacksOff(line: String) {
    var harness = MachineHarness()
    _ = harness.connectAndLogin()
    let actions = harness.comment(line)
    #expect(actions.contains { $0.isClose })
    guard case .backingOff(let until) = harness.machine.state else {
      Issue.record("not backing off: \(harness.machine.state)")
      return
    }
    #expect(harness.machine.settings.refusalBackoff.bounds(step: 5_000).contains(until - harness.now))
    #expect(harness.machine.status.reconnects == 1)
  }

  @Test func watchdogClosesAfter60SecondsWithoutAnyLine() {
    var harness = MachineHarness()
    harness.online()
    harness.advance(30_000)
    harness.handle(.lineReceived(now: harness.now))  // a packet resets the watchdog
    #expect(!harness.advance(59_999).contains { $0.isClose })
    #expect(harness.machine.state == .online(verified: true))
    let actions = harness.advance(1)
    #expect(actions.contains { $0.isClose })
    #expect(
      actions.contains { if case .close(let reason) = $0 { reason == "no line for 60 s" } else { false } })
    guard case .backingOff = harness.machine.state else {
      Issue.record("expected backingOff, got \(harness.machine.state)")
      return
    }
    #expect(!harness.machine.status.connected)
  }

  @Test func keepalivesKeepTheWatchdogQuiet() {
    var harness = MachineHarness()
    harness.online()
    for _ in 0..<10 {
      harness.advance(20_000)
      harness.comment("# aprsc 2.1.21-g1234 keepalive")
    }
    #expect(harness.machine.state == .online(verified: true))
    #expect(harness.machine.nextDeadline == harness.now + 60_000)
  }

  @Test func noLogrespWithinTheLoginTimeoutReconnects() {
    var harness = MachineHarness()
    _ = harness.connectAndLogin()
    for _ in 0..<5 {
      harness.advance(5_000)
      harness.comment("# keepalive")
    }
    let actions = harness.advance(5_000)
    #expect(actions.contains { $0.isClose })
  }

  @Test func aFailedConnectTriesTheNextServerAtOnceThenBacksOff() {
    var harness = MachineHarness(servers: [MachineHarness.user, MachineHarness.backup])
    harness.handle(.start(now: harness.now))
    let second = harness.handle(.connectFailed(now: harness.now, reason: "timed out"))
    #expect(second.compactMap(\.connectTarget).first == MachineHarness.backup)
    harness.handle(.connectFailed(now: harness.now, reason: "timed out"))
    guard case .backingOff = harness.machine.state else {
      Issue.record("expected a backoff after every server failed")
      return
    }
  }

  /// The status says why the listener is not online (the failed connect or the ended connection, with the
  /// server) until the next login clears it.
  @Test func theLastErrorIsPublishedUntilTheNextLogin() {
    var harness = MachineHarness(servers: [MachineHarness.user])
    harness.handle(.start(now: harness.now))
    #expect(harness.machine.status.lastError == nil)
    harness.handle(.connectFailed(now: harness.now, reason: "Name or service not known"))
    #expect(
      harness.machine.status.lastError
        == "cannot connect to \(MachineHarness.user.description): Name or service not known")
    harness.now += 5_000
    harness.handle(.tick(now: harness.now))
    harness.handle(.connected(now: harness.now, address: "192.0.2.1:14580"))
    harness.comment("# aprsc")
    harness.comment("# logresp N0CALL-10 verified, server T2TEST")
    #expect(harness.machine.status.lastError == nil)
    harness.handle(.closed(now: harness.now, reason: "reset by peer"))
    #expect(harness.machine.status.lastError == "\(MachineHarness.user.description): reset by peer")
  }

  @Test func liveFilterChangeSendsFilterLineAndChecksTheAnswer() {
    var harness = MachineHarness()
    harness.online()
    let plan = filterLine(["OH7LZB", "N0CALL-7"])
    let sent = harness.handle(.filterChanged(plan, now: harness.now)).compactMap(\.sent).map(text)
    #expect(sent == ["#filter g/N0CALL-7/OH7LZB/OH7LZB-0\r\n"])
    // Same plan again: nothing is sent.
    #expect(harness.handle(.filterChanged(plan, now: harness.now)).compactMap(\.sent).isEmpty)
    harness.comment("# filter g/N0CALL-7/OH7LZB/OH7LZB-0 active")
    #expect(harness.machine.filter.applied == "g/N0CALL-7/OH7LZB/OH7LZB-0")
    #expect(harness.machine.filter.pendingSpec == nil)
    // No answer within the timeout: the line was dropped; reconnect with the filter in the login line.
    let third = filterLine(["OH7LZB"])
    harness.handle(.filterChanged(third, now: harness.now))
    harness.comment("# keepalive")
    #expect(!harness.advance(14_999).contains { $0.isClose })
    harness.comment("# keepalive")
    let overdue = harness.advance(1)
    #expect(overdue.contains { $0.isClose })
    #expect(overdue.compactMap(\.connectTarget).first == MachineHarness.user)
    harness.handle(.connected(now: harness.now, address: "192.0.2.1:14580"))
    let login = harness.comment("# aprsc").compactMap(\.sent).map(text)
    #expect(login.first?.hasSuffix(" filter g/OH7LZB/OH7LZB-0\r\n") == true)
  }

  @Test func aMismatchedAnswerReconnects() {
    var harness = MachineHarness()
    harness.online()
    harness.handle(.filterChanged(filterLine(["OH7LZB"]), now: harness.now))
    let actions = harness.comment("# filter g/SOMETHING active")
    #expect(actions.contains { $0.isClose })
    #expect(!actions.compactMap(\.connectTarget).isEmpty)
  }

  @Test func aprscsAnswerCutAt255CharactersIsAConfirmationNotAReconnect() {
    var harness = MachineHarness()
    harness.online()
    // 200 stations and their churn: every spec is far longer than the 255 bytes aprsc quotes back.
    for count in [200, 201, 199, 200] {
      let line = filterLine(stationAddresses(count))
      #expect(line.spec.utf8.count > 255)
      harness.comment("# keepalive")
      let sent = harness.handle(.filterChanged(line, now: harness.now)).compactMap(\.sent)
      #expect(sent == [line.line])
      let actions = harness.comment("# filter \(String(line.spec.utf8.prefix(255))!) active")
      #expect(!actions.contains { $0.isClose } && actions.compactMap(\.connectTarget).isEmpty)
      #expect(actions.compactMap(\.logMessage).contains("filter active"))
      #expect(harness.machine.filter.applied == line.spec)
    }
    #expect(harness.machine.status.reconnects == 0)
    // A cut that is not the first 255 bytes of what was sent is a mismatch: reconnect.
    let line = filterLine(stationAddresses(150))
    harness.handle(.filterChanged(line, now: harness.now))
    let actions = harness.comment("# filter \(String(line.spec.utf8.prefix(254))!) active")
    #expect(actions.contains { $0.isClose })
    #expect(harness.machine.status.reconnects == 1)
  }

  @Test func anySetSizeIsOneFilterLineOnTheOpenConnectionNeverAReconnect() {
    var harness = MachineHarness()
    harness.online()
    // 60 stations (once a login line), 2,000 and 100,000 (once the full feed): each change is one #filter line.
    for count in [60, 2_000, 100_000, 61, 1] {
      let line = filterLine(stationAddresses(count))
      harness.comment("# keepalive")
      let actions = harness.handle(.filterChanged(line, now: harness.now))
      #expect(!actions.contains { $0.isClose } && actions.compactMap(\.connectTarget).isEmpty)
      let sent = actions.compactMap(\.sent)
      #expect(sent == [line.line], "\(count) stations")
      #expect(sent.allSatisfy { $0.count <= FilterPlanner.maximumLineLength })
      let status = harness.machine.status
      #expect(status.filterStations == count && status.filterBytes == line.byteCount)
      #expect(status.filterEntries == line.entryCount && status.filterExactStations == line.exactStationCount)
      harness.comment("# filter \(line.spec) active")
      #expect(harness.machine.filter.applied == line.spec)
    }
    #expect(harness.machine.status.reconnects == 0)
    #expect(harness.machine.state == .online(verified: true))
    // A new connection carries the wanted line in its login line: no #filter line follows the logresp.
    let wide = filterLine(stationAddresses(2_000))
    harness.handle(.filterChanged(wide, now: harness.now))
    harness.comment("# filter \(wide.spec) active")
    harness.handle(.closed(now: harness.now, reason: "reset"))
    harness.now += 10_000
    harness.advance(0)
    harness.handle(.connected(now: harness.now, address: "192.0.2.1:14580"))
    let login = try! #require(harness.comment("# aprsc").compactMap(\.sent).first)
    #expect(text(login).hasSuffix(" filter \(wide.spec)\r\n"))
    #expect(harness.comment("# logresp N0CALL-10 verified, server T2TEST").compactMap(\.sent).isEmpty)
  }

  @Test func changesWhileAnAnswerIsAwaitedGoOutOneAtATimeNewestLast() {
    var harness = MachineHarness()
    harness.online()
    let first = filterLine(["OH7LZB"])
    let second = filterLine(["OH7LZB", "N0CALL-7"])
    let third = filterLine(["N0CALL-7"])
    #expect(harness.handle(.filterChanged(first, now: harness.now)).compactMap(\.sent) == [first.line])
    // Two more changes before the answer: nothing is sent until it comes, then only the newest.
    #expect(harness.handle(.filterChanged(second, now: harness.now)).compactMap(\.sent).isEmpty)
    #expect(harness.handle(.filterChanged(third, now: harness.now)).compactMap(\.sent).isEmpty)
    #expect(harness.comment("# filter \(first.spec) active").compactMap(\.sent) == [third.line])
    harness.comment("# filter \(third.spec) active")
    #expect(harness.machine.filter.applied == third.spec)
    #expect(!harness.actions.contains { $0.isClose })
  }

  @Test func neverSendsACommentLineOtherThanFilter() {
    var harness = MachineHarness()
    harness.online()
    for count in [1, 2, 0, 60, 3, 2000, 1] {
      harness.now += 20_000
      harness.comment("# keepalive")
      harness.handle(.filterChanged(filterLine(manyStations(count).map(\.address)), now: harness.now))
      if let pending = harness.machine.filter.pendingSpec { harness.comment("# filter \(pending) active") }
    }
    for line in harness.actions.compactMap(\.sent) where line.first == 0x23 {
      #expect(text(line).hasPrefix("#filter "), "unexpected # line \(text(line))")
      #expect(line.count <= FilterPlanner.maximumLineLength)
    }
    #expect(harness.machine.status.reconnects == 0)
  }

  @Test func stopClosesAndStaysStopped() {
    var harness = MachineHarness()
    harness.online()
    let actions = harness.handle(.stop(now: harness.now))
    #expect(actions.contains { $0.isClose })
    #expect(harness.machine.state == .stopped)
    #expect(harness.advance(600_000).compactMap(\.connectTarget).isEmpty)
    #expect(!harness.machine.status.connected)
  }

  @Test func statusIsReportedOnlyWhenItChanges() {
    var harness = MachineHarness()
    harness.online()
    let reports = harness.actions.filter { if case .report = $0 { true } else { false } }.count
    #expect(reports >= 4)  // connecting, awaitingBanner, awaitingLogresp, online
    harness.comment("# keepalive")
    harness.advance(1000)
    #expect(harness.actions.filter { if case .report = $0 { true } else { false } }.count == reports)
  }
}
