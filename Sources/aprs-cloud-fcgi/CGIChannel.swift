#if canImport(Glibc)
  import Glibc
#endif

/// Plain CGI (RFC 3875): parameters from the environment, the body on standard input (exactly
/// `CONTENT_LENGTH` bytes), the answer (`Status:`, headers, blank line, body) on standard output.
struct CGIChannel: RequestChannel {
  let environment: [String: String]

  var bodyEndIsMarked: Bool { false }

  func parameter(_ name: String) -> String? { environment[name] }

  mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
    var total = 0
    while total < buffer.count {
      let count = Glibc.read(0, buffer.baseAddress! + total, buffer.count - total)
      if count < 0 {
        if errno == EINTR { continue }
        return total > 0 ? total : -1
      }
      if count == 0 { break }
      total += count
    }
    return total
  }

  mutating func write(_ bytes: [UInt8]) -> Bool { writeAll(1, bytes) }
}
