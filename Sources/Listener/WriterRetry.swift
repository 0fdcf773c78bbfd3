import Store

/// The writer's state while batches cannot be stored (docs/design.md "Faults"): a batch whose transaction failed is
/// kept and tried again after a delay that starts at ``firstDelayMs`` and doubles up to ``maximumDelayMs``, for as
/// long as storing fails; the first success ends it. Pure: the writer passes the time in (monotonic ms).
struct WriterRetry: Equatable {
  /// The delay after the first failure (ms).
  static let firstDelayMs: Int64 = 100
  /// The longest delay between two attempts (ms).
  static let maximumDelayMs: Int64 = 5_000

  /// Attempts that failed in a row (0 while storing works).
  private(set) var failures = 0
  /// Why the last attempt failed, nil while storing works.
  private(set) var lastError: StoreError?
  /// When the current run of failures began (monotonic ms), nil while storing works.
  private(set) var failingSince: Int64?
  /// When the next attempt is due (monotonic ms); 0 while storing works (at once).
  private(set) var nextAttemptAt: Int64 = 0

  /// Whether storing fails now.
  var isFailing: Bool { failures > 0 }

  /// The delay after `failures` failures in a row (ms): 100, 200, 400, … capped at 5 s.
  static func delayMs(afterFailures failures: Int) -> Int64 {
    guard failures > 0 else { return 0 }
    let shift = min(failures - 1, 16)
    return min(maximumDelayMs, firstDelayMs << Int64(shift))
  }

  /// Records a failed attempt at `now`; returns whether it is the first of a run (the time to log and publish).
  mutating func failed(_ error: StoreError, now: Int64) -> Bool {
    failures += 1
    lastError = error
    if failingSince == nil { failingSince = now }
    nextAttemptAt = now + Self.delayMs(afterFailures: failures)
    return failures == 1
  }

  /// Records a successful attempt; returns how long storing had failed (ms), nil when it had not.
  mutating func succeeded(now: Int64) -> Int64? {
    defer { self = WriterRetry() }
    return failingSince.map { now - $0 }
  }
}

/// The lines the writer took from the queue and has not stored yet, oldest first: the batch being retried and the
/// lines that arrived behind it. Bounded like the queue (``LineQueue/hold(lines:bytes:)`` counts them there): when
/// a line more would not fit, the oldest go first (``trim(toLines:bytes:)``). Pure.
struct HeldLines {
  private var lines: [QueuedLine] = []
  private var head = 0
  /// Their memory, bytes (``LineQueue/cost(_:)`` each).
  private(set) var bytes = 0

  /// Lines held.
  var count: Int { lines.count - head }
  var isEmpty: Bool { count == 0 }

  /// Adds lines behind the ones held.
  mutating func append(_ more: [QueuedLine]) {
    for line in more { bytes += LineQueue.cost(line.bytes) }
    lines.append(contentsOf: more)
  }

  /// The oldest `maximum` lines (not removed).
  func oldest(_ maximum: Int) -> [QueuedLine] { Array(lines[head..<(head + min(maximum, count))]) }

  /// Removes the oldest `count` lines (a batch that was stored).
  mutating func removeOldest(_ removed: Int) {
    for line in lines[head..<(head + min(removed, count))] { bytes -= LineQueue.cost(line.bytes) }
    head += min(removed, count)
    if head == lines.count {
      lines.removeAll(keepingCapacity: true)
      head = 0
    } else if head > 4096 && head * 2 > lines.count {
      lines.removeFirst(head)
      head = 0
    }
  }

  /// Drops the oldest lines until at most `maximumLines` lines of at most `maximumBytes` bytes are left; returns
  /// how many it dropped.
  mutating func trim(toLines maximumLines: Int, bytes maximumBytes: Int) -> Int {
    var dropped = 0
    while count > 0 && (count > maximumLines || bytes > maximumBytes) {
      bytes -= LineQueue.cost(lines[head].bytes)
      head += 1
      dropped += 1
    }
    removeOldest(0)
    return dropped
  }
}
