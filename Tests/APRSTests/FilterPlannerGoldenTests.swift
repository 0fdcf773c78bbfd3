import Testing

@testable import APRS

/// Today's plans, byte for byte: the lines the planner gives stations that do not follow their own transmissions
/// (and the watched calls, collected SSIDs and subscriptions' extra entries), recorded before the planner took its
/// ``FilterPlanner/OwnTransmissions`` input. A change to any of these bytes changes what every listener sends
/// APRS-IS, so it must be deliberate: these tests fail on it.
@Suite struct FilterPlannerGoldenTests {
  /// FNV-1a (64 bit) of the bytes: a stable fingerprint of a long line.
  static func fingerprint(_ bytes: [UInt8]) -> UInt64 {
    bytes.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
  }

  static func stations(_ texts: [String]) -> [StationAddress] {
    texts.map { try! StationAddress(parsing: $0) }
  }

  @Test("a few stations, exact: g/ with the -0 aliases, b/ with tracking and extra entries")
  func smallPlans() {
    let few = Self.stations(["N0CALL", "N0CALL-7", "OH7LZB", "W1AW-10", "KJ7ABC-15"])
    #expect(
      FilterPlanner(addressees: few).plan().spec
        == "g/KJ7ABC-15/N0CALL/N0CALL-0/N0CALL-7/OH7LZB/OH7LZB-0/W1AW-10")
    #expect(
      FilterPlanner(addressees: few, senders: few).plan().spec
        == "g/KJ7ABC-15/N0CALL/N0CALL-0/N0CALL-7/OH7LZB/OH7LZB-0/W1AW-10"
        + " b/KJ7ABC-15/N0CALL/N0CALL-0/N0CALL-7/OH7LZB/OH7LZB-0/W1AW-10")
    let extras = FilterPlanner(addressees: few).plan(
      extraAddressees: ["N0CALL*", "BLN*", "NWS*"], extraSenders: ["WATCH-1", "DL1ABC"])
    #expect(
      extras.spec
        == "g/BLN*/KJ7ABC-15/N0CALL/N0CALL*/N0CALL-0/N0CALL-7/NWS*/OH7LZB/OH7LZB-0/W1AW-10 b/DL1ABC/WATCH-1")
    #expect(
      FilterPlanner(addressees: [StationAddress](), senders: Self.stations(["N0CALL-7"])).plan().spec
        == "b/N0CALL-7")
  }

  @Test("many stations, prefixes: the exact bytes of today's narrowing", arguments: [80, 2000, 100_000])
  func largePlans(count: Int) {
    var generator = CallGenerator(seed: 0x601D &+ UInt64(count))
    let stations = generator.stations(count)
    let plain = FilterPlanner(addressees: stations).plan(
      maximumLineLength: FilterPlanner.answerableLineLength)
    let tracked = FilterPlanner(addressees: stations, senders: stations).plan(
      maximumLineLength: FilterPlanner.answerableLineLength, extraAddressees: ["BLN*"],
      extraSenders: ["WATCH-1"])
    // Recorded from the planner as it was before own transmissions (fingerprint and length of each line).
    let recorded: [Int: (UInt64, Int, UInt64, Int)] = [
      80: (11_886_675_050_299_033_162, 504, 1_382_036_100_454_481_275, 504),
      2000: (8_062_580_597_637_037_641, 504, 9_330_104_296_235_290_423, 504),
      100_000: (261_565_277_931_719_814, 504, 16_100_525_429_259_546_902, 504),
    ]
    let expected = recorded[count]
    #expect(expected?.0 == Self.fingerprint(plain.line) && expected?.1 == plain.byteCount)
    #expect(expected?.2 == Self.fingerprint(tracked.line) && expected?.3 == tracked.byteCount)
  }
}
