import Platform
import Store

extension ListenerRuntime {
  /// Binds the wake socket beside the database (``Store/ListenerWakeSocket``), or nil (logged) when it cannot be:
  /// the workers then poll the database at their configured intervals, as without a responder that sends wakes.
  func bindWakeSocket() -> ListenerWakeSocket? {
    let path = ListenerWakeSocket.path(forDatabase: options.config.server.database)
    do {
      return try ListenerWakeSocket(path: path)
    } catch {
      logger.warn(
        "cannot bind the wake socket: the listener polls the database for sends and registrations instead",
        ["socket": path, "error": error.description])
      return nil
    }
  }

  /// Starts the thread that receives the responder's wakes on `socket` and signals the workers they name; it ends
  /// when the socket is closed.
  func startWakeReader(_ socket: ListenerWakeSocket, wakes: ListenerWakes) throws -> Latch {
    try ListenerThread.wake.start({
      while let kinds = socket.receive() { wakes.signal(kinds) }
    })
  }
}
