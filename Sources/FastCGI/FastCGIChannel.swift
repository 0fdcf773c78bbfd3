import CFastCGI

#if canImport(Glibc)
  import Glibc
#endif

/// One accepted FastCGI request, through libfcgi's `FCGX_*` streams.
struct FastCGIChannel: RequestChannel {
  let request: UnsafeMutablePointer<FCGX_Request>

  var bodyEndIsMarked: Bool { true }

  /// The `NAME=VALUE` strings libfcgi collected from the FCGI_PARAMS records, split at the first
  /// `=` (where `FCGX_GetParam` splits them too).
  func parameters() -> [String: String] {
    var parameters: [String: String] = [:]
    guard var entry = request.pointee.envp else { return parameters }
    while let pair = entry.pointee {
      if let equals = strchr(pair, Int32(UInt8(ascii: "="))) {
        let name = pair.withMemoryRebound(to: UInt8.self, capacity: equals - pair) {
          String(decoding: UnsafeBufferPointer(start: $0, count: equals - pair), as: UTF8.self)
        }
        if parameters[name] == nil { parameters[name] = String(cString: equals + 1) }
      }
      entry += 1
    }
    return parameters
  }

  mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
    // FCGX_GetStr loops until it has `count` bytes or the stream ends.
    let count = FCGX_GetStr(
      base.assumingMemoryBound(to: CChar.self), Int32(clamping: buffer.count), request.pointee.in)
    return Int(count)
  }

  func write(_ bytes: [UInt8]) -> Bool {
    guard !bytes.isEmpty else { return true }
    let written = bytes.withUnsafeBytes { buffer in
      FCGX_PutStr(
        buffer.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(buffer.count), request.pointee.out)
    }
    // No flush here: FCGX_Finish_r sends the rest with the end-of-request record in one write.
    return written == bytes.count
  }
}
