import TestSupport
import Testing

@testable import Store

/// `writeBatch`: several operations, one transaction: they commit together or not at all.
@Suite struct WriteBatchTests {
  private func upsert(_ address: String) -> StationUpsert {
    StationUpsert(
      address: address, base: address, ssid: 0, platform: .android, pushToken: "token-\(address)",
      ackMessages: true, isRegistration: true)
  }

  @Test func operationsInsideCommitTogether() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    let other = try openStore(dir.database)
    defer { other.close() }
    let decision = try database.writeBatch { () throws(StoreError) -> RateDecision in
      let decision = try database.consumeRate(
        key: "heartbeats:N0CALL", limit: 5, windowMs: 3_600_000, now: 1_000)
      _ = try database.upsertStation(upsert("N0CALL"), now: 1_000)
      try database.setAvatar("N0CALL", icon: "radio", image: nil, hash: "icon:radio", now: 1_000)
      // Not visible to another connection before the batch commits.
      #expect(try other.station("N0CALL") == nil)
      return decision
    }
    #expect(decision == .allowed)
    #expect(try other.station("N0CALL")?.avatarHash == "icon:radio")
    #expect(try other.devices(of: "N0CALL").count == 1)
  }

  @Test func aFailureInsideRollsEverythingBack() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(throws: StoreError.self) {
      try database.writeBatch { () throws(StoreError) in
        _ = try database.consumeRate(key: "heartbeats:N0CALL", limit: 5, windowMs: 3_600_000, now: 1_000)
        _ = try database.upsertStation(upsert("N0CALL"), now: 1_000)
        throw StoreError.invalidArgument("stop here")
      }
    }
    #expect(try database.station("N0CALL") == nil)
    // The rate limit was not consumed either: five more are allowed.
    for _ in 0..<5 {
      #expect(
        try database.consumeRate(key: "heartbeats:N0CALL", limit: 5, windowMs: 3_600_000, now: 2_000)
          == .allowed)
    }
    // And the connection is usable for ordinary transactions afterwards.
    _ = try database.upsertStation(upsert("W5AGO"), now: 3_000)
    #expect(try database.station("W5AGO") != nil)
  }
}
