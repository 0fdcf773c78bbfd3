import Store
import Testing

@testable import Listener

/// The writer's retry state, its held lines and the queue's bound on them: pure parts of "a batch that cannot be
/// stored is kept and retried" (docs/design.md "Faults").
@Suite struct WriterRetryTests {
  @Test func delaysStartAt100MsAndDoubleUpTo5Seconds() {
    #expect(WriterRetry.delayMs(afterFailures: 0) == 0)
    #expect(
      (1...8).map { WriterRetry.delayMs(afterFailures: $0) } == [100, 200, 400, 800, 1600, 3200, 5000, 5000])
    #expect(WriterRetry.delayMs(afterFailures: 10_000) == 5000)
  }

  @Test func aRunOfFailuresEndsWithTheFirstSuccess() {
    var retry = WriterRetry()
    #expect(!retry.isFailing)
    let first = retry.failed(.full("database or disk is full"), now: 1_000)
    #expect(first)
    #expect(retry.isFailing && retry.nextAttemptAt == 1_100 && retry.failingSince == 1_000)
    let second = retry.failed(.busy, now: 1_100)
    #expect(!second)
    #expect(retry.nextAttemptAt == 1_300 && retry.lastError == .busy && retry.failures == 2)
    let failedFor = retry.succeeded(now: 4_000)
    #expect(failedFor == 3_000)
    #expect(!retry.isFailing && retry.nextAttemptAt == 0 && retry.lastError == nil)
    let again = retry.succeeded(now: 5_000)
    #expect(again == nil)
  }

  @Test func heldLinesKeepTheirOrderAndDropTheOldestFirst() {
    var held = HeldLines()
    held.append((0..<10).map { QueuedLine(Array("line \($0)".utf8)) })
    #expect(held.count == 10)
    #expect(held.bytes == (0..<10).reduce(0) { $0 + LineQueue.cost(Array("line \($1)".utf8)) })
    #expect(held.oldest(3).map(\.bytes) == (0..<3).map { Array("line \($0)".utf8) })
    held.removeOldest(2)
    #expect(held.oldest(1).map(\.bytes) == [Array("line 2".utf8)])
    let trimmed = held.trim(toLines: 5, bytes: .max)
    #expect(trimmed == 3)
    #expect(held.oldest(10).map(\.bytes) == (5..<10).map { Array("line \($0)".utf8) })
    let one = LineQueue.cost(Array("line 5".utf8))
    let trimmedBytes = held.trim(toLines: .max, bytes: 2 * one)
    #expect(trimmedBytes == 3)
    #expect(held.oldest(10).map(\.bytes) == [Array("line 8".utf8), Array("line 9".utf8)])
    held.removeOldest(5)
    #expect(held.isEmpty && held.bytes == 0)
  }

  @Test func linesTheWriterHoldsCountAgainstTheQueuesBounds() {
    let queue = LineQueue(capacity: 4, byteCapacity: 4 * LineQueue.cost([0x41]))
    queue.hold(lines: 3, bytes: 0)
    #expect(queue.push([0x41]))
    #expect(!queue.push([0x42]), "3 held + 1 queued fill 4 lines")
    queue.hold(lines: 0, bytes: 3 * LineQueue.cost([0x41]))
    #expect(!queue.push([0x42]), "the bytes held fill the byte bound")
    queue.hold(lines: 0, bytes: 0)
    #expect(queue.push([0x42]))
  }

  @Test func anAttemptThatWaitsIsReportedBeforeItFails() {
    var state = ListenerHealth.State()
    #expect(ListenerHealth.storeFault(state, monotonicNow: 10_000) == nil)
    state.attemptStartedAt = 9_000
    #expect(ListenerHealth.storeFault(state, monotonicNow: 10_000) == nil, "1 s is an ordinary commit")
    let stalled = ListenerHealth.storeFault(state, monotonicNow: 12_500)
    #expect(
      stalled?.hasPrefix("storing a batch has waited 3 s for the database") == true, "\(stalled ?? "nil")")
    state.storeFault = "database or disk is full"
    #expect(ListenerHealth.storeFault(state, monotonicNow: 12_500) == "database or disk is full")
  }
}
