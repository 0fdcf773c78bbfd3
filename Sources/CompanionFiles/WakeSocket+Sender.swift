import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

extension WakeSocket {
  /// The sending end of a wake socket: one-byte datagrams to a socket path, after a commit another process acts on
  /// (the responder to the listener's ``Role/listener`` socket; every writer to the responder's
  /// ``Role/longPolls``). Never blocks and never fails a request: nobody bound (no socket, a process not running, a
  /// full queue) costs one failed `sendto`, counted in ``failed``; the receiver's fallback look covers it. Safe
  /// from every thread.
  public final class Sender: Sendable {
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

    /// A sender to the `role` socket of the database at `databasePath` (``Role/path(forDatabase:)``).
    public convenience init(_ role: Role, ofDatabase databasePath: String) {
      self.init(socketPath: role.path(forDatabase: databasePath))
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
}
