import Platform

/// The listener's threads, all of them: the one table of what runs in `aprs-listener`, each with what it does
/// (docs/architecture.md "The listener's threads" shows the same table, with what wakes each). Every
/// thread is started through ``start(_:)``, so its name (as `top -H` and the logs show it) is the case's raw value.
public enum ListenerThread: String, CaseIterable, Sendable {
  /// Reads and writes the APRS-IS connection: login, the one `#filter` line, lines in, ACKs and sends out.
  case connection
  /// Commits what the connection read, one transaction per batch, and only then lets its ACKs go (the writer's
  /// connection syncs every commit).
  case writer
  /// Watches the registered stations and hands the connection a new `#filter` line when they change.
  case registrations
  /// Transmits `/v1/send` messages on a schedule of its own, within the transmit budget.
  case sender
  /// Sends the ACKs a station's `device` policy kept, once a device pulled the message.
  case deviceAcks = "device-acks"
  /// Reads the wake socket the responder's commits are announced on, and wakes the thread each one concerns.
  case wake
  /// Renews the lease, publishes the status and counters, prunes, checkpoints.
  case housekeeper
  /// Writes the beacon file beside the database every 10 s, so `/health` can name a fault the database
  /// cannot hold.
  case beacon
  /// Watches the database file for deletion or replacement (inotify, with a slow fallback look).
  case fileWatch = "file-watch"

  /// Starts `body` on a thread of this name; the latch is set when it returns.
  public func start(_ body: @escaping @Sendable () -> Void) throws(ThreadStartError) -> Latch {
    try startThread(name: rawValue, body)
  }
}
