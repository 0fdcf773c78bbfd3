/// Standard base64 (RFC 4648 §4) decoding for avatar images: strict alphabet, `=` padding optional.
enum Base64 {
  private static let table: [UInt8] = {
    var table = [UInt8](repeating: 0xFF, count: 256)
    for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated()
    {
      table[Int(byte)] = UInt8(index)
    }
    return table
  }()

  /// The decoded bytes, or nil when `text` is not valid base64.
  static func decode(_ text: String) -> [UInt8]? {
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
      let value = table[Int(byte)]
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
