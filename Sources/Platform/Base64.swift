/// Standard base64 (RFC 4648 §4): `A–Z a–z 0–9 + /`, padded with `=` to a multiple of 4 characters.
/// Avatar images in the /v1 API.
public enum Base64 {
  /// The padded encoding of `bytes`.
  public static func encode(_ bytes: some Collection<UInt8>) -> String {
    Base64Alphabet.standard.encode(bytes, padded: true)
  }

  /// The decoded bytes, or nil when `text` is not base64. Strict: only the alphabet, `=` padding only at the end
  /// (optional, but when present it must complete the last group of 4), no whitespace, and the bits left over
  /// in the last character must be zero (as any encoder writes them), so one text has one meaning.
  public static func decode(_ text: String) -> [UInt8]? {
    Base64Alphabet.standard.decode(text)
  }
}

/// base64url (RFC 4648 §5): `-` and `_` instead of `+` and `/`, without padding (RFC 7515 §2), as JWTs use it.
public enum Base64URL {
  /// The unpadded encoding of `bytes`.
  public static func encode(_ bytes: some Collection<UInt8>) -> String {
    Base64Alphabet.url.encode(bytes, padded: false)
  }

  /// The decoded bytes, or nil when `text` is not base64url. Strict as ``Base64/decode(_:)`` (padding tolerated).
  public static func decode(_ text: String) -> [UInt8]? {
    Base64Alphabet.url.decode(text)
  }
}

/// One of the two 64-character alphabets, and the coding both share.
private struct Base64Alphabet {
  static let standard = Base64Alphabet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
  static let url = Base64Alphabet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

  /// The character of each 6-bit value.
  let symbols: [UInt8]
  /// The 6-bit value of each byte, 0xFF for bytes outside the alphabet.
  let values: [UInt8]

  init(_ alphabet: String) {
    symbols = Array(alphabet.utf8)
    var values = [UInt8](repeating: 0xFF, count: 256)
    for (index, byte) in symbols.enumerated() { values[Int(byte)] = UInt8(index) }
    self.values = values
  }

  func encode(_ bytes: some Collection<UInt8>, padded: Bool) -> String {
    let input = Array(bytes)
    var output: [UInt8] = []
    output.reserveCapacity((input.count + 2) / 3 * 4)
    var index = 0
    while index < input.count {
      let count = min(3, input.count - index)
      var group: UInt32 = 0
      for offset in 0..<3 {
        group = group << 8 | UInt32(offset < count ? input[index + offset] : 0)
      }
      // 3 bytes make 4 characters, 2 make 3, 1 makes 2.
      for position in 0...count {
        output.append(symbols[Int(group >> UInt32(18 - 6 * position) & 63)])
      }
      if padded {
        for _ in count..<3 { output.append(UInt8(ascii: "=")) }
      }
      index += count
    }
    return String(decoding: output, as: UTF8.self)
  }

  func decode(_ text: String) -> [UInt8]? {
    var input = Array(text.utf8)
    var padding = 0
    while input.last == UInt8(ascii: "=") && padding < 2 {
      input.removeLast()
      padding += 1
    }
    if padding > 0 && (input.count + padding) % 4 != 0 { return nil }
    if input.count % 4 == 1 { return nil }
    var output: [UInt8] = []
    output.reserveCapacity(input.count * 3 / 4)
    var accumulator: UInt32 = 0
    var bits = 0
    for byte in input {
      let value = values[Int(byte)]
      if value == 0xFF { return nil }
      accumulator = accumulator << 6 | UInt32(value)
      bits += 6
      if bits >= 8 {
        bits -= 8
        output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
      }
    }
    // Leftover bits must be zero, or the text was not produced by an encoder.
    if bits > 0 && accumulator & ((1 << UInt32(bits)) - 1) != 0 { return nil }
    return output
  }
}
