import APRS
import Testing

/// The bidirectional controls written visibly where text from the air is shown to a person.
@Suite struct BidiControlsTests {
  @Test(
    "each bidirectional control is written as <U+XXXX>",
    arguments: [
      0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C,
    ] as [UInt32])
  func controls(value: UInt32) throws {
    let scalar = try #require(Unicode.Scalar(value))
    #expect(BidiControls.contains(scalar))
    let hex = String(value, radix: 16, uppercase: true)
    let expected = "a<U+" + String(repeating: "0", count: 4 - hex.count) + hex + ">b"
    #expect(BidiControls.escaped("a" + String(Character(scalar)) + "b") == expected)
  }

  @Test("everything else is kept as it is: joiners, right-to-left letters, emoji, the characters around")
  func others() {
    for text in ["", "hello", "שלום", "مرحبا", "family 👨\u{200D}👩\u{200D}👧", "zero\u{200B}width", "<U+202E>"]
    {
      #expect(BidiControls.escaped(text) == text)
    }
    for value: UInt32 in [0x2029, 0x2065, 0x206A, 0x200D, 0x061B, 0x202F] {
      #expect(!BidiControls.contains(Unicode.Scalar(value)!), "\(value)")
    }
  }
}
