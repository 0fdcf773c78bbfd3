import Foundation
import Platform
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct StopSignalsTests {
  @Test func stopSignalsAreTermAndInt() {
    #expect(StopSignals.all == [SIGTERM, SIGINT])
  }

  @Test func setHoldsExactlyTheSignalsGiven() {
    var set = StopSignals.set(of: [SIGTERM, SIGHUP])
    #expect(sigismember(&set, SIGTERM) == 1)
    #expect(sigismember(&set, SIGHUP) == 1)
    #expect(sigismember(&set, SIGINT) == 0)
    var empty = StopSignals.set(of: [])
    #expect(sigismember(&empty, SIGTERM) == 0)
  }

  @Test func blockedSignalIsReceivedByWait() throws {
    // In a thread of its own, so the mask of the test runner's threads is untouched; SIGUSR2 is sent to that
    // thread alone.
    let received = Latch()
    let result = ResultBox()
    let ready = Latch()
    let thread = ThreadIdentity()
    let done = try startThread(name: "platform-test") {
      StopSignals.block([SIGUSR2])
      thread.value = pthread_self()
      ready.set()
      result.signal = StopSignals.wait([SIGUSR2])
      received.set()
    }
    #expect(ready.wait(timeoutMs: 10_000))
    #expect(pthread_kill(thread.value, SIGUSR2) == 0)
    #expect(received.wait(timeoutMs: 10_000))
    #expect(done.wait(timeoutMs: 10_000))
    #expect(result.signal == SIGUSR2)
  }
}

extension StopSignalsTests {
  /// The Swift runtime's crash handler pauses each other thread by sending it SIGUSR1 with its own handler
  /// swapped in. The thread waiting for stop signals must run that handler (and pause), not take the signal for
  /// a stop: with `sigwait` it did, so a crashed responder (which stops on SIGUSR1) died only 30 s later.
  @Test func aSignalSentWithAnotherHandlerSwappedInRunsThatHandlerAndStopsNothing() throws {
    let received = Latch()
    let result = ResultBox()
    let ready = Latch()
    let thread = ThreadIdentity()
    let done = try startThread(name: "stop-sig-test") {
      StopSignals.block([SIGUSR1])
      thread.value = pthread_self()
      ready.set()
      result.signal = StopSignals.wait([SIGUSR1])
      received.set()
    }
    #expect(ready.wait(timeoutMs: 10_000))
    // As the crash handler does: wait until the thread does not block SIGUSR1 (it sleeps in the wait), then swap.
    let tid = try #require(Self.thread(named: "stop-sig-test"))
    #expect(waitUntil(timeout: 10) { !Self.blocksSIGUSR1(tid) })
    var pausing = sigaction()
    pausing.__sigaction_handler.sa_handler = { _ in pauses.wrappingAdd(1, ordering: .sequentiallyConsistent) }
    sigfillset(&pausing.sa_mask)
    var previous = sigaction()
    sigaction(SIGUSR1, &pausing, &previous)
    #expect(pthread_kill(thread.value, SIGUSR1) == 0)
    #expect(waitUntil(timeout: 10) { pauses.load(ordering: .sequentiallyConsistent) == 1 })
    #expect(!received.wait(timeoutMs: 300), "the pause request was taken for a stop signal")
    // The crash handler puts the old handler back; a real SIGUSR1 is a stop again.
    sigaction(SIGUSR1, &previous, nil)
    #expect(pthread_kill(thread.value, SIGUSR1) == 0)
    #expect(received.wait(timeoutMs: 10_000))
    #expect(done.wait(timeoutMs: 10_000))
    #expect(result.signal == SIGUSR1)
  }

  /// The id of this process's thread named `name` (its `comm` in /proc).
  static func thread(named name: String) -> String? {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.first { tid in
      (try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines) == name
    }
  }

  /// Whether thread `tid` of this process blocks SIGUSR1 (`SigBlk` in /proc, as the crash handler reads it).
  static func blocksSIGUSR1(_ tid: String) -> Bool {
    guard let status = try? String(contentsOfFile: "/proc/self/task/\(tid)/status", encoding: .utf8),
      let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }),
      let mask = UInt64(line.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16)
    else { return true }
    return mask & (1 << UInt64(SIGUSR1 - 1)) != 0
  }
}

/// Pause requests the test's stand-in for the crash handler received.
private let pauses = Atomic<Int>(0)

/// Polls `condition` every 5 ms until it holds or `timeout` seconds pass.
private func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while Date() < deadline {
    if condition() { return true }
    usleep(5_000)
  }
  return condition()
}

/// Values the signal thread hands back (written before a latch is set, read after it).
private final class ResultBox: @unchecked Sendable {
  var signal: Int32 = 0
}

private final class ThreadIdentity: @unchecked Sendable {
  var value = pthread_t()
}
