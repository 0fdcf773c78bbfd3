/// The seam for the push sender (issue 5): told after every commit that stored messages, and so queued outbox rows.
///
/// The outbox rows themselves are written in the same transaction as their messages (`storeMessages`), so a push
/// survives a crash whether or not the notifier ran; the notifier only lets the sender wake at once instead of on
/// its next poll. Called on the listener's writer thread: return quickly, never block on the network.
public protocol OutboxNotifier: Sendable {
  /// `stations` (upper-case addresses, without repeats) got new messages and pending pushes.
  func messagesStored(stations: [String])
}

/// The notifier's place in the listener's life: the push sender starts once this process holds the lease (a
/// standby listener sends nothing) and stops after the writer committed its last batch.
public protocol OutboxNotifierLifecycle: OutboxNotifier {
  /// The lease is held and the threads are about to start.
  func listenerStarted()
  /// The writer has committed everything; the process is about to exit.
  func listenerStopped()
}
