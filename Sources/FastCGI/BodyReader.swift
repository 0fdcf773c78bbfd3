/// Reads a request's body after checking `CONTENT_LENGTH` against the limit, so a body over the
/// limit is refused before any of it is read into memory.
struct BodyReader {
  /// The largest body accepted, in bytes.
  let limit: Int

  /// At most this much of a refused body is read and thrown away, so the web server can finish
  /// sending it and read the answer instead of failing on a closed socket.
  static let drainLimit = 1 << 20

  /// The body, or why there is none.
  func read<Channel: RequestChannel>(_ channel: inout Channel, contentLength: String?)
    -> Result<[UInt8], RequestBodyError>
  {
    switch BodyLength.classify(contentLength, limit: limit) {
    case .tooLarge(let length):
      drain(&channel, upTo: channel.bodyEndIsMarked ? Self.drainLimit : min(length, Self.drainLimit))
      return .failure(.tooLarge(limit: limit))
    case .invalid:
      if channel.bodyEndIsMarked { drain(&channel, upTo: Self.drainLimit) }
      return .failure(.invalidLength)
    case .absent:
      guard channel.bodyEndIsMarked else { return .success([]) }
      var probe: UInt8 = 0
      let count = withUnsafeMutableBytes(of: &probe) { channel.read(into: $0) }
      guard count <= 0 else {
        drain(&channel, upTo: Self.drainLimit)
        return .failure(.lengthRequired)
      }
      return .success([])
    case .exact(let length):
      var body = [UInt8](repeating: 0, count: length)
      var received = 0
      while received < length {
        let count = body.withUnsafeMutableBytes { buffer in
          channel.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[received...]))
        }
        if count <= 0 { break }
        received += count
      }
      guard received == length else { return .failure(.endedEarly(received: received, expected: length)) }
      return .success(body)
    }
  }

  private func drain<Channel: RequestChannel>(_ channel: inout Channel, upTo limit: Int) {
    var scratch = [UInt8](repeating: 0, count: 16_384)
    var remaining = limit
    while remaining > 0 {
      let count = scratch.withUnsafeMutableBytes { buffer in
        channel.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(buffer.count, remaining)]))
      }
      if count <= 0 { return }
      remaining -= count
    }
  }
}
