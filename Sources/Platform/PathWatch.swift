#if canImport(Glibc)
  import Glibc
#endif

/// Blocks a thread until something may have happened to one path: its name deleted, renamed away or replaced (a
/// directory entry event naming it), or its inode unlinked, moved or changed in its attributes. Linux's inotify
/// says so at once, so a watcher that used to look every second (the database file watch of both processes)
/// sleeps until then instead, with a long fallback look (``wait(timeoutMs:)``'s timeout) for file systems where
/// inotify sees nothing (network file systems, a change made on another host).
///
/// Only events about the path wake the waiter: writes never do (no `IN_MODIFY`), and entries of other names in the
/// directory (the write-ahead log, the beacon, sockets) are read and skipped. Without inotify (out of watches or
/// descriptors) every wait is the timeout. The watcher decides what the event means (it looks at the path again).
public final class PathWatch: @unchecked Sendable {
  /// Why ``wait(timeoutMs:)`` returned.
  public enum Outcome: Sendable, Equatable {
    /// An event about the path (or the queue overflowed): look at it now.
    case changed
    /// The timeout passed without an event.
    case timedOut
    /// ``cancel()`` was called (now or before).
    case cancelled
  }

  private let notify: Int32
  private let name: [UInt8]
  private var directoryWatch: Int32 = -1
  private var fileWatch: Int32 = -1
  private let stop: WakePipe?
  private let cancelled = Latch()

  /// Watches `path` (its directory's entries of that name, and the file itself while it exists).
  public init(path: String) {
    let slash = path.lastIndex(of: "/")
    let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    name = Array((slash.map { String(path[path.index(after: $0)...]) } ?? path).utf8)
    stop = WakePipe()
    notify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    guard notify >= 0 else { return }
    directoryWatch = inotify_add_watch(
      notify, directory, UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO))
    fileWatch = inotify_add_watch(notify, path, UInt32(IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF))
  }

  deinit {
    if notify >= 0 { close(notify) }
  }

  /// Whether inotify watches anything (false: every wait lasts its timeout).
  public var isWatching: Bool { notify >= 0 && (directoryWatch >= 0 || fileWatch >= 0) }

  /// Waits until an event about the path arrives, `timeoutMs` (ms) passes or ``cancel()`` is called.
  public func wait(timeoutMs: Int64) -> Outcome {
    let deadline = monotonicMilliseconds() + timeoutMs
    while true {
      if cancelled.value { return .cancelled }
      let remaining = deadline - monotonicMilliseconds()
      if remaining <= 0 { return .timedOut }
      var fds = [pollfd(fd: stop?.readDescriptor ?? -1, events: Int16(POLLIN), revents: 0)]
      if isWatching { fds.append(pollfd(fd: notify, events: Int16(POLLIN), revents: 0)) }
      let ready = poll(&fds, nfds_t(fds.count), Int32(clamping: remaining))
      if ready < 0 && errno != EINTR { return .changed }
      if fds[0].revents != 0 { return .cancelled }
      if fds.count > 1, fds[1].revents != 0, readEvents() { return .changed }
    }
  }

  /// Ends the current and every later wait (any thread).
  public func cancel() {
    cancelled.set()
    stop?.wake()
  }

  /// Reads every queued event; true when one is about the path.
  private func readEvents() -> Bool {
    var relevant = false
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(notify, $0.baseAddress, $0.count) }
      guard count > 0 else { return relevant }
      var offset = 0
      let header = MemoryLayout<inotify_event>.size
      while offset + header <= count {
        let (watch, mask, length) = buffer.withUnsafeBytes { bytes in
          (
            bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self),
            bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
            Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
          )
        }
        let nameStart = offset + header
        offset = nameStart + length
        if mask & UInt32(IN_Q_OVERFLOW) != 0 || watch == fileWatch {
          relevant = true
        } else if watch == directoryWatch, offset <= count {
          let entry = buffer[nameStart..<offset].prefix { $0 != 0 }
          if entry.elementsEqual(name) { relevant = true }
        }
      }
    }
  }
}
