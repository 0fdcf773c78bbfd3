/// One request's transport: where its parameters and body come from and where its answer goes.
/// Plain CGI's is `CGIChannel`, which `Exchange` serves (FastCGI's records are read by the server
/// itself: `RequestParser`).
protocol RequestChannel {
  /// Every CGI/FastCGI parameter (`REQUEST_METHOD`, `CONTENT_LENGTH`, …). A name sent twice keeps
  /// its first value, as libfcgi's `FCGX_GetParam` does.
  func parameters() -> [String: String]
  /// Reads up to `buffer.count` body bytes; fewer only at the end of the body or on an error.
  mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> Int
  /// Writes the whole response; false when the client is gone.
  func write(_ bytes: [UInt8]) -> Bool
  /// Whether the transport marks the end of the body (FastCGI's empty stdin record), so reading
  /// without a `CONTENT_LENGTH` is safe. CGI only promises `CONTENT_LENGTH` bytes.
  var bodyEndIsMarked: Bool { get }
}
