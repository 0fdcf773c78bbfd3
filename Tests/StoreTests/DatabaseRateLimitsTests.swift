// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import Foundation
import TestSupport
import Testing

@testable import Store

/// `Database+RateLimits.swift`: fixed windows per key. `consumeRates`: one request counted under several keys at
/// once (a client's address and its wider networks), all of them or none.
@Suite struct DatabaseRateLimitsTests {
  private func stored(_ database: Database, _ key: String) throws -> Int? {
    try database.scalarText("SELECT count FROM rate_limits WHERE key = '\(key)'").flatMap { Int($0) }
  }

  @Test func aRequestWithinEveryLimitIsCountedUnderEveryKey() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    let counts = [RateCount(key: "a", limit: 5), RateCount(key: "wide", limit: 5)]
    #expect(try database.consumeRates(counts, windowMs: 1_000, now: 10).isEmpty)
    #expect(try database.consumeRates(counts, windowMs: 1_000, now: 20).isEmpty)
    #expect(try stored(database, "a") == 2)
    #expect(try stored(database, "wide") == 2)
    #expect(try database.consumeRates([], windowMs: 1_000, now: 30).isEmpty)
  }

  @Test func aRequestOverOneLimitIsCountedUnderNone() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    // Two narrow keys share one wide key of limit 2.
    for key in ["a", "b"] {
      #expect(
        try database.consumeRates(
          [RateCount(key: key, limit: 10), RateCount(key: "wide", limit: 2)], windowMs: 1_000, now: 100
        ).isEmpty)
    }
    let refused = try database.consumeRates(
      [RateCount(key: "c", limit: 10), RateCount(key: "wide", limit: 2)], windowMs: 1_000, now: 400)
    #expect(refused == [RateRefusal(index: 1, retryAfterMs: 700)])
    #expect(try stored(database, "c") == nil)
    #expect(try stored(database, "wide") == 2)
    // Over both: both listed, in order, each with its own wait.
    #expect(try database.consumeRate(key: "d", limit: 1, windowMs: 1_000, now: 300) == .allowed)
    let both = try database.consumeRates(
      [RateCount(key: "d", limit: 1), RateCount(key: "wide", limit: 2)], windowMs: 1_000, now: 500)
    #expect(both == [RateRefusal(index: 0, retryAfterMs: 800), RateRefusal(index: 1, retryAfterMs: 600)])
    #expect(try stored(database, "d") == 1)
    // A window that ended starts anew; a limit of 0 refuses a fresh window without counting it.
    #expect(
      try database.consumeRates(
        [RateCount(key: "c", limit: 10), RateCount(key: "wide", limit: 2)], windowMs: 1_000, now: 1_100
      ).isEmpty)
    #expect(try stored(database, "wide") == 1)
    #expect(try stored(database, "c") == 1)
    let zero = try database.consumeRates(
      [RateCount(key: "e", limit: 10), RateCount(key: "none", limit: 0)], windowMs: 1_000, now: 1_200)
    #expect(zero == [RateRefusal(index: 1, retryAfterMs: 1_000)])
    #expect(try stored(database, "e") == nil)
    #expect(throws: StoreError.self) { try database.consumeRates([], windowMs: 0, now: 1) }
  }

  @Test func aPeekCountsNothingAndAnswersAsTheNextCountWould() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(try database.peekRate(key: "k", limit: 2, windowMs: 1_000, now: 100) == .allowed)
    #expect(try stored(database, "k") == nil, "a peek writes no window")
    #expect(try database.consumeRate(key: "k", limit: 2, windowMs: 1_000, now: 100) == .allowed)
    #expect(try database.peekRate(key: "k", limit: 2, windowMs: 1_000, now: 200) == .allowed)
    #expect(try database.consumeRate(key: "k", limit: 2, windowMs: 1_000, now: 300) == .allowed)
    #expect(
      try database.peekRate(key: "k", limit: 2, windowMs: 1_000, now: 400) == .limited(retryAfterMs: 700))
    #expect(
      try database.peekRate(key: "k", limit: 2, windowMs: 1_000, now: 400) == .limited(retryAfterMs: 700))
    #expect(try stored(database, "k") == 2, "peeks counted nothing")
    #expect(try database.peekRate(key: "k", limit: 3, windowMs: 1_000, now: 400) == .allowed, "a wider limit")
    #expect(
      try database.peekRate(key: "k", limit: 2, windowMs: 1_000, now: 1_100) == .allowed, "the window ended")
    #expect(
      try database.peekRate(key: "k", limit: 0, windowMs: 1_000, now: 1_100) == .limited(retryAfterMs: 1_000))
    #expect(throws: StoreError.invalidArgument("rate window must be positive")) {
      try database.peekRate(key: "k", limit: 2, windowMs: 0, now: 1)
    }
  }

  @Test func aClockThatWentBackStartsANewWindow() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(try database.consumeRate(key: "k", limit: 1, windowMs: 1_000, now: 5_000) == .allowed)
    #expect(
      try database.consumeRate(key: "k", limit: 1, windowMs: 1_000, now: 5_500) == .limited(retryAfterMs: 500)
    )
    // Before the window's start: not a window that could refuse (the peek and the count agree).
    #expect(try database.peekRate(key: "k", limit: 1, windowMs: 1_000, now: 4_000) == .allowed)
    #expect(try database.consumeRate(key: "k", limit: 1, windowMs: 1_000, now: 4_000) == .allowed)
    #expect(
      try database.consumeRate(key: "k", limit: 1, windowMs: 1_000, now: 4_100) == .limited(retryAfterMs: 900)
    )
  }
}
