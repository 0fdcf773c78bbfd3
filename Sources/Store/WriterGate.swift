import Platform

/// A queue for the write lock among the connections of ONE process (the responder's workers).
///
/// SQLite makes a writer that finds the lock taken sleep and poll (1, 2, 5, 10, … ms up to the busy
/// timeout), which shows as tail latency when several threads of one process write at once. Sharing a
/// gate makes them wait on a mutex instead and go in turn the moment the lock is free. Writers in other
/// processes (the listener) are still met by the busy timeout.
public final class WriterGate: @unchecked Sendable, Equatable {
  private let lock = Lock()

  /// A new, open gate.
  public init() {}

  func enter() { lock.lock() }
  func leave() { lock.unlock() }

  /// Gates are equal only to themselves.
  public static func == (lhs: WriterGate, rhs: WriterGate) -> Bool { lhs === rhs }
}
