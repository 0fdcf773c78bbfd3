import Synchronization
import Testing

@testable import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// Threads, latches, conditions and the lock: every wait is bounded, and none sleeps to wait for an outcome.
@Suite struct ThreadTests {
  @Test func startedThreadRunsItsBodyAndSetsItsLatch() throws {
    let ran = Atomic<Int>(0)
    let done = try startThread(name: "platform-test") { ran.add(1, ordering: .relaxed) }
    #expect(done.wait(timeoutMs: 10_000))
    #expect(done.value)
    let ranValue = ran.load(ordering: .relaxed)
    #expect(ranValue == 1)
  }

  @Test func startedThreadCarriesItsNameCutTo15Bytes() throws {
    let seen = Mutex<String>("")
    let done = try startThread(name: "platform-test-thread-name") {
      var buffer = [UInt8](repeating: 0, count: 64)
      let fd = open("/proc/thread-self/comm", O_RDONLY)
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      close(fd)
      seen.withLock { $0 = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self) }
    }
    #expect(done.wait(timeoutMs: 10_000))
    #expect(seen.withLock { $0 } == "platform-test-t\n")
  }

  @Test func latchIsSetOnlyAfterTheBodyReturned() throws {
    let release = Latch()
    let finished = Atomic<Bool>(false)
    let done = try startThread(name: "platform-test") {
      release.wait()
      finished.store(true, ordering: .releasing)
    }
    #expect(!done.value)
    release.set()
    #expect(done.wait(timeoutMs: 10_000))
    let finishedValue = finished.load(ordering: .acquiring)
    #expect(finishedValue)
  }

  @Test func latchWaitTimesOutWhenNotSet() {
    let latch = Latch()
    let started = monotonicMilliseconds()
    #expect(!latch.wait(timeoutMs: 20))
    #expect(monotonicMilliseconds() - started >= 20)
    #expect(!latch.value)
  }

  @Test func latchSetBeforeWaitingReturnsAtOnce() {
    let latch = Latch()
    latch.set()
    latch.set()
    #expect(latch.wait(timeoutMs: 0))
    #expect(latch.wait(timeoutMs: -5))
    latch.wait()
  }

  @Test func latchWakesAWaiterOnAnotherThread() throws {
    let latch = Latch()
    let woke = Atomic<Bool>(false)
    let done = try startThread(name: "platform-test") {
      woke.store(latch.wait(timeoutMs: 60_000), ordering: .releasing)
    }
    latch.set()
    #expect(done.wait(timeoutMs: 10_000))
    let wokeValue = woke.load(ordering: .acquiring)
    #expect(wokeValue)
  }

  @Test func conditionTimedWaitReturnsFalseAfterTheDeadline() {
    let condition = Condition()
    let deadline = monotonicMilliseconds() + 20
    let signalled = condition.locked { condition.wait(until: deadline) }
    #expect(!signalled)
    #expect(monotonicMilliseconds() >= deadline)
  }

  @Test func conditionBroadcastWakesTheWaiter() throws {
    let condition = Condition()
    let ready = Mutex<Bool>(false)  // only touched inside condition.locked; the Mutex keeps it Sendable
    let sawReady = Atomic<Bool>(false)
    let waiting = Latch()
    let done = try startThread(name: "platform-test") {
      let deadline = monotonicMilliseconds() + 60_000
      let result = condition.locked {
        waiting.set()
        while !ready.withLock({ $0 }) && monotonicMilliseconds() < deadline {
          condition.wait(until: deadline)
        }
        return ready.withLock { $0 }
      }
      sawReady.store(result, ordering: .releasing)
    }
    #expect(waiting.wait(timeoutMs: 10_000))
    condition.locked {
      ready.withLock { $0 = true }
      condition.broadcast()
    }
    #expect(done.wait(timeoutMs: 10_000))
    let sawReadyValue = sawReady.load(ordering: .acquiring)
    #expect(sawReadyValue)
  }

  @Test func lockKeepsOutOtherThreads() throws {
    let lock = Lock()
    let counter = UnguardedCounter()
    let threads = 8
    let rounds = 20_000
    var latches: [Latch] = []
    for _ in 0..<threads {
      latches.append(
        try startThread(name: "platform-test") {
          for _ in 0..<rounds {
            lock.withLock {
              // A read-modify-write in two steps with a check between: any overlap shows as a count off.
              let value = counter.value
              counter.inside += 1
              counter.value = value + 1
              counter.maximumInside = max(counter.maximumInside, counter.inside)
              counter.inside -= 1
            }
          }
        })
    }
    for latch in latches { #expect(latch.wait(timeoutMs: 60_000)) }
    lock.lock()
    #expect(counter.value == threads * rounds)
    #expect(counter.maximumInside == 1)
    lock.unlock()
  }

  @Test func lockWithLockReturnsAndRethrows() {
    struct Refused: Error {}
    let lock = Lock()
    #expect(lock.withLock { 42 } == 42)
    #expect(throws: Refused.self) { try lock.withLock { () throws(Refused) -> Int in throw Refused() } }
    // Released after the throw: taking it again does not deadlock.
    #expect(lock.withLock { true })
  }

  @Test func threadStartErrorNamesTheThreadAndTheReason() {
    let error = ThreadStartError(name: "writer", code: 11)
    #expect(error.description.hasPrefix("cannot start thread writer: "))
    #expect(error.description.count > "cannot start thread writer: ".count)
  }
}

/// Plain shared state the lock test guards with nothing but the ``Lock`` under test.
private final class UnguardedCounter: @unchecked Sendable {
  var value = 0
  var inside = 0
  var maximumInside = 0
}
