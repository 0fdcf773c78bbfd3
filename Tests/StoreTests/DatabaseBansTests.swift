// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import TestSupport
import Testing

@testable import Store

/// `Database+Bans.swift`: bans made, replaced, listed, expired and lifted.
@Suite struct DatabaseBansTests {
  @Test func bansAreMadeReplacedListedExpiredAndLifted() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    defer { database.close() }
    let call = try #require(BanTarget(parsing: "KJ7ABC"))
    let block = try #require(BanTarget(parsing: "2001:db8:1:2::1"))
    try database.ban(Ban(target: call, reason: "flooding", createdAt: 1_000))
    try database.ban(Ban(target: block, createdAt: 2_000, until: 10_000))
    #expect(try database.bans(now: 5_000).map(\.target) == [call, block])
    let active = try database.activeBans(now: 5_000)
    #expect(
      active.bans(sender: "kj7abc-9") && active.bans(sender: "KJ7ABC") && !active.bans(sender: "KJ7ABD"))
    #expect(active.block(holding: [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 9, 9, 9, 9, 9, 9, 9, 9]) != nil)
    // Past its end the address ban is gone, and maintenance prunes it.
    #expect(try database.bans(now: 10_000).map(\.target) == [call])
    #expect(try database.pruneExpired(now: 10_000).bans == 1)
    // Banning again replaces the reason and the end.
    try database.ban(Ban(target: call, reason: "again", createdAt: 11_000, until: 20_000))
    #expect(try database.bans(now: 12_000).map(\.reason) == ["again"])
    #expect(try database.unban(call) && !(try database.unban(call)))
    #expect(try database.activeBans(now: 12_000).isEmpty)
  }

  @Test func aRowEditedIntoNonsenseBansNothing() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    defer { database.close() }
    try database.execute(
      "INSERT INTO bans (kind, value, created_at) VALUES ('address', 'NOT AN ADDRESS', 1), ('call', 'BAD CALL', 1)"
    )
    #expect(try database.bans(now: 5).isEmpty)
  }
}
