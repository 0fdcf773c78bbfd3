/// HTCommander's authenticated ACK: `ack<msgno>}<TOKEN>` (and `rej<msgno>}<TOKEN>`), where the token is a short
/// standard-base64 string (6 characters as the app makes it; it may hold `+`, `/` and `=`) that authenticates the
/// answer to a message that ended `text}TOKEN{msgno`. Internal: used by ``AddressedPacket/classify(_:)`` after
/// the reply-ack form (``MessageNumber``) did not match, so `ack12}34` stays a reply-ack ACK.
enum AckToken {
  /// The longest token accepted.
  static let maximumLength = 8

  /// Whether `byte` may appear in a token: `[A-Za-z0-9+/=]`.
  @inline(__always)
  static func isTokenByte(_ byte: UInt8) -> Bool {
    ASCII.isAlphanumeric(byte) || byte == 0x2B || byte == 0x2F || byte == 0x3D  // + / =
  }

  /// Offsets of the message number and of the token in `buffer[lower..<upper]` (the text after `ack` or `rej`,
  /// trailing spaces, CR and LF allowed), or nil when those bytes are not `[A-Za-z0-9]{1,5}` + `}` + 1–8 token
  /// bytes.
  static func match(
    _ buffer: UnsafeBufferPointer<UInt8>, _ lower: Int, _ upper: Int
  ) -> (msgno: Range<Int>, token: Range<Int>)? {
    var end = upper
    while end > lower {
      let byte = buffer[end - 1]
      guard byte == ASCII.space || byte == ASCII.cr || byte == ASCII.lf else { break }
      end -= 1
    }
    var index = lower
    while index < end && index - lower <= MessageNumber.maximumLength && ASCII.isAlphanumeric(buffer[index]) {
      index += 1
    }
    let numberEnd = index
    guard numberEnd > lower && numberEnd - lower <= MessageNumber.maximumLength,
      numberEnd < end, buffer[numberEnd] == ASCII.closeBrace
    else { return nil }
    let tokenStart = numberEnd + 1
    guard (1...maximumLength).contains(end - tokenStart) else { return nil }
    for position in tokenStart..<end where !isTokenByte(buffer[position]) { return nil }
    return (lower..<numberEnd, tokenStart..<end)
  }
}
