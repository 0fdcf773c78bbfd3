/// A flag that is set once and can be waited for, with a deadline or without: a thread's end, a stop request.
public final class Latch: @unchecked Sendable {
  private let condition = Condition()
  private var isSet = false

  /// A latch not set yet.
  public init() {}

  /// Sets it and wakes the waiters. Setting it again changes nothing.
  public func set() {
    condition.locked {
      isSet = true
      condition.broadcast()
    }
  }

  /// Whether it is set.
  public var value: Bool { condition.locked { isSet } }

  /// Waits until it is set or `timeoutMs` (ms on the monotonic clock) passed; returns whether it is set.
  @discardableResult
  public func wait(timeoutMs: Int64) -> Bool {
    let deadline = monotonicMilliseconds() + timeoutMs
    return condition.locked {
      while !isSet {
        if monotonicMilliseconds() >= deadline { return false }
        condition.wait(until: deadline)
      }
      return true
    }
  }

  /// Waits until it is set, however long that takes.
  public func wait() {
    while !wait(timeoutMs: 86_400_000) {}
  }
}
