import CompanionFiles
import Platform
import Store

extension ListenerRuntime {
  /// Binds the wake socket beside the database (``CompanionFiles/WakeSocket/Role/listener``), or nil (logged) when it cannot be:
  /// the workers then poll the database at their configured intervals, as without a responder that sends wakes.
  func bindWakeSocket() -> WakeSocket? {
    let path = WakeSocket.Role.listener.path(forDatabase: options.config.server.database)
    do {
      // The listener replaces any socket file there (``CompanionFiles/WakeSocket/Binding/replacing``): never nil.
      return try WakeSocket.bind(.listener, path: path)
    } catch {
      logger.warn(
        "cannot bind the wake socket: the listener polls the database for sends and registrations instead",
        ["socket": path, "error": error.description])
      return nil
    }
  }

  /// Starts the thread that receives the responder's wakes on `socket` and signals the workers they name; it ends
  /// when the socket is closed.
  func startWakeReader(_ socket: WakeSocket, wakes: WorkerSignals) throws -> Latch {
    try ListenerThread.wake.start({
      while let datagram = socket.receive() { wakes.signal(ListenerWake.decode(datagram)) }
    })
  }
}
