// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import TestSupport
import Testing

@testable import Store

/// `Database+Takeover.swift`: the lease of a lost machine's listener cleared after a restore.
@Suite struct DatabaseTakeoverTests {
  @Test func clearingTheLeaseReturnsItOnce() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    #expect(try database.clearListenerLease() == nil, "no lease, nothing to clear")
    #expect(try database.acquireLease(holder: "lost-host:1", now: 1_000, ttlMs: 30_000))
    #expect(
      try database.clearListenerLease()
        == LeaseRecord(holder: "lost-host:1", acquiredAt: 1_000, expiresAt: 31_000))
    #expect(try database.lease() == nil)
    #expect(try database.clearListenerLease() == nil, "a second call finds none")
    #expect(try database.acquireLease(holder: "new-host:1", now: 2_000, ttlMs: 30_000), "free at once")
  }
}
