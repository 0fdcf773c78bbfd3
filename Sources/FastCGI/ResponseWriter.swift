import Platform

/// Where a handler sends its one answer, or parks its request (`park`). The server hands it over
/// with the request and, if the handler returns without doing either, answers `500` with an empty
/// body itself.
public struct ResponseWriter {
  private let output: ([UInt8]) -> Bool
  private let startedAt: Int64
  /// Reserves room for one parked request; nil when the transport cannot park.
  private let reserveParking: (() -> Bool)?
  /// Whether `send` has been called.
  public private(set) var hasAnswered = false
  /// The ticket of a successful `park`: the server holds the request after the handler returns.
  public private(set) var parkedTicket: ParkTicket?

  init(startedAt: Int64, reserveParking: (() -> Bool)? = nil, output: @escaping ([UInt8]) -> Bool) {
    self.startedAt = startedAt
    self.output = output
    self.reserveParking = reserveParking
  }

  /// Whether this transport can hold requests (FastCGI with resumers; never plain CGI).
  public var canPark: Bool { reserveParking != nil }

  /// Writes `response` (only the first call writes; later ones, and a call after `park`, return
  /// `delivered: false`).
  @discardableResult
  public mutating func send(_ response: Response) -> Delivery {
    guard !hasAnswered, parkedTicket == nil else {
      return Delivery(delivered: false, microseconds: monotonicMicroseconds() - startedAt)
    }
    hasAnswered = true
    let delivered = output(response.encoded())
    return Delivery(delivered: delivered, microseconds: monotonicMicroseconds() - startedAt)
  }

  /// Leaves the request with the server until `ticket.key` changes past `ticket.after`, its
  /// deadline passes or the server stops; the worker's `Resumer` gets it back then. On `.parked`
  /// return without answering; otherwise answer (or, `.unsupported`, wait some other way).
  public mutating func park(_ ticket: ParkTicket) -> ParkOutcome {
    guard let reserveParking else { return .unsupported }
    guard !hasAnswered, parkedTicket == nil, reserveParking() else { return .refused }
    parkedTicket = ticket
    return .parked
  }
}

/// What became of an answer, for the handler's log line and metrics.
public struct Delivery: Sendable, Equatable {
  /// False when the client was gone (or the answer was a second one). FastCGI writes the answer
  /// when the handler returns, so there it is false only for a second answer.
  public var delivered: Bool
  /// Microseconds (monotonic clock) from the moment the server had the request's parameters,
  /// before its body was read (for a parked request: from the moment it was resumed), to the
  /// moment the answer was handed over.
  public var microseconds: Int64
}
