/// How a `Database` connection is opened and how the store behaves.
public struct StoreOptions: Sendable, Equatable {
  /// How long a statement waits for another connection's lock before failing with
  /// `StoreError.busy`, in milliseconds.
  public var busyTimeoutMs: Int32 = 5000
  /// How many of its newest messages each station keeps; older ones roll off.
  public var ringSize: Int = 50
  /// The most messages a station with `retention` `untilPulled` keeps unpulled (`[server]
  /// maxUnpulledPerStation`): its own `max` is cut to this.
  public var maxUnpulledPerStation: Int = 500
  /// Opens the file read-only (no writes, no migrations, the file must exist).
  public var readOnly = false
  /// Shared by the connections of one process, it queues their write transactions on a mutex
  /// instead of SQLite's sleep-and-poll (see `WriterGate`). Nil: each connection on its own.
  public var writerGate: WriterGate?
  /// When a commit reaches the disk (`PRAGMA synchronous` of this connection). `.normal` (the default) may lose
  /// the last commits to a power cut or kernel crash (never to a process crash); `.full` syncs the write-ahead
  /// log at every commit, for a writer that promises something once it committed (the listener's ACKs,
  /// docs/design.md "Durability").
  public var synchronous: SynchronousMode = .normal
  /// Told after each write transaction of this connection commits (the outermost one of a batch; never after a
  /// rollback): the listener and the responder wake held long polls with it (``CommitNotice``). Nil: nobody.
  public var commitNotice: CommitNotice?

  /// Options with the given values; every parameter has the production default.
  public init(
    busyTimeoutMs: Int32 = 5000, ringSize: Int = 50, readOnly: Bool = false, writerGate: WriterGate? = nil,
    synchronous: SynchronousMode = .normal, maxUnpulledPerStation: Int = 500
  ) {
    self.maxUnpulledPerStation = maxUnpulledPerStation
    self.busyTimeoutMs = busyTimeoutMs
    self.ringSize = ringSize
    self.readOnly = readOnly
    self.writerGate = writerGate
    self.synchronous = synchronous
  }
}

/// `PRAGMA synchronous` in WAL mode (sqlite.org/pragma.html#pragma_synchronous).
public enum SynchronousMode: String, Sendable, Equatable {
  /// The log is synced only at checkpoints: a commit survives a process crash, not a power cut.
  case normal = "NORMAL"
  /// The log is synced (`fdatasync`) before each commit returns: a commit survives a power cut.
  case full = "FULL"

  /// The number `PRAGMA synchronous` reports for it (1, 2).
  public var level: Int { self == .normal ? 1 : 2 }
}
