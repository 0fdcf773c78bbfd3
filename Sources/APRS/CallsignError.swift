/// Why a callsign, SSID or station address was refused.
///
/// Each case is one way the input can be wrong; ``description`` is a sentence fit to show an API client
/// (it ends up in `{"error": …}`), so it names the field and the rule.
public enum CallsignError: Error, Equatable, Sendable, CustomStringConvertible {
  /// Nothing left after trimming whitespace (or nothing before the `-`).
  case empty
  /// The base callsign has more than 9 characters.
  case tooLong
  /// The base callsign holds something other than `A-Z` and `0-9` (after upper-casing).
  case invalidCharacter
  /// The SSID is not an integer from 0 to 15 (or is written with a leading zero, like `-07`).
  case badSSID
  /// The callsign carries `-N` and a different, non-zero `ssid` was given too.
  case ssidConflict
  /// `CALL-SSID` together is longer than 9 characters.
  case addressTooLong

  /// A human-readable reason, e.g. "callsign must be 1-9 letters or digits".
  public var description: String {
    switch self {
    case .empty: "callsign is empty; it must be 1-9 letters or digits"
    case .tooLong: "callsign is too long; it must be 1-9 letters or digits"
    case .invalidCharacter: "callsign must be 1-9 letters or digits (A-Z, 0-9)"
    case .badSSID: "ssid must be an integer from 0 to 15"
    case .ssidConflict: "callsign carries an SSID that differs from ssid"
    case .addressTooLong: "station address (callsign-ssid) must be at most 9 characters"
    }
  }
}
