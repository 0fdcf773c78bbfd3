import Platform
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A wake socket beside the database: a UNIX datagram socket that one process binds and the others send one-byte
/// datagrams to (``Sender``) after a commit the binder acts on, so that the binder sleeps until then instead of
/// polling the database. There are two, one per ``Role``, which says the socket's file, how it is bound
/// (``Binding``) and how often its binder looks at the database anyway (``Role/fallbackPollMs``):
///
/// - ``Role/listener``, `<database>.listener-wake`: bound by the listener that holds the lease, replacing a socket
///   file an earlier one left (``Binding/replacing``). One thread blocks in ``receive()`` and wakes the workers
///   the datagram names (``ListenerWake``).
/// - ``Role/longPolls``, `<database>.longpoll-wake`: bound by one FastCGI responder, unless another live one holds
///   it (``Binding/ifFree``: that process does without). Every writer's commit sends it a byte (`Store`'s
///   `CommitNotice`); the keeper's epoll set watches ``descriptor`` and ``drain()``s it.
///
/// The socket file's mode is `0777` less the process's umask (``Platform/FileModes``: `0770` in the shared database
/// folder, where the other daemon runs as another user of the same group and may send to it; `0700` in a private
/// one). A wake is only a hint: a lost datagram, a binder that was restarting or a writer on another host is
/// covered by the fallback look.
public final class WakeSocket: @unchecked Sendable {
  /// Which of the two wake sockets this is.
  public let role: Role
  /// The socket file's path.
  public let path: String
  /// The bound socket, non-blocking: readable when a wake is queued (an epoll set may watch it).
  public let descriptor: Int32
  private let stopPipe: WakePipe
  private let closed = Atomic<Bool>(false)
  /// The socket file's device and inode once bound: ``close()`` removes the file only while it is still this one
  /// (a successor may have bound its own at the path already).
  private let boundFile: (device: UInt, inode: UInt)?

  /// Binds the socket of `role` at `path` (usually ``Role/path(forDatabase:)``) as its ``Role/binding`` says:
  /// nil only for ``Binding/ifFree`` while another live process holds the path. Throws the `errno` of what failed
  /// (a path longer than a socket address holds is `ENAMETOOLONG`).
  public static func bind(_ role: Role, path: String) throws(FileLockError) -> WakeSocket? {
    if role.binding == .ifFree && isLive(path) { return nil }
    guard let pipe = WakePipe() else { throw FileLockError(path: path, operation: "pipe", errno: errno) }
    let (fd, bound) = try bindDatagramSocket(at: path)
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    return WakeSocket(role: role, path: path, descriptor: fd, stopPipe: pipe, boundFile: bound)
  }

  private init(
    role: Role, path: String, descriptor: Int32, stopPipe: WakePipe, boundFile: (device: UInt, inode: UInt)?
  ) {
    self.role = role
    self.path = path
    self.descriptor = descriptor
    self.stopPipe = stopPipe
    self.boundFile = boundFile
  }

  deinit {
    close()
    Glibc.close(descriptor)
  }

  /// Blocks until a datagram arrives (its bytes, up to 64: ``ListenerWake/decode(_:)`` reads the listener's) or
  /// ``close()`` is called (nil).
  public func receive() -> [UInt8]? {
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
      if count >= 0 { return Array(buffer[..<count]) }
    }
    return nil
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

  /// Ends ``receive()`` (now and later) and removes the socket file, unless another process has replaced it; the
  /// descriptor is closed when the object goes (a receiving thread or an epoll set may still hold it). Safe to
  /// call twice.
  public func close() {
    guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
    stopPipe.wake()
    Self.unlinkBoundSocket(path, boundFile)
  }
}
