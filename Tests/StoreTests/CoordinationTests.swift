import Foundation
import TestSupport
import Testing

@testable import Store

@Suite struct CoordinationTests {
  @Test func leaseAdmitsOneHolderUntilItExpires() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let first = try openStore(dir.database)
    defer { first.close() }
    let second = try openStore(dir.database)
    defer { second.close() }
    #expect(try first.lease() == nil)
    #expect(try first.acquireLease(holder: "host-a:1", now: 1_000, ttlMs: 30_000))
    #expect(try second.acquireLease(holder: "host-b:2", now: 2_000, ttlMs: 30_000) == false)
    #expect(try second.lease() == LeaseRecord(holder: "host-a:1", acquiredAt: 1_000, expiresAt: 31_000))
    // The holder renews; its first acquisition time stays.
    #expect(try first.acquireLease(holder: "host-a:1", now: 20_000, ttlMs: 30_000))
    #expect(try second.lease() == LeaseRecord(holder: "host-a:1", acquiredAt: 1_000, expiresAt: 50_000))
    #expect(try second.acquireLease(holder: "host-b:2", now: 49_999, ttlMs: 30_000) == false)
    // Expired: the other takes over, and the old holder is now refused.
    #expect(try second.acquireLease(holder: "host-b:2", now: 50_000, ttlMs: 30_000))
    #expect(try first.acquireLease(holder: "host-a:1", now: 50_001, ttlMs: 30_000) == false)
    #expect(try first.lease() == LeaseRecord(holder: "host-b:2", acquiredAt: 50_000, expiresAt: 80_000))
    // Releasing by someone else does nothing; by the holder frees it at once.
    try first.releaseLease(holder: "host-a:1")
    #expect(try first.lease()?.holder == "host-b:2")
    try second.releaseLease(holder: "host-b:2")
    #expect(try first.lease() == nil)
    #expect(try first.acquireLease(holder: "host-a:1", now: 50_002, ttlMs: 30_000))
  }

  /// Taking over a dead holder's lease: only from that holder (compare-and-set), expired or not.
  @Test func takeOverLeaseReplacesOnlyTheNamedHolder() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(
      try database.takeOverLease(from: "host-a:1:x", holder: "host-a:2:y", now: 1_000, ttlMs: 30_000) == false
    )
    #expect(try database.lease() == nil)
    #expect(try database.acquireLease(holder: "host-a:1:x", now: 1_000, ttlMs: 30_000))
    #expect(
      try database.takeOverLease(from: "host-a:9:z", holder: "host-a:2:y", now: 2_000, ttlMs: 30_000) == false
    )
    #expect(try database.lease()?.holder == "host-a:1:x")
    // Not expired, but named: taken at once, with a fresh acquisition time.
    #expect(try database.takeOverLease(from: "host-a:1:x", holder: "host-a:2:y", now: 2_000, ttlMs: 30_000))
    #expect(try database.lease() == LeaseRecord(holder: "host-a:2:y", acquiredAt: 2_000, expiresAt: 32_000))
    #expect(try database.acquireLease(holder: "host-a:1:x", now: 3_000, ttlMs: 30_000) == false)
    #expect(throws: StoreError.self) {
      try database.takeOverLease(from: "host-a:2:y", holder: "", now: 1, ttlMs: 1)
    }
  }

  @Test func rateLimitCountsAWindowAcrossConnections() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let first = try openStore(dir.database)
    defer { first.close() }
    let second = try openStore(dir.database)
    defer { second.close() }
    #expect(try first.consumeRate(key: "ip:1", limit: 3, windowMs: 60_000, now: 1_000) == .allowed)
    #expect(try second.consumeRate(key: "ip:1", limit: 3, windowMs: 60_000, now: 2_000) == .allowed)
    #expect(try first.consumeRate(key: "ip:1", limit: 3, windowMs: 60_000, now: 3_000) == .allowed)
    #expect(
      try second.consumeRate(key: "ip:1", limit: 3, windowMs: 60_000, now: 4_000)
        == .limited(retryAfterMs: 57_000))
    #expect(try first.consumeRate(key: "ip:2", limit: 3, windowMs: 60_000, now: 4_000) == .allowed)
    #expect(
      try first.consumeRate(key: "ip:1", limit: 3, windowMs: 60_000, now: 60_999) == .limited(retryAfterMs: 1)
    )
    #expect(try first.consumeRate(key: "ip:1", limit: 3, windowMs: 60_000, now: 61_000) == .allowed)
    #expect(
      try first.consumeRate(key: "ip:3", limit: 0, windowMs: 60_000, now: 1) == .limited(retryAfterMs: 60_000)
    )
  }

  @Test func busyWriterGivesTypedBusyError() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let holder = try openStore(dir.database)
    defer { holder.close() }
    let waiter = try openStore(dir.database, options: StoreOptions(busyTimeoutMs: 100))
    defer { waiter.close() }
    try holder.execute("BEGIN IMMEDIATE")
    let started = Date()
    #expect(throws: StoreError.busy) { try register(waiter, "N0CALL") }
    #expect(Date().timeIntervalSince(started) >= 0.09, "it waited for the busy timeout first")
    #expect(throws: StoreError.busy) { try waiter.storeMessages([incoming("N0CALL", "x")], now: 1) }
    // Reads are not blocked by a writer in WAL mode.
    #expect(try waiter.sync(station: "N0CALL", since: 0, now: 1).messages.isEmpty)
    #expect(!waiter.isInTransaction, "the failed transaction left nothing open")
    try holder.execute("ROLLBACK")
    #expect(try register(waiter, "N0CALL").address == "N0CALL")
    #expect(StoreError.busy.description.contains("busy"))
  }

  @Test func metaAndIntegrity() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(try database.meta("example.version") == nil)
    try database.setMeta("example.version", "1.0")
    try database.setMeta("example.version", "1.1")
    #expect(try database.meta("example.version") == "1.1")
    #expect(try database.meta("last_message_ts") == "0")
    #expect(throws: StoreError.self) { try database.setMeta("last_message_ts", "99") }
    #expect(try database.integrityCheck() == "ok")
  }

  @Test func pruneRemovesOnlyExpiredBookkeeping() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL")
    _ = try database.storeMessages(
      [incoming("N0CALL", "short", windowMs: 1_000), incoming("N0CALL", "long", windowMs: 100_000)], now: 0)
    _ = try database.ackDue(key: "old", now: 0, minIntervalMs: 30_000)
    _ = try database.ackDue(key: "new", now: 90_000, minIntervalMs: 30_000)
    _ = try database.consumeRate(key: "ip", limit: 1, windowMs: 10_000, now: 0)
    let pruned = try database.pruneExpired(now: 95_000, ackRetentionMs: 60_000)
    #expect(pruned == PruneResult(dedup: 1, acks: 1, rateLimits: 1))
    #expect(try count(database, "dedup") == 1)
    #expect(try count(database, "ack_state") == 1)
    #expect(try count(database, "messages") == 2, "messages are not bookkeeping")
  }
}
