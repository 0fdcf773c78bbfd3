import Testing

@testable import APRS

@Suite struct StationAddressTests {
  @Test(
    "parsing valid addresses",
    arguments: [
      ("N0CALL", "N0CALL", 0, "N0CALL"), ("n0call-7", "N0CALL", 7, "N0CALL-7"),
      ("  kj7abc-15 \n", "KJ7ABC", 15, "KJ7ABC-15"), ("N0CALL-0", "N0CALL", 0, "N0CALL"),
      ("A", "A", 0, "A"), ("ABCDEFGHI", "ABCDEFGHI", 0, "ABCDEFGHI"),
      ("ABCDEFG-9", "ABCDEFG", 9, "ABCDEFG-9"),
      ("ABCDEF-10", "ABCDEF", 10, "ABCDEF-10"),
    ])
  func parsesValid(text: String, base: String, ssid: Int, description: String) throws {
    let address = try StationAddress(parsing: text)
    #expect(address.base == base)
    #expect(address.ssid == ssid)
    #expect(address.description == description)
    #expect("\(address)" == description)
  }

  @Test(
    "parsing invalid addresses, each with its own error",
    arguments: [
      ("", CallsignError.empty), ("   ", .empty), ("-7", .empty), ("ABCDEFGHIJ", .tooLong),
      ("N0 CALL", .invalidCharacter), ("N0CALL*", .invalidCharacter), ("N0CÄLL", .invalidCharacter),
      ("N0_CALL", .invalidCharacter), ("N0CALL-", .badSSID), ("N0CALL-16", .badSSID), ("N0CALL-07", .badSSID),
      ("N0CALL-A", .badSSID), ("N0CALL-1-2", .badSSID), ("N0CALL-100", .badSSID),
      ("ABCDEFGH-10", .addressTooLong), ("ABCDEFGH-1", .addressTooLong),
    ])
  func rejectsInvalid(text: String, error: CallsignError) {
    #expect(throws: error) { try StationAddress(parsing: text) }
  }

  @Test("base and ssid as the API sends them")
  func baseAndSSID() throws {
    let plain = try StationAddress(base: "kj7abc", ssid: 7)
    #expect(plain.description == "KJ7ABC-7")
    let carried = try StationAddress(base: "N0CALL-7", ssid: 0)
    #expect(carried.base == "N0CALL" && carried.ssid == 7)
    let same = try StationAddress(base: "N0CALL-7", ssid: 7)
    #expect(same == carried)
    #expect(try StationAddress(base: " N0CALL ", ssid: 0).description == "N0CALL")
  }

  @Test(
    "base and ssid errors",
    arguments: [
      ("N0CALL", -1, CallsignError.badSSID), ("N0CALL", 16, .badSSID), ("N0CALL-7", 5, .ssidConflict),
      ("N0CALL-0", 5, .ssidConflict), ("", 3, .empty), ("ABCDEFGHIJ", 0, .tooLong),
      ("ABCDEFGH", 10, .addressTooLong), ("N0CALL!", 1, .invalidCharacter),
    ])
  func baseAndSSIDErrors(base: String, ssid: Int, error: CallsignError) {
    #expect(throws: error) { try StationAddress(base: base, ssid: ssid) }
  }

  @Test("error descriptions are distinct, human sentences")
  func descriptions() {
    let all: [CallsignError] = [
      .empty, .tooLong, .invalidCharacter, .badSSID, .ssidConflict, .addressTooLong,
    ]
    #expect(Set(all.map(\.description)).count == all.count)
    #expect(CallsignError.invalidCharacter.description == "callsign must be 1-9 letters or digits (A-Z, 0-9)")
    #expect(CallsignError.badSSID.description.contains("0 to 15"))
  }

  @Test("hashable: equal addresses collapse")
  func hashable() throws {
    let set: Set = [try StationAddress(parsing: "n0call-7"), try StationAddress(base: "N0CALL", ssid: 7)]
    #expect(set.count == 1)
  }
}
