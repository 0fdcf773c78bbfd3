/// What the responder tells the listener after a commit the listener acts on, so that the listener's workers sleep
/// until then instead of polling the database (`PRAGMA data_version`) several times a second.
///
/// One datagram of one byte per wake, on the listener's wake socket (``WakeSocket/Role/listener``,
/// `<database>.listener-wake`), sent with ``WakeSocket/Sender/send(_:)``. A datagram that names no known kind (a
/// newer responder) wakes every worker. The wake is only a hint: each worker still finds its work in the database,
/// and polls it anyway every ``WakeSocket/Role/fallbackPollMs`` (30 s), so a lost datagram, a listener that was
/// restarting, or a writer on another host (a standby sharing the file) converge within that.
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
