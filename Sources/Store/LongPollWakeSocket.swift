import Platform
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The responder's wake socket for held long polls: a UNIX datagram socket beside the database,
/// `<database>.longpoll-wake`. Every process that writes the database sends it one byte after each commit
/// (``CommitNotice``, through a ``WakeSender``): the listener's stored messages and send states, the responder's own
/// read markers and sends. The FastCGI responder's keeper sleeps on its descriptor while requests are held, and
/// looks at the database (`PRAGMA data_version`, then the new rows) only when a datagram came, instead of every
/// 10 ms. A lost datagram, or a writer on another host, is covered by the keeper's fallback look
/// (``fallbackPollMs``).
///
/// One responder process binds it. A second one finds it live (a `connect(2)` to it succeeds) and does without
/// (``bindIfFree(path:)`` returns nil: that process looks every 10 ms as before); a socket file left by a process
/// that ended is replaced. Its mode is `0777` less the umask, as the listener's (``Platform/FileModes``).
public final class LongPollWakeSocket: @unchecked Sendable {
  /// How often held long polls are looked at anyway while the socket is bound (ms): what a lost datagram or a
  /// writer on another host costs in latency.
  public static let fallbackPollMs: Int64 = 5_000

  /// The socket file of the database at `databasePath`.
  public static func path(forDatabase databasePath: String) -> String {
    DatabaseFile.companionPath(databasePath, suffix: ".longpoll-wake")
  }

  /// The socket file's path.
  public let path: String
  /// The bound socket, non-blocking: readable when a wake is queued (an epoll set watches it).
  public let descriptor: Int32
  private let boundFile: (device: UInt, inode: UInt)?
  private let closed = Atomic<Bool>(false)

  /// Binds the socket at `path` unless another live process holds it there (nil). Throws the `errno` of what
  /// failed otherwise.
  public static func bindIfFree(path: String) throws(FileLockError) -> LongPollWakeSocket? {
    if isLive(path) { return nil }
    let (fd, bound) = try bindDatagramSocket(at: path)
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    return LongPollWakeSocket(path: path, descriptor: fd, boundFile: bound)
  }

  private init(path: String, descriptor: Int32, boundFile: (device: UInt, inode: UInt)?) {
    self.path = path
    self.descriptor = descriptor
    self.boundFile = boundFile
  }

  deinit {
    close()
    Glibc.close(descriptor)
  }

  /// Whether a process has a socket bound at `path` (a datagram `connect(2)` to it succeeds).
  static func isLive(_ path: String) -> Bool {
    guard var address = UnixAddress(path) else { return false }
    let probe = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard probe >= 0 else { return false }
    defer { Glibc.close(probe) }
    return address.withPointer { connect(probe, $0, $1) } == 0
  }

  /// Reads every queued datagram without blocking; true when there was at least one.
  public func drain() -> Bool {
    var buffer = [UInt8](repeating: 0, count: 64)
    var any = false
    while buffer.withUnsafeMutableBytes({ recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) })
      >= 0
    {
      any = true
    }
    return any
  }

  /// Removes the socket file, unless another process replaced it; the descriptor closes with the object. Safe to
  /// call twice.
  public func close() {
    guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
    unlinkBoundSocket(path, boundFile)
  }
}

/// Told after each write transaction of a connection commits (``StoreOptions/commitNotice``): the process wakes
/// the responder's held long polls (``LongPollWakeSocket``) with it. Called on the committing thread, after
/// `COMMIT` returned, so what was committed is visible to every connection by then; it must not block.
public final class CommitNotice: Sendable, Equatable {
  private let notify: @Sendable () -> Void

  /// A notice that runs `notify` after each commit.
  public init(_ notify: @escaping @Sendable () -> Void) { self.notify = notify }

  /// A notice that sends one byte to the long-poll wake socket of the database at `databasePath`.
  public static func wakingLongPolls(of databasePath: String) -> CommitNotice {
    let sender = WakeSender(socketPath: LongPollWakeSocket.path(forDatabase: databasePath))
    return CommitNotice { sender.send(byte: 1) }
  }

  func committed() { notify() }

  public static func == (lhs: CommitNotice, rhs: CommitNotice) -> Bool { lhs === rhs }
}
