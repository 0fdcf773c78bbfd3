// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import Testing

@testable import Store

/// `Database+Lease.swift`: the listener lease, one holder at a time.
@Suite struct DatabaseLeaseTests {
  @Test func anEmptyHolderIsRefused() throws {
    let (database, directory) = try temporaryStore()
    defer { directory.remove() }
    #expect(throws: StoreError.invalidArgument("empty lease holder")) {
      try database.acquireLease(holder: "", now: 1, ttlMs: 10)
    }
    #expect(throws: StoreError.invalidArgument("empty lease holder")) {
      try database.takeOverLease(from: "a", holder: "", now: 1, ttlMs: 10)
    }
    #expect(try database.lease() == nil)
  }

  @Test func aRenewalKeepsTheFirstAcquisition() throws {
    let (database, directory) = try temporaryStore()
    defer { directory.remove() }
    #expect(try database.acquireLease(holder: "a", now: 1_000, ttlMs: 10_000))
    #expect(try database.acquireLease(holder: "a", now: 5_000, ttlMs: 10_000))
    #expect(try database.lease() == LeaseRecord(holder: "a", acquiredAt: 1_000, expiresAt: 15_000))
  }

  @Test func anotherHolderWaitsForTheExpiry() throws {
    let (database, directory) = try temporaryStore()
    defer { directory.remove() }
    #expect(try database.acquireLease(holder: "a", now: 1_000, ttlMs: 10_000))
    #expect(try !database.acquireLease(holder: "b", now: 10_999, ttlMs: 10_000))
    #expect(try database.lease()?.holder == "a")
    #expect(try database.acquireLease(holder: "b", now: 11_000, ttlMs: 10_000), "lapsed at its expiry")
    #expect(try database.lease() == LeaseRecord(holder: "b", acquiredAt: 11_000, expiresAt: 21_000))
    // The lapsed holder cannot renew it back.
    #expect(try !database.acquireLease(holder: "a", now: 11_001, ttlMs: 10_000))
  }

  @Test func aTakeoverIsACompareAndSet() throws {
    let (database, directory) = try temporaryStore()
    defer { directory.remove() }
    #expect(try !database.takeOverLease(from: "dead", holder: "b", now: 1, ttlMs: 10), "no lease to take")
    #expect(try database.lease() == nil)
    #expect(try database.acquireLease(holder: "dead", now: 1_000, ttlMs: 60_000))
    #expect(try !database.takeOverLease(from: "other", holder: "b", now: 2_000, ttlMs: 10_000))
    #expect(try database.takeOverLease(from: "dead", holder: "b", now: 2_000, ttlMs: 10_000), "fresh or not")
    #expect(try database.lease() == LeaseRecord(holder: "b", acquiredAt: 2_000, expiresAt: 12_000))
    #expect(try !database.takeOverLease(from: "dead", holder: "c", now: 3_000, ttlMs: 10_000), "taken once")
  }

  @Test func onlyTheHolderReleasesIt() throws {
    let (database, directory) = try temporaryStore()
    defer { directory.remove() }
    try database.releaseLease(holder: "nobody")
    #expect(try database.acquireLease(holder: "a", now: 1_000, ttlMs: 60_000))
    try database.releaseLease(holder: "b")
    #expect(try database.lease()?.holder == "a")
    try database.releaseLease(holder: "a")
    #expect(try database.lease() == nil)
    #expect(try database.acquireLease(holder: "b", now: 1_001, ttlMs: 60_000), "a successor need not wait")
  }
}
