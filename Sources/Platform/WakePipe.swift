#if canImport(Glibc)
  import Glibc
#endif

/// A pipe that wakes a thread sleeping in `poll(2)`: any thread calls ``wake()``, the sleeper polls
/// ``readDescriptor`` for `POLLIN` and calls ``drain()``. Both ends are non-blocking and close-on-exec.
public final class WakePipe: @unchecked Sendable {
  /// The end the sleeper polls.
  public let readDescriptor: Int32
  /// The end ``wake()`` writes to.
  public let writeDescriptor: Int32

  /// A new pipe; nil when `pipe(2)` fails (out of descriptors).
  public init?() {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return nil }
    for fd in fds {
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }
    readDescriptor = fds[0]
    writeDescriptor = fds[1]
  }

  deinit {
    close(readDescriptor)
    close(writeDescriptor)
  }

  /// Makes the read end readable (never blocks: a full pipe is already readable).
  public func wake() {
    var byte: UInt8 = 1
    _ = write(writeDescriptor, &byte, 1)
  }

  /// Empties the pipe, so the read end is not readable until the next ``wake()``.
  public func drain() {
    var buffer = [UInt8](repeating: 0, count: 64)
    while buffer.withUnsafeMutableBytes({ read(readDescriptor, $0.baseAddress, $0.count) }) > 0 {}
  }
}
