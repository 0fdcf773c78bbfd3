#if canImport(Glibc)
  import Glibc
#endif

/// A plain pthread mutex, for the places that lock and unlock in different calls or share one lock among
/// objects (the store's ``WriterGate``, the FastCGI workers' accept lock, ``Condition``). Where one value is
/// guarded by one owner, `Synchronization.Mutex` is the better tool.
///
/// Not recursive: a thread that locks it twice deadlocks. Every `lock()` needs one `unlock()` on the same thread.
public final class Lock: @unchecked Sendable {
  /// The mutex itself (``Condition`` waits on it).
  let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

  /// A new, unlocked mutex.
  public init() { pthread_mutex_init(mutex, nil) }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  /// Waits until the mutex is free and takes it.
  public func lock() { pthread_mutex_lock(mutex) }

  /// Releases the mutex taken by ``lock()`` on this thread.
  public func unlock() { pthread_mutex_unlock(mutex) }

  /// Runs `body` holding the mutex, and returns its result.
  public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    lock()
    defer { unlock() }
    return try body()
  }
}
