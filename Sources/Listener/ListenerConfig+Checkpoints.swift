import Config
import Store

extension ListenerConfig {
  /// Who checkpoints the write-ahead log in the listener's hourly maintenance: the listener itself
  /// (TRUNCATE) unless `[replication]` is on, in which case Litestream owns the checkpoints.
  var checkpointPolicy: CheckpointPolicy {
    replication.isEnabled ? .leaveToReplication : .truncate
  }
}
