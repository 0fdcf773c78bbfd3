import Config
import Testing

@testable import Listener
@testable import Store

/// The listener's hourly maintenance truncates the write-ahead log itself, unless Litestream replicates the
/// database: then Litestream owns the checkpoints.
@Suite struct CheckpointPolicyTests {
  @Test func theListenerLeavesCheckpointsToLitestreamWhenReplicationIsOn() throws {
    #expect(try ListenerConfig(ConfigFile()).checkpointPolicy == .truncate)
    let replicated = try ListenerConfig(ConfigFile(parsing: "[replication]\nurl = s3://bucket/aprs\n"))
    #expect(replicated.checkpointPolicy == .leaveToReplication)
  }
}
