/// How long a station's messages are kept (docs/protocol.md "Opt-in answers", setting `retention`; stored as
/// `station_settings.retention_max`, NULL for ``ring``).
public enum Retention: Sendable, Equatable {
  /// The newest `ringSize` (`[server] ringSize`, 50 by default): the oldest go first, pulled or not.
  case ring
  /// Kept until every keyed device of the station pulled them (devices registered with a push token and the
  /// station key; with none, until the station's cursor passed them), at most `max` (and at most `[server]
  /// maxUnpulledPerStation`); then the ring rule applies.
  case untilPulled(max: Int)

  /// The largest `max` a setting may name, whatever the operator allows (the store's own bound).
  public static let largestMax = 100_000

  /// Validates `untilPulled`'s `max` against the operator's cap.
  /// - Throws: ``SettingsError`` for `retention.max`.
  public static func untilPulled(validating max: Int64, cap: Int) throws(SettingsError) -> Retention {
    guard max >= 1, max <= Int64(cap) else {
      throw SettingsError(
        field: "retention.max", reason: "must be an integer from 1 to \(cap) (the server's cap)")
    }
    return .untilPulled(max: Int(max))
  }
}
