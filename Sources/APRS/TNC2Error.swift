/// Why a line from APRS-IS is not a TNC2 packet (nor a `#` comment).
public enum TNC2Error: Error, Equatable, Sendable, CustomStringConvertible {
  /// Nothing but a line ending.
  case empty
  /// Longer than APRS-IS allows: `length` bytes without the line ending, more than 510 (512 with CR LF).
  case tooLong(length: Int)
  /// No `>` before the first `:`, so there is no source call.
  case noSource
  /// No `:`, so there is no information field.
  case noInformation
  /// The source call is not 1–9 letters, digits or `-` (APRS-IS's own lenient check).
  case invalidSource
  /// Nothing between `>` and the first `,` or `:`.
  case noDestination
  /// An empty element in the digipeater path (`A>B,,C:…` or a trailing `,`).
  case invalidPath

  /// A short human-readable reason, e.g. "no ':' before the information field".
  public var description: String {
    switch self {
    case .empty: "empty line"
    case .tooLong(let length):
      "line too long: \(length) bytes, at most \(TNC2Packet.maximumContentLength) plus CR LF"
    case .noSource: "no '>' after the source call"
    case .noInformation: "no ':' before the information field"
    case .invalidSource: "source call must be 1-9 letters, digits or '-'"
    case .noDestination: "no destination call after '>'"
    case .invalidPath: "empty element in the path"
    }
  }
}
