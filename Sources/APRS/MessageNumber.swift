/// The message-number rule (docs/aprs-is.md "Message numbers"): `[A-Za-z0-9]{1,5}` optionally followed by `}[A-Za-z0-9]{0,5}`,
/// trailing spaces, CR and LF allowed. Internal: used for `{msgno` suffixes and for `ack`/`rej` texts.
enum MessageNumber {
  /// The longest message number (and reply-ack).
  static let maximumLength = 5

  /// Offsets of the number and of the reply-ack (nil when there is no `}`) in `buffer[lower..<upper]`, or nil
  /// when those bytes do not follow the rule.
  static func match(
    _ buffer: UnsafeBufferPointer<UInt8>, _ lower: Int, _ upper: Int
  ) -> (msgno: Range<Int>, replyAck: Range<Int>?)? {
    var end = upper
    while end > lower {
      let byte = buffer[end - 1]
      guard byte == ASCII.space || byte == ASCII.cr || byte == ASCII.lf else { break }
      end -= 1
    }
    var index = lower
    while index < end && index - lower <= maximumLength && ASCII.isAlphanumeric(buffer[index]) { index += 1 }
    let numberEnd = index
    guard numberEnd > lower && numberEnd - lower <= maximumLength else { return nil }
    guard numberEnd < end else { return (lower..<numberEnd, nil) }
    guard buffer[numberEnd] == ASCII.closeBrace else { return nil }
    index += 1
    while index < end && index - numberEnd <= maximumLength + 1 && ASCII.isAlphanumeric(buffer[index]) {
      index += 1
    }
    guard index == end && index - numberEnd - 1 <= maximumLength else { return nil }
    return (lower..<numberEnd, (numberEnd + 1)..<end)
  }
}
