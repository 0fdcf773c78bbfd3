import Platform
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// What the responder tells the listener after a commit the listener acts on, so that the listener's workers sleep
/// until then instead of polling the database (`PRAGMA data_version`) several times a second.
///
/// One datagram of one byte per wake (``ListenerWakeSocket``, `<database>.listener-wake`). A datagram that names
/// no known kind (a newer responder) wakes every worker. The wake is only a hint: each worker still finds its work
/// in the database, and polls it anyway every ``ListenerWakeSocket/fallbackPollMs``, so a lost datagram, a
/// listener that was restarting, or a writer on another host (a standby sharing the file) converge within that.
public enum ListenerWake: UInt8, Sendable, CaseIterable {
  /// The station set, a station's settings, subscriptions or claim changed (register, unregister, heartbeat,
  /// settings, claim): the registration watcher reads the change log (the filter, the routing).
  case registrations = 1
  /// A message was queued by `/v1/send`: the outbound sender looks at the sends.
  case sends = 2
  /// A sync pulled messages whose ACK the device asked for: the device ACK worker takes them.
  case deviceAcks = 3

  /// The kinds one datagram names: every kind for an empty datagram or an unknown byte.
  public static func decode(_ datagram: some Collection<UInt8>) -> Set<ListenerWake> {
    var kinds: Set<ListenerWake> = []
    for byte in datagram {
      guard let kind = ListenerWake(rawValue: byte) else { return Set(allCases) }
      kinds.insert(kind)
    }
    return kinds.isEmpty ? Set(allCases) : kinds
  }
}

/// The listener's end: a UNIX datagram socket beside the database, `<database>.listener-wake`, bound by the
/// listener that holds the lease (a stale socket file left by an earlier one is replaced). Its mode is
/// `0777` less the process's umask (``Platform/FileModes``: `0770` in the shared database folder, where the
/// responder runs as another user of the same group and may send to it; `0700` in a private one). One thread
/// receives on it (``receive()``) and wakes the workers the datagrams name.
public final class ListenerWakeSocket: @unchecked Sendable {
  /// How often a worker that sleeps on wakes looks at the database anyway (ms): what a lost datagram costs.
  public static let fallbackPollMs: Int64 = 30_000

  /// The socket file of the database at `databasePath`.
  public static func path(forDatabase databasePath: String) -> String {
    DatabaseFile.companionPath(databasePath, suffix: ".listener-wake")
  }

  /// The socket file's path.
  public let path: String
  private let descriptor: Int32
  private let stopPipe: WakePipe
  private let closed = Atomic<Bool>(false)
  /// The socket file's device and inode once bound: ``close()`` removes the file only while it is still this one
  /// (a successor may have bound its own at the path already).
  private let boundFile: (device: UInt, inode: UInt)?

  /// Binds the socket at `path` (replacing a socket file there). Throws the `errno` of what failed (a path longer
  /// than a socket address holds is `ENAMETOOLONG`).
  public init(path: String) throws(FileLockError) {
    self.path = path
    guard let pipe = WakePipe() else { throw FileLockError(path: path, operation: "pipe", errno: errno) }
    stopPipe = pipe
    (descriptor, boundFile) = try bindDatagramSocket(at: path)
  }

  deinit {
    close()
    Glibc.close(descriptor)
  }

  /// Blocks until a datagram arrives (the kinds it names) or ``close()`` is called (nil).
  public func receive() -> Set<ListenerWake>? {
    var buffer = [UInt8](repeating: 0, count: 64)
    while !closed.load(ordering: .acquiring) {
      var fds = [
        pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
        pollfd(fd: stopPipe.readDescriptor, events: Int16(POLLIN), revents: 0),
      ]
      let ready = poll(&fds, 2, -1)
      if ready < 0 { continue }
      if fds[1].revents != 0 { return nil }
      let count = buffer.withUnsafeMutableBytes {
        recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
      }
      if count >= 0 { return ListenerWake.decode(buffer[..<count]) }
    }
    return nil
  }

  /// Ends ``receive()`` (now and later) and removes the socket file, unless another listener's replaced it; the
  /// descriptor is closed when the object goes (a receiving thread may still hold it). Safe to call twice.
  public func close() {
    guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
    stopPipe.wake()
    unlinkBoundSocket(path, boundFile)
  }
}

/// The sending end of a wake socket: one-byte datagrams to a socket path, after a commit another process acts on
/// (the responder to the listener's ``ListenerWakeSocket``; every writer to the responder's
/// ``LongPollWakeSocket``). Never blocks and never fails a request: nobody bound (no socket, a process not running,
/// a full queue) costs one failed `sendto`, counted in ``failed``; the receiver's fallback poll covers it. Safe from
/// every thread.
public final class WakeSender: Sendable {
  /// The socket path it sends to (resolved at each send: the file may not exist yet when the sender is made).
  public let socketPath: String
  private let descriptor: Int32
  /// Wakes sent, and wakes that could not be sent (since start).
  public let sent = Atomic<Int>(0)
  public let failed = Atomic<Int>(0)

  /// A sender to the socket at `socketPath`.
  public init(socketPath: String) {
    self.socketPath = socketPath
    descriptor = socket(
      AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
  }

  /// A sender to the listener of the database at `databasePath` (``ListenerWakeSocket/path(forDatabase:)``).
  public convenience init(listenerOf databasePath: String) {
    self.init(socketPath: ListenerWakeSocket.path(forDatabase: databasePath))
  }

  deinit { if descriptor >= 0 { Glibc.close(descriptor) } }

  /// Sends `wake` to the listener (one datagram); false (and counted) when it could not be sent.
  @discardableResult
  public func send(_ wake: ListenerWake) -> Bool { send(byte: wake.rawValue) }

  /// Sends one datagram of one byte; false (and counted) when it could not be sent.
  @discardableResult
  public func send(byte: UInt8) -> Bool {
    guard descriptor >= 0, var address = UnixAddress(socketPath) else {
      failed.add(1, ordering: .relaxed)
      return false
    }
    var byte = byte
    let result = address.withPointer { pointer, length in sendto(descriptor, &byte, 1, 0, pointer, length) }
    guard result == 1 else {
      failed.add(1, ordering: .relaxed)
      return false
    }
    sent.add(1, ordering: .relaxed)
    return true
  }
}

/// Binds a UNIX datagram socket at `path`, replacing a socket file there (a stale one: the caller decided no live
/// process owns it). Returns the descriptor and the bound file's device and inode (to remove it later only while it
/// is still this one). Throws the `errno` of what failed (a path longer than a socket address holds is
/// `ENAMETOOLONG`).
func bindDatagramSocket(at path: String) throws(FileLockError) -> (Int32, (device: UInt, inode: UInt)?) {
  guard var address = UnixAddress(path) else {
    throw FileLockError(path: path, operation: "bind", errno: ENAMETOOLONG)
  }
  let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
  guard fd >= 0 else { throw FileLockError(path: path, operation: "socket", errno: errno) }
  var info = stat()
  if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK { unlink(path) }
  guard address.bind(fd) == 0 else {
    let failure = errno
    Glibc.close(fd)
    throw FileLockError(path: path, operation: "bind", errno: failure)
  }
  if lstat(path, &info) == 0 { return (fd, (UInt(info.st_dev), UInt(info.st_ino))) }
  return (fd, nil)
}

/// Removes the socket file at `path` while it is still the one `bound` names (a successor may have bound its own).
func unlinkBoundSocket(_ path: String, _ bound: (device: UInt, inode: UInt)?) {
  var info = stat()
  if let bound, lstat(path, &info) == 0, UInt(info.st_dev) == bound.device, UInt(info.st_ino) == bound.inode {
    unlink(path)
  }
}

/// A `sockaddr_un` for a path; nil when the path does not fit.
struct UnixAddress {
  private var storage = sockaddr_un()

  init?(_ path: String) {
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: storage.sun_path)
    guard !bytes.isEmpty, bytes.count < capacity else { return nil }
    storage.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &storage.sun_path) { raw in
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
  }

  mutating func withPointer<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
    let length = socklen_t(MemoryLayout<sockaddr_un>.size)
    return withUnsafePointer(to: &storage) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
    }
  }

  mutating func bind(_ fd: Int32) -> Int32 {
    withPointer { Glibc.bind(fd, $0, $1) }
  }
}
