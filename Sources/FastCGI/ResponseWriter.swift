import Platform

/// Where a handler sends its one answer. The server hands it over with the request and, if the
/// handler returns without sending, answers `500` with an empty body itself.
public struct ResponseWriter {
  private let output: ([UInt8]) -> Bool
  private let startedAt: Int64
  /// Whether `send` has been called.
  public private(set) var hasAnswered = false

  init(startedAt: Int64, output: @escaping ([UInt8]) -> Bool) {
    self.startedAt = startedAt
    self.output = output
  }

  /// Writes `response` (only the first call writes; later ones return `delivered: false`).
  @discardableResult
  public mutating func send(_ response: Response) -> Delivery {
    guard !hasAnswered else {
      return Delivery(delivered: false, microseconds: monotonicMicroseconds() - startedAt)
    }
    hasAnswered = true
    let delivered = output(response.encoded())
    return Delivery(delivered: delivered, microseconds: monotonicMicroseconds() - startedAt)
  }
}

/// What became of an answer, for the handler's log line and metrics.
public struct Delivery: Sendable, Equatable {
  /// False when the client was gone (or the answer was a second one).
  public var delivered: Bool
  /// Microseconds (monotonic clock) from the moment the server had the request's parameters,
  /// before its body was read, to the moment the answer was written.
  public var microseconds: Int64
}
