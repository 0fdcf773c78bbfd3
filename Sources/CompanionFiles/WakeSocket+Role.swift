extension WakeSocket {
  /// The two wake sockets beside a database: which file, how it is bound and how long its binder trusts it.
  public enum Role: Sendable, CaseIterable {
    /// The listener's (`<database>.listener-wake`): the responder sends it a ``ListenerWake`` after a commit the
    /// listener acts on (a registration, a send, ACKs a device asked for).
    case listener
    /// The responder's held long polls' (`<database>.longpoll-wake`): every process that writes the database
    /// sends it one byte after each commit (the listener's stored messages and send states, the responder's read
    /// markers and sends).
    case longPolls

    /// The socket file's suffix after the database's real path.
    public var suffix: String {
      switch self {
      case .listener: ".listener-wake"
      case .longPolls: ".longpoll-wake"
      }
    }

    /// The socket file of the database at `databasePath` (``DatabaseFile/companionPath(_:suffix:)``).
    public func path(forDatabase databasePath: String) -> String {
      DatabaseFile.companionPath(databasePath, suffix: suffix)
    }

    /// How the binder takes the path: the listener replaces any socket file there (it holds the lease, so a
    /// socket file there is an earlier listener's); a responder leaves a live one to the responder that holds it.
    public var binding: Binding {
      switch self {
      case .listener: .replacing
      case .longPolls: .ifFree
      }
    }

    /// How often the binder looks at the database anyway while it has the socket (ms): what a lost datagram or a
    /// writer on another host costs. The listener's workers: 30 s. Held long polls: 5 s (without the socket the
    /// responder looks every 10 ms while anything is held).
    public var fallbackPollMs: Int64 {
      switch self {
      case .listener: 30_000
      case .longPolls: 5_000
      }
    }
  }
}
