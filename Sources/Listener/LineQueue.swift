import Platform

/// The bounded queue between the reader (socket → lines) and the writer (lines → database).
///
/// ``push(_:)`` never waits: when the queue holds ``capacity`` lines, or the lines would take more than
/// ``byteCapacity`` bytes of memory, the line is refused and the caller counts the drop, so the socket is always
/// read and a burst costs at most ``byteCapacity`` bytes however long it lasts. ``popBatch(maximum:until:)``
/// waits for lines (or the close) with a deadline.
final class LineQueue: @unchecked Sendable {
  /// What one queued line costs beside its bytes: its array's header and allocation, and its slot here.
  static let perLineOverhead = 64

  /// The most lines queued at once.
  let capacity: Int
  /// The most memory queued lines may take, bytes (each counts its length plus ``perLineOverhead``).
  let byteCapacity: Int
  private let condition = Condition()
  private var lines: [QueuedLine] = []
  private var head = 0
  private var bytes = 0
  private var closed = false
  /// Lines and bytes the writer holds outside the queue (``hold(lines:bytes:)``).
  private var held = (lines: 0, bytes: 0)

  init(capacity: Int, byteCapacity: Int = .max) {
    self.capacity = max(1, capacity)
    self.byteCapacity = max(1, byteCapacity)
  }

  /// The memory `line` counts for.
  static func cost(_ line: [UInt8]) -> Int { line.count + perLineOverhead }

  /// Adds a line from `origin`; false (nothing added) when the queue is full (lines or bytes) or closed.
  func push(_ line: [UInt8], origin: LineOrigin = .aprsis) -> Bool {
    let cost = Self.cost(line)
    return condition.locked {
      guard !closed, lines.count - head + held.lines < capacity, bytes + held.bytes + cost <= byteCapacity
      else {
        return false
      }
      let wasEmpty = lines.count == head
      lines.append(QueuedLine(line, origin: origin))
      bytes += cost
      if wasEmpty { condition.broadcast() }
      return true
    }
  }

  /// Lines (and their memory, bytes, each line counted as in ``cost(_:)``) that the writer took and keeps outside
  /// the queue until it can store them: they count against ``capacity`` and ``byteCapacity`` as if still queued,
  /// so a batch kept for retrying costs no more memory than the bound allows. Replaces the previous figures.
  func hold(lines: Int, bytes: Int) {
    condition.locked { held = (max(0, lines), max(0, bytes)) }
  }

  /// Lines waiting.
  var count: Int { condition.locked { lines.count - head } }

  /// The memory the waiting lines count for, bytes.
  var byteCount: Int { condition.locked { bytes } }

  /// No more lines will be pushed; the writer takes what is left and then gets empty batches at once.
  func close() {
    condition.locked {
      closed = true
      condition.broadcast()
    }
  }

  /// Up to `maximum` lines, oldest first, waiting until there is at least one, the queue is closed, or the
  /// monotonic time `deadline` (ms). `isClosed`: closed and nothing left after this batch.
  func popBatch(maximum: Int, until deadline: Int64) -> (lines: [QueuedLine], isClosed: Bool) {
    condition.locked {
      while lines.count == head && !closed {
        if monotonicMilliseconds() >= deadline { break }
        condition.wait(until: deadline)
      }
      let available = lines.count - head
      guard available > 0 else { return ([], closed) }
      let take = min(maximum, available)
      var batch: [QueuedLine]
      if take == available && head == 0 {
        batch = lines
        lines = []
      } else {
        batch = Array(lines[head..<(head + take)])
        head += take
        if head == lines.count {
          lines.removeAll(keepingCapacity: true)
          head = 0
        } else if head > 4096 && head * 2 > lines.count {
          lines.removeFirst(head)
          head = 0
        }
      }
      for line in batch { bytes -= Self.cost(line.bytes) }
      return (batch, closed && lines.count == head)
    }
  }
}
