import APRS
import Config
import Testing

@testable import Listener

/// Reconnects: prompt after an outage (however recently the last one was), long after a refusal, and a fast
/// rotation over several servers. Every path runs on the harness's injected clock.
@Suite struct ReconnectTests {
  /// The delay the machine waits in `backingOff` (nil: it does not wait).
  static func delay(_ harness: MachineHarness) -> Int64? {
    if case .backingOff(let until) = harness.machine.state { return until - harness.now }
    return nil
  }

  /// Waits out the backoff and answers the connect with a failure (`connection refused`); returns the delay.
  @discardableResult
  static func failedRetry(_ harness: inout MachineHarness) -> Int64? {
    guard let delay = delay(harness) else { return nil }
    harness.advance(delay)
    harness.handle(.connectFailed(now: harness.now, reason: "Connection refused"))
    return delay
  }

  /// Banner and logresp on the connection just made.
  static func logIn(_ harness: inout MachineHarness) {
    harness.handle(.connected(now: harness.now, address: "192.0.2.1:14580"))
    harness.comment("# aprsc 2.1.21-g1234")
    harness.comment("# logresp N0CALL-10 verified, server T2TEST")
  }

  @Test func outageDelaysStartAt1sDoubleAndStayAtMost4sThen30sThenTheLongCap() {
    var harness = MachineHarness(jitter: { 0.5 })
    harness.handle(.start(now: harness.now))
    let start = harness.now
    harness.handle(.connectFailed(now: harness.now, reason: "Connection refused"))
    var delays: [(age: Int64, delay: Int64)] = []
    while harness.now - start < 1_200_000 {
      let age = harness.now - start
      guard let delay = Self.failedRetry(&harness) else {
        Issue.record("not backing off: \(harness.machine.state)")
        return
      }
      delays.append((age, delay))
    }
    #expect(delays.prefix(4).map(\.delay) == [1_000, 2_000, 4_000, 4_000])
    #expect(delays.filter { $0.age < 180_000 }.allSatisfy { $0.delay <= 4_000 })
    #expect(delays.filter { $0.age < 600_000 }.allSatisfy { $0.delay <= 30_000 })
    #expect(delays.contains { $0.age >= 180_000 && $0.age < 600_000 && $0.delay == 30_000 })
    #expect(delays.filter { $0.age >= 600_000 }.map(\.delay).max() == 300_000)
    #expect(delays.allSatisfy { $0.delay <= 300_000 })
  }

  @Test(arguments: [0.0, 0.25, 0.5, 0.999])
  func jitterNeverStretchesAFreshOutagePast4Seconds(unit: Double) {
    var harness = MachineHarness(jitter: { unit })
    harness.handle(.start(now: harness.now))
    harness.handle(.connectFailed(now: harness.now, reason: "Connection refused"))
    var delays: [Int64] = []
    for _ in 0..<40 { delays.append(Self.failedRetry(&harness) ?? -1) }
    #expect(delays.allSatisfy { $0 > 0 && $0 <= 4_000 })
    #expect(delays[0] >= 800 && delays[0] <= 1_200)
  }

  /// The issue's case: two restarts of aprsc a few minutes apart, each down for 90 s. After each, the listener is
  /// on air within 5 s of the server's return, with any jitter: the second outage starts over at 1 s.
  @Test(arguments: [0.0, 0.37, 0.999])
  func twoRestartsFewMinutesApartAreEachBackWithin5Seconds(unit: Double) {
    var harness = MachineHarness(jitter: { unit })
    harness.online()
    for _ in 0..<2 {
      harness.advance(120_000)
      harness.comment("# keepalive")
      harness.handle(.closed(now: harness.now, reason: "the server closed the connection"))
      let downAt = harness.now
      var connectedAt: Int64?
      while connectedAt == nil {
        guard let delay = Self.delay(harness) else {
          Issue.record("not backing off: \(harness.machine.state)")
          return
        }
        harness.advance(delay)
        if harness.now - downAt < 90_000 {
          harness.handle(.connectFailed(now: harness.now, reason: "Connection refused"))
        } else {
          connectedAt = harness.now
          Self.logIn(&harness)
        }
      }
      #expect(connectedAt! - (downAt + 90_000) <= 5_000)
      #expect(harness.machine.state == .online(verified: true))
    }
  }

  /// The first retry after an established session comes within about a second, also right after another outage
  /// (nothing carries over from it).
  @Test func everyEndedSessionIsRetriedWithinASecondHoweverRecentTheLastOutage() {
    var harness = MachineHarness(jitter: { 0.999 })
    harness.online()
    for round in 0..<5 {
      harness.advance(40_000)
      harness.comment("# keepalive")
      harness.handle(.closed(now: harness.now, reason: "reset by peer"))
      let first = Self.delay(harness) ?? -1
      #expect(first > 0 && first <= 1_200, "round \(round): \(first) ms")
      for _ in 0..<round { Self.failedRetry(&harness) }  // the outage gets longer each round
      harness.advance(Self.delay(harness) ?? 0)
      Self.logIn(&harness)
      #expect(harness.machine.state == .online(verified: true))
    }
  }

  /// A frozen server (SIGSTOP): the kernel still accepts, nothing is sent. The watchdog closes the silent session,
  /// the retry comes promptly, each connect waits for its logresp up to the login timeout, the next comes at most
  /// 4 s later; when the server thaws, the pending connect gets its banner and logs in.
  @Test func aFrozenServerIsRetriedPromptlyAfterTheWatchdogAndLoggedInWhenItThaws() {
    var harness = MachineHarness(jitter: { 0.999 })
    harness.online()
    harness.advance(60_000)  // silence: the watchdog
    #expect(harness.machine.status.connected == false)
    let first = Self.delay(harness) ?? -1
    #expect(first > 0 && first <= 1_200)
    var gaps: [Int64] = []
    for _ in 0..<4 {
      guard let delay = Self.delay(harness) else {
        Issue.record("not backing off: \(harness.machine.state)")
        return
      }
      gaps.append(delay)
      harness.advance(delay)
      harness.handle(.connected(now: harness.now, address: "192.0.2.1:14580"))
      #expect(harness.machine.state == .awaitingBanner)
      let closes = harness.advance(harness.machine.settings.loginTimeoutMs)
      #expect(closes.contains { $0.isClose })
    }
    #expect(gaps.allSatisfy { $0 <= 4_000 })
    // Thawed while a connect waits: its banner comes, the login follows.
    harness.advance(Self.delay(harness) ?? 0)
    harness.handle(.connected(now: harness.now, address: "192.0.2.1:14580"))
    harness.advance(10_000)
    Self.logIn(&harness)
    #expect(harness.machine.state == .online(verified: true))
  }

  @Test func aSessionClosedRightAfterItsLogrespGetsTheLongBackoffUntilOneStaysUp() {
    var harness = MachineHarness(jitter: { 0.5 })
    harness.online()
    var delays: [Int64] = []
    for _ in 0..<4 {
      harness.advance(2_000)
      harness.handle(.closed(now: harness.now, reason: "the server closed the connection"))
      let delay = Self.delay(harness) ?? -1
      delays.append(delay)
      harness.advance(delay)
      Self.logIn(&harness)
    }
    #expect(delays == [5_000, 10_000, 20_000, 40_000])
    #expect(
      harness.actions.compactMap(\.logMessage).contains("reconnecting later"))
    // Up for 10 minutes: the long backoff starts over; and the session ending then is an outage (1 s).
    for _ in 0..<30 {
      harness.advance(20_000)
      harness.comment("# keepalive")
    }
    harness.handle(.closed(now: harness.now, reason: "the server closed the connection"))
    #expect(Self.delay(harness) == 1_000)
    harness.advance(1_000)
    Self.logIn(&harness)
    harness.advance(1_000)
    harness.handle(.closed(now: harness.now, reason: "the server closed the connection"))
    #expect(Self.delay(harness) == 5_000)
  }

  @Test func aRefusedLoginGetsTheLongBackoffAndAConnectFailureAfterItTheShortOne() {
    var harness = MachineHarness(jitter: { 0.5 })
    _ = harness.connectAndLogin()
    harness.comment("# Login by user not allowed")
    #expect(Self.delay(harness) == 5_000)
    harness.advance(5_000)
    harness.handle(.connected(now: harness.now, address: "192.0.2.1:14580"))
    harness.comment("# aprsc")
    harness.comment("# Login by user not allowed")
    #expect(Self.delay(harness) == 10_000)
    harness.advance(10_000)
    harness.handle(.connectFailed(now: harness.now, reason: "Connection refused"))
    #expect(Self.delay(harness) == 1_000)
  }

  @Test func aSilentServerIsLeftAfterTheBannerTimeoutForTheNextWhichWins() {
    var harness = MachineHarness(servers: [MachineHarness.user, MachineHarness.backup])
    harness.handle(.start(now: harness.now))
    harness.handle(.connected(now: harness.now, address: "192.0.2.1:14580"))  // frozen: accepted, silent
    #expect(harness.machine.nextDeadline == harness.now + 5_000)
    #expect(!harness.advance(4_999).contains { $0.isClose })
    let moved = harness.advance(1)
    #expect(moved.contains { $0.isClose })
    #expect(moved.compactMap(\.connectTarget) == [MachineHarness.backup])
    Self.logIn(&harness)
    #expect(harness.machine.state == .online(verified: true))
    #expect(harness.machine.status.server == MachineHarness.backup.description)
  }

  @Test func withOneServerASilentConnectWaitsForTheLoginTimeout() {
    var harness = MachineHarness()
    harness.handle(.start(now: harness.now))
    harness.handle(.connected(now: harness.now, address: "192.0.2.1:14580"))
    #expect(!harness.advance(29_999).contains { $0.isClose })
    #expect(harness.advance(1).contains { $0.isClose })
  }

  @Test func anEndedSessionRetriesTheOtherServerFirstAndEveryServerOncePerRound() {
    var harness = MachineHarness(servers: [MachineHarness.user, MachineHarness.backup], jitter: { 0.5 })
    harness.online()
    harness.advance(50_000)
    harness.comment("# keepalive")
    harness.handle(.closed(now: harness.now, reason: "reset by peer"))
    #expect(Self.delay(harness) == 1_000)
    let retry = harness.advance(1_000)
    #expect(retry.compactMap(\.connectTarget) == [MachineHarness.backup])
    let next = harness.handle(.connectFailed(now: harness.now, reason: "Connection refused"))
    #expect(next.compactMap(\.connectTarget) == [MachineHarness.user])
    harness.handle(.connected(now: harness.now, address: "192.0.2.1:14580"))
    harness.handle(.closed(now: harness.now, reason: "the server closed the connection"))
    #expect(Self.delay(harness) == 2_000)  // both failed this round: the next outage step
  }
}

@Suite struct OutageBackoffTests {
  @Test func boundsAreLoweredToATestsSmallMaximum() {
    let small = OutageBackoff(firstAtMostMs: 100, maximumMs: 1_000)
    #expect(small.firstMs == 100 && small.freshCapMs == 1_000 && small.youngCapMs == 1_000)
    let defaults = OutageBackoff(firstAtMostMs: 5_000, maximumMs: 300_000)
    #expect(defaults.firstMs == 1_000 && defaults.freshCapMs == 4_000 && defaults.youngCapMs == 30_000)
  }

  @Test func endStartsTheNextOutageOver() {
    var backoff = OutageBackoff()
    #expect(backoff.nextDelay(now: 0, unit: 0.5) == 1_000)
    #expect(backoff.nextDelay(now: 1_000, unit: 0.5) == 2_000)
    #expect(backoff.since == 0)
    backoff.end()
    #expect(!backoff.isActive)
    #expect(backoff.nextDelay(now: 5_000, unit: 0.5) == 1_000)
    #expect(backoff.since == 5_000)
  }
}
