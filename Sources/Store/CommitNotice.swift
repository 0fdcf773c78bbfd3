import CompanionFiles

/// Told after each write transaction of a connection commits (``StoreOptions/commitNotice``): the process wakes
/// the responder's held long polls (``CompanionFiles/WakeSocket/Role/longPolls``) with it. Called on the committing
/// thread, after `COMMIT` returned, so what was committed is visible to every connection by then; it must not block.
public final class CommitNotice: Sendable, Equatable {
  private let notify: @Sendable () -> Void

  /// A notice that runs `notify` after each commit.
  public init(_ notify: @escaping @Sendable () -> Void) { self.notify = notify }

  /// A notice that sends one byte to the long-poll wake socket of the database at `databasePath`.
  public static func wakingLongPolls(of databasePath: String) -> CommitNotice {
    let sender = WakeSocket.Sender(.longPolls, ofDatabase: databasePath)
    return CommitNotice { sender.send(byte: 1) }
  }

  func committed() { notify() }

  public static func == (lhs: CommitNotice, rhs: CommitNotice) -> Bool { lhs === rhs }
}
