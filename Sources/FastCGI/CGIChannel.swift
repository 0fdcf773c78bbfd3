import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// Plain CGI (RFC 3875): parameters from the environment, the body on standard input (exactly
/// `CONTENT_LENGTH` bytes), the answer (`Status:`, headers, blank line, body) on standard output.
/// The descriptors are 0 and 1 in a CGI process; tests pass pipes.
struct CGIChannel: RequestChannel {
  let environment: [String: String]
  var input: Int32 = 0
  var output: Int32 = 1

  var bodyEndIsMarked: Bool { false }

  func parameters() -> [String: String] { environment }

  mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
    var total = 0
    while total < buffer.count {
      let count = Glibc.read(input, buffer.baseAddress! + total, buffer.count - total)
      if count < 0 {
        if errno == EINTR { continue }
        return total > 0 ? total : -1
      }
      if count == 0 { break }
      total += count
    }
    return total
  }

  func write(_ bytes: [UInt8]) -> Bool { writeAll(output, bytes) }
}
