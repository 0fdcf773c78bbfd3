/// How a `Database` connection is opened and how the store behaves.
public struct StoreOptions: Sendable, Equatable {
  /// How long a statement waits for another connection's lock before failing with
  /// `StoreError.busy`, in milliseconds.
  public var busyTimeoutMs: Int32 = 5000
  /// How many of its newest messages each station keeps; older ones roll off.
  public var ringSize: Int = 50
  /// Opens the file read-only (no writes, no migrations, the file must exist).
  public var readOnly = false
  /// Shared by the connections of one process, it queues their write transactions on a mutex
  /// instead of SQLite's sleep-and-poll (see `WriterGate`). Nil: each connection on its own.
  public var writerGate: WriterGate?

  /// Options with the given values; every parameter has the production default.
  public init(
    busyTimeoutMs: Int32 = 5000, ringSize: Int = 50, readOnly: Bool = false, writerGate: WriterGate? = nil
  ) {
    self.busyTimeoutMs = busyTimeoutMs
    self.ringSize = ringSize
    self.readOnly = readOnly
    self.writerGate = writerGate
  }
}
