/// What a worker thread sleeps on between looks at its work: woken by ``signal()`` (new work may be there), ended
/// by ``stop()``, or the timeout (its next real deadline, or a long fallback look). A signal given while the worker
/// is busy is kept (one pending flag), so the next ``wait(timeoutMs:)`` returns at once: no signal is lost between
/// a look and the sleep that follows it.
public final class WakeSignal: @unchecked Sendable {
  /// Why ``wait(timeoutMs:)`` returned.
  public enum Outcome: Sendable, Equatable {
    /// ``signal()`` was called since the last wait returned.
    case woken
    /// The timeout passed.
    case timedOut
    /// ``stop()`` was called (now or before): leave.
    case stopped
  }

  private let condition = Condition()
  private var pending = false
  private var stopped = false

  /// A signal with nothing pending.
  public init() {}

  /// Wakes the waiter, or the next wait if none waits now.
  public func signal() {
    condition.locked {
      pending = true
      condition.broadcast()
    }
  }

  /// Ends every wait from now on.
  public func stop() {
    condition.locked {
      stopped = true
      condition.broadcast()
    }
  }

  /// Whether ``stop()`` was called.
  public var isStopped: Bool { condition.locked { stopped } }

  /// Waits until signalled (the signal is taken), stopped, or `timeoutMs` (ms, monotonic) passed; a stop wins over a
  /// pending signal. 0 only takes a pending signal.
  @discardableResult
  public func wait(timeoutMs: Int64) -> Outcome {
    let deadline = monotonicMilliseconds() + max(0, timeoutMs)
    return condition.locked {
      while true {
        if stopped { return .stopped }
        if pending {
          pending = false
          return .woken
        }
        if monotonicMilliseconds() >= deadline { return .timedOut }
        condition.wait(until: deadline)
      }
    }
  }
}
