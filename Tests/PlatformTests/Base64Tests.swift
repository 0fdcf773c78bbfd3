import Platform
import Testing

/// RFC 4648 §10 test vectors both ways, and the strict decoder's refusals.
@Suite struct Base64Tests {
  /// RFC 4648 §10: `BASE64("foo") = "Zm9v"` and the rest.
  static let vectors: [(text: String, encoded: String)] = [
    ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
    ("foobar", "Zm9vYmFy"),
  ]

  @Test(arguments: vectors) func standardEncodesAndDecodesRFCVectors(text: String, encoded: String) {
    #expect(Base64.encode(Array(text.utf8)) == encoded)
    #expect(Base64.decode(encoded) == Array(text.utf8))
  }

  @Test(arguments: vectors) func urlEncodesWithoutPaddingAndDecodesRFCVectors(text: String, encoded: String) {
    let unpadded = String(encoded.prefix { $0 != "=" })
    #expect(Base64URL.encode(Array(text.utf8)) == unpadded)
    #expect(Base64URL.decode(unpadded) == Array(text.utf8))
    #expect(Base64URL.decode(encoded) == Array(text.utf8))  // padding tolerated
  }

  @Test func standardPaddingIsOptional() {
    #expect(Base64.decode("Zg") == Array("f".utf8))
    #expect(Base64.decode("Zm8") == Array("fo".utf8))
  }

  @Test func alphabetsDifferInTheLastTwoCharacters() {
    let bytes: [UInt8] = [0xFB, 0xFF, 0xBF]
    #expect(Base64.encode(bytes) == "+/+/")
    #expect(Base64URL.encode(bytes) == "-_-_")
    #expect(Base64.decode("+/+/") == bytes)
    #expect(Base64URL.decode("-_-_") == bytes)
    #expect(Base64.decode("-_-_") == nil)
    #expect(Base64URL.decode("+/+/") == nil)
  }

  @Test func everyByteValueRoundTrips() {
    let bytes = (0...255).map { UInt8($0) }
    for length in [0, 1, 2, 3, 4, 5, 254, 255, 256] {
      let slice = Array(bytes.prefix(length))
      #expect(Base64.decode(Base64.encode(slice)) == slice)
      #expect(Base64URL.decode(Base64URL.encode(slice)) == slice)
    }
  }

  @Test(arguments: [
    "Zm9v!", "Zm 9v", "Zm9v\n", "Zm9vYg==\r\n", "Zm\u{e9}v",  // outside the alphabet
    "Zm9vY", "Z", "Z===", "Zg===", "Zm9=v", "=Zm9", "Zg=", "Zm8==", "====",  // bad length or padding
    "Zh==", "Zm9=", "Zm9vYh", "Zm9vYmF",  // non-zero leftover bits
  ])
  func strictDecodingRefuses(text: String) {
    #expect(Base64.decode(text) == nil)
    #expect(Base64URL.decode(text) == nil)
  }
}
