import CFastCGI

/// One accepted FastCGI request, through libfcgi's `FCGX_*` streams.
struct FastCGIChannel: RequestChannel {
  let request: UnsafeMutablePointer<FCGX_Request>

  var bodyEndIsMarked: Bool { true }

  func parameter(_ name: String) -> String? {
    guard let value = FCGX_GetParam(name, request.pointee.envp) else { return nil }
    return String(cString: value)
  }

  mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
    // FCGX_GetStr loops until it has `count` bytes or the stream ends.
    let count = FCGX_GetStr(
      base.assumingMemoryBound(to: CChar.self), Int32(clamping: buffer.count), request.pointee.in)
    return Int(count)
  }

  mutating func write(_ bytes: [UInt8]) -> Bool {
    let written = bytes.withUnsafeBytes { buffer in
      FCGX_PutStr(
        buffer.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(buffer.count), request.pointee.out)
    }
    // No flush here: FCGX_Finish_r sends the rest with the end-of-request record in one write.
    return written == bytes.count
  }
}
