import Platform
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

/// Values the signal thread hands back (written before a latch is set, read after it).
private final class ResultBox: @unchecked Sendable {
  var signal: Int32 = 0
}

private final class ThreadIdentity: @unchecked Sendable {
  var value = pthread_t()
}
