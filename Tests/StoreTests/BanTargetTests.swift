import Testing

@testable import Store

@Suite struct BanTargetTests {
  @Test(arguments: [
    ("kj7abc", "call", "KJ7ABC"), ("KJ7ABC-7", "call", "KJ7ABC-7"),
    ("203.0.113.7", "address", "203.0.113.7/32"),
    ("203.0.113.77/24", "address", "203.0.113.0/24"), ("2001:DB8:1:2::99", "address", "2001:db8:1:2::/64"),
    ("2001:db8:1:2::1/48", "address", "2001:db8:1::/48"),
    ("::ffff:10.0.0.1/128", "address", "::ffff:10.0.0.1/128"),
  ])
  func targetsParseToTheirCanonicalForm(text: String, kind: String, shown: String) throws {
    let target = try #require(BanTarget(parsing: text))
    #expect(target.kind.rawValue == kind && target.description == shown)
    #expect(target.value == shown.uppercased())
  }

  @Test(arguments: [
    "", " ", "1.2.3.4/33", "1.2.3.4/0", "::1/129", "1.2.3.4/x", "1.2.3.4/", "1.2.3", "TOOLONGCALL1",
    "KJ7ABC-123",
    "bad call", "1.2.3.4/２４", "-7",
  ])
  func anythingElseIsNoTarget(text: String) {
    #expect(BanTarget(parsing: text) == nil)
  }

  /// What `aprs-cloud ban` refuses to ban as typed, and why; nil for what it bans.
  @Test(
    arguments: [
      ("203.0.113.7", nil), ("203.0.113.0/24", nil), ("10.0.0.0/8", nil), ("2001:db8::/32", nil),
      ("2001:db8:1:2::1", nil), ("KJ7ABC", nil), ("not an address", nil),
      ("0.0.0.0/0", "is too broad"), ("128.0.0.0/1", "is too broad"), ("2000::/3", "is too broad"),
      ("10.0.0.0/4", "is too broad"), ("203.0.113.7/24", "the block is 203.0.113.0/24"),
      ("2001:db8:1:2::1/48", "the block is 2001:db8:1::/48"), ("1.2.3.4/33", "is not a prefix length"),
      ("1.2.3.4/x", "is not a prefix length"),
    ] as [(String, String?)])
  func broadOrMistypedBlocksAreRefusedWithTheReason(text: String, reason: String?) {
    let refusal = BannedBlock.refusal(text)
    if let reason {
      #expect(refusal?.contains(reason) == true, "\(text): \(refusal ?? "nil")")
    } else {
      #expect(refusal == nil, "\(text): \(refusal ?? "")")
    }
  }

  @Test func blocksHoldTheirAddressesOnly() throws {
    let v4 = try #require(BannedBlock(parsing: "203.0.113.0/24"))
    #expect(v4.contains([203, 0, 113, 250]) && !v4.contains([203, 0, 114, 1]))
    #expect(!v4.contains([UInt8](repeating: 0, count: 16)))
    let v6 = try #require(BannedBlock(parsing: "2001:db8:1:2::/64"))
    var inside: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2] + [UInt8](repeating: 0xAB, count: 8)
    #expect(v6.contains(inside))
    inside[7] = 3
    #expect(!v6.contains(inside))
  }
}
