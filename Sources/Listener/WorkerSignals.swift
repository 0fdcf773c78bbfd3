import CompanionFiles
import Platform
import Store

/// The signals the listener's database workers sleep on (``Platform/WakeSignal``): the registration watcher, the
/// outbound sender and the device ACK worker each look at the database when theirs is signalled, at their next
/// deadline, or after their fallback interval (``pollMs(_:withoutSocket:)``), never on a short poll.
///
/// Signalled by the datagrams of the listener's wake socket (``CompanionFiles/WakeSocket/Role/listener``: the
/// responder's commits, ``CompanionFiles/ListenerWake``), and
/// by the connection when the login's state changes (a verified login lets waiting copies and ACKs go out).
final class WorkerSignals: Sendable {
  let registrations = WakeSignal()
  let sends = WakeSignal()
  let deviceAcks = WakeSignal()
  /// Whether the wake socket is bound (the workers may sleep long).
  let listening: Bool

  init(listening: Bool) {
    self.listening = listening
  }

  /// The signal of one kind of wake.
  func signal(for kind: ListenerWake) -> WakeSignal {
    switch kind {
    case .registrations: registrations
    case .sends: sends
    case .deviceAcks: deviceAcks
    }
  }

  /// Wakes the workers `kinds` name.
  func signal(_ kinds: Set<ListenerWake>) {
    for kind in kinds { signal(for: kind).signal() }
  }

  /// The login's state changed: what waits for a verified login looks again.
  func loginChanged() {
    sends.signal()
    deviceAcks.signal()
  }

  /// Ends every worker's wait for good.
  func stopAll() {
    for kind in ListenerWake.allCases { signal(for: kind).stop() }
  }

  /// How long a worker sleeps between looks without a wake (ms): the long fallback while the socket is bound
  /// (``CompanionFiles/WakeSocket/Role/fallbackPollMs``: what a lost datagram or a writer on another host costs), and
  /// `withoutSocket` (its configured poll) when it could not be bound.
  func pollMs(_ kind: ListenerWake, withoutSocket: Int64) -> Int64 {
    listening ? max(withoutSocket, WakeSocket.Role.listener.fallbackPollMs) : withoutSocket
  }
}
