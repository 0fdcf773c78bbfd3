/// How long the server holds the ACK of a message to a station whose `ackPolicy` is `fallback`, waiting to hear the
/// station's own radio answer it (docs/design.md "Hearing the station's own radio").
///
/// Whole seconds, 1…60, default 20. Why at most 60: a sender that heard no ACK retries, typically after 30–60 s and
/// then less often (radios such as the Yaesu FTM series retry once a minute); the wait should end before the
/// sender's second retry, so that a station whose radio is silent gets its ACK from the server while the sender is
/// still trying, and the sender stops after at most one extra copy. Why at least 1: a wait of 0 is the policy
/// `server` (ACK at once) and should be asked for as that.
///
/// ``init(seconds:)`` is the setting's validation (out of range is refused: nil); ``init(clamping:)`` is for a value
/// that was stored or configured by an older rule and must be used anyway (it never throws away a wait).
public struct FallbackWait: Hashable, Sendable, Comparable, CustomStringConvertible {
  /// The wait in seconds, 1…60.
  public let seconds: Int

  /// The shortest wait, in seconds.
  public static let minimumSeconds = 1
  /// The longest wait, in seconds.
  public static let maximumSeconds = 60
  /// The wait a station gets when it does not name one: 20 s.
  public static let `default` = FallbackWait(checked: 20)

  /// The wait of `seconds`, or nil when `seconds` is outside 1…60 (the setting's answer is then a 400).
  public init?(seconds: Int) {
    guard (Self.minimumSeconds...Self.maximumSeconds).contains(seconds) else { return nil }
    self.seconds = seconds
  }

  /// The wait of `seconds` moved into 1…60: 0 and negative values give 1 s, values above 60 give 60 s.
  public init(clamping seconds: Int) {
    self.seconds = min(Self.maximumSeconds, max(Self.minimumSeconds, seconds))
  }

  private init(checked seconds: Int) { self.seconds = seconds }

  /// The wait in milliseconds.
  public var milliseconds: Int64 { Int64(seconds) * 1000 }

  /// `20s`.
  public var description: String { "\(seconds)s" }

  public static func < (left: FallbackWait, right: FallbackWait) -> Bool { left.seconds < right.seconds }
}
