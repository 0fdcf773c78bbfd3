import Testing

@testable import aprs_cloud

// Time is whatever the test says: the supervisor reads no clock.

/// A raw `waitpid` status for a normal exit with `code`.
private func exitedStatus(_ code: Int32) -> Int32 { code << 8 }
/// A raw `waitpid` status for a death by `signal`.
private func signaledStatus(_ signal: Int32) -> Int32 { signal }

private func logs(_ actions: [UpSupervisor.Action]) -> [String] {
  actions.compactMap {
    if case .log(let text) = $0 { return text }
    return nil
  }
}

@Suite struct UpSupervisorTests {
  let names = ["aprs-cloud-fcgi", "nginx"]

  @Test func startsEveryChildInOrder() {
    var supervisor = UpSupervisor(names: names)
    #expect(supervisor.start(now: 0) == [.spawn(child: 0), .spawn(child: 1)])
    #expect(supervisor.spawned(child: 0, pid: 100, now: 0).isEmpty)
    #expect(supervisor.spawned(child: 1, pid: 200, now: 0).isEmpty)
    #expect(supervisor.states == [.running(pid: 100, since: 0), .running(pid: 200, since: 0)])
    #expect(supervisor.nextDeadline == nil)
    #expect(supervisor.pid(of: 1) == 200)
  }

  @Test func addingAChildIsOneMoreName() {
    var supervisor = UpSupervisor(names: names + ["aprs-listener"])
    #expect(supervisor.start(now: 0) == [.spawn(child: 0), .spawn(child: 1), .spawn(child: 2)])
  }

  @Test func aDeadChildIsLoggedAndRestartedAfterTheBackoff() {
    var supervisor = UpSupervisor(names: names)
    _ = supervisor.start(now: 0)
    _ = supervisor.spawned(child: 0, pid: 100, now: 0)
    _ = supervisor.spawned(child: 1, pid: 200, now: 0)

    let actions = supervisor.exited(pid: 100, status: signaledStatus(9), now: 1)
    #expect(actions.first == .signal(pid: 100, signal: .kill, group: true))
    #expect(logs(actions) == ["aprs-cloud-fcgi exited (signal 9); restarting in 0.5 s"])
    #expect(supervisor.states[0] == .backingOff(until: 1.5))
    #expect(supervisor.states[1] == .running(pid: 200, since: 0))
    #expect(supervisor.nextDeadline == 1.5)

    // Not yet due.
    #expect(supervisor.tick(now: 1.4).isEmpty)
    let due = supervisor.tick(now: 1.5)
    #expect(due.contains(.spawn(child: 0)))
    #expect(logs(due) == ["starting aprs-cloud-fcgi again"])
    #expect(supervisor.spawned(child: 0, pid: 101, now: 1.5).isEmpty)
    #expect(supervisor.states[0] == .running(pid: 101, since: 1.5))
  }

  @Test func backoffDoublesUpToTheMaximum() {
    var supervisor = UpSupervisor(names: names)
    _ = supervisor.start(now: 0)
    var pid: Int32 = 100
    var now = 0.0
    _ = supervisor.spawned(child: 0, pid: pid, now: now)
    var delays: [Double] = []
    for _ in 0..<8 {
      now += 0.1  // dies right after starting
      _ = supervisor.exited(pid: pid, status: exitedStatus(1), now: now)
      guard case .backingOff(let until) = supervisor.states[0] else {
        Issue.record("not backing off: \(supervisor.states[0])")
        return
      }
      delays.append(((until - now) * 1000).rounded() / 1000)
      now = until
      #expect(supervisor.tick(now: now).contains(.spawn(child: 0)))
      pid += 1
      _ = supervisor.spawned(child: 0, pid: pid, now: now)
    }
    #expect(delays == [0.5, 1, 2, 4, 8, 10, 10, 10])
  }

  @Test func aChildThatRanLongEnoughStartsTheBackoffOver() {
    var supervisor = UpSupervisor(names: names)
    _ = supervisor.start(now: 0)
    _ = supervisor.spawned(child: 1, pid: 200, now: 0)
    _ = supervisor.exited(pid: 200, status: exitedStatus(1), now: 0.2)  // 0.5 s
    _ = supervisor.tick(now: 0.7)
    _ = supervisor.spawned(child: 1, pid: 201, now: 0.7)
    _ = supervisor.exited(pid: 201, status: exitedStatus(1), now: 0.8)  // 1 s
    _ = supervisor.tick(now: 1.8)
    _ = supervisor.spawned(child: 1, pid: 202, now: 1.8)
    // Ran for 10 s, then dies: not a crash loop, so it starts again at once and the backoff is over.
    let actions = supervisor.exited(pid: 202, status: exitedStatus(0), now: 11.8)
    #expect(actions.contains(.spawn(child: 1)))
    #expect(logs(actions) == ["nginx exited (status 0); restarting now"])
    #expect(supervisor.states[1] == .spawning)
    #expect(supervisor.failures[1] == 0)
    _ = supervisor.spawned(child: 1, pid: 203, now: 11.8)
    // A quick death after that backs off from the first delay again.
    _ = supervisor.exited(pid: 203, status: exitedStatus(1), now: 12)
    #expect(supervisor.states[1] == .backingOff(until: 12.5))
  }

  @Test func aChildThatRanFiveSecondsIsRestartedAtOnce() {
    var supervisor = UpSupervisor(names: names)
    _ = supervisor.start(now: 0)
    _ = supervisor.spawned(child: 0, pid: 100, now: 0)
    // 4.9 s is still a crash loop; 5 s is not.
    #expect(
      logs(supervisor.exited(pid: 100, status: signaledStatus(9), now: 4.9)).last?.hasSuffix("0.5 s") == true)
    _ = supervisor.tick(now: 5.4)
    _ = supervisor.spawned(child: 0, pid: 101, now: 5.4)
    let actions = supervisor.exited(pid: 101, status: signaledStatus(9), now: 10.4)
    #expect(
      actions == [
        .signal(pid: 101, signal: .kill, group: true),
        .log("aprs-cloud-fcgi exited (signal 9); restarting now"),
        .spawn(child: 0),
      ])
  }

  @Test func aFailedSpawnIsRetriedLikeADeath() {
    var supervisor = UpSupervisor(names: names)
    _ = supervisor.start(now: 0)
    let actions = supervisor.spawnFailed(child: 1, reason: "nginx: No such file or directory", now: 0)
    #expect(
      logs(actions) == ["nginx could not be started (nginx: No such file or directory); restarting in 0.5 s"])
    #expect(supervisor.states[1] == .backingOff(until: 0.5))
  }

  @Test func shutdownTerminatesLiveChildrenAndExitsZeroWhenAllAreGone() {
    var supervisor = UpSupervisor(names: names)
    _ = supervisor.start(now: 0)
    _ = supervisor.spawned(child: 0, pid: 100, now: 0)
    _ = supervisor.spawned(child: 1, pid: 200, now: 0)

    let actions = supervisor.shutdown(now: 5)
    #expect(
      actions == [
        .signal(pid: 100, signal: .terminate, group: false),
        .signal(pid: 200, signal: .terminate, group: false),
      ])
    #expect(supervisor.shutdown(now: 5).isEmpty)  // a second Ctrl-C changes nothing
    #expect(supervisor.nextDeadline == 10)

    let first = supervisor.exited(pid: 200, status: exitedStatus(0), now: 5.1)
    #expect(logs(first) == ["nginx stopped (status 0)"])
    #expect(!first.contains(.exit(0)))
    let second = supervisor.exited(pid: 100, status: exitedStatus(0), now: 5.2)
    #expect(second.last == .exit(0))
    #expect(supervisor.states == [.stopped, .stopped])
  }

  @Test func aChildThatIgnoresSIGTERMIsKilledAfterTheTimeout() {
    var supervisor = UpSupervisor(names: names)
    _ = supervisor.start(now: 0)
    _ = supervisor.spawned(child: 0, pid: 100, now: 0)
    _ = supervisor.spawned(child: 1, pid: 200, now: 0)
    _ = supervisor.shutdown(now: 1)
    _ = supervisor.exited(pid: 200, status: exitedStatus(0), now: 1.1)

    #expect(supervisor.tick(now: 5.9).isEmpty)
    let kill = supervisor.tick(now: 6)
    #expect(kill.contains(.signal(pid: 100, signal: .kill, group: true)))
    #expect(logs(kill) == ["aprs-cloud-fcgi did not stop within 5 s; killing it"])
    #expect(supervisor.states[0] == .killed(pid: 100))
    #expect(supervisor.nextDeadline == nil)
    #expect(supervisor.exited(pid: 100, status: signaledStatus(9), now: 6.01).last == .exit(0))
  }

  @Test func shutdownCancelsPendingRestarts() {
    var supervisor = UpSupervisor(names: names)
    _ = supervisor.start(now: 0)
    _ = supervisor.spawned(child: 0, pid: 100, now: 0)
    _ = supervisor.spawned(child: 1, pid: 200, now: 0)
    _ = supervisor.exited(pid: 100, status: exitedStatus(1), now: 1)  // restart pending at 1.5
    _ = supervisor.shutdown(now: 1.2)
    #expect(supervisor.states[0] == .stopped)
    #expect(!supervisor.tick(now: 2).contains(.spawn(child: 0)))
    #expect(supervisor.exited(pid: 200, status: exitedStatus(0), now: 2).last == .exit(0))
  }

  @Test func aChildDyingDuringShutdownIsNotRestarted() {
    var supervisor = UpSupervisor(names: names)
    _ = supervisor.start(now: 0)
    _ = supervisor.spawned(child: 0, pid: 100, now: 0)
    _ = supervisor.spawned(child: 1, pid: 200, now: 0)
    _ = supervisor.shutdown(now: 1)
    let actions = supervisor.exited(pid: 100, status: signaledStatus(15), now: 1.01)
    #expect(!actions.contains(.spawn(child: 0)))
    #expect(supervisor.states[0] == .stopped)
  }

  @Test func aSpawnReportedAfterTheShutdownIsStoppedAtOnce() {
    var supervisor = UpSupervisor(names: names)
    _ = supervisor.start(now: 0)
    _ = supervisor.spawned(child: 0, pid: 100, now: 0)
    _ = supervisor.shutdown(now: 0)
    #expect(
      supervisor.spawned(child: 1, pid: 200, now: 0) == [.signal(pid: 200, signal: .terminate, group: false)])
    _ = supervisor.exited(pid: 100, status: 0, now: 0.1)
    #expect(supervisor.exited(pid: 200, status: 0, now: 0.2).last == .exit(0))
  }

  @Test func shutdownWithNothingRunningExitsAtOnce() {
    var supervisor = UpSupervisor(names: names)
    _ = supervisor.start(now: 0)
    _ = supervisor.spawnFailed(child: 0, reason: "x", now: 0)
    _ = supervisor.spawnFailed(child: 1, reason: "x", now: 0)
    #expect(supervisor.shutdown(now: 0.1) == [.exit(0)])
  }

  @Test func unknownPidsAreIgnored() {
    var supervisor = UpSupervisor(names: names)
    _ = supervisor.start(now: 0)
    _ = supervisor.spawned(child: 0, pid: 100, now: 0)
    #expect(supervisor.exited(pid: 999, status: 0, now: 1).isEmpty)
    #expect(supervisor.states[0] == .running(pid: 100, since: 0))
  }

  @Test func waitStatusesAreDecoded() {
    #expect(UpExitStatus(raw: exitedStatus(0)) == .exited(0))
    #expect(UpExitStatus(raw: exitedStatus(3)) == .exited(3))
    #expect(UpExitStatus(raw: signaledStatus(9)) == .signaled(9))
    #expect(UpExitStatus(raw: signaledStatus(15) | 0x80) == .signaled(15))  // with a core dump
    #expect(UpExitStatus(raw: exitedStatus(2)).description == "status 2")
  }
}
