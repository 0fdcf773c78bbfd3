/// A provider's `Retry-After` (RFC 9110 §10.2.3): a number of seconds, or an HTTP date to wait until.
///
/// Pure: the header is parsed as it came, and turned into a wait only against a clock the caller passes, so a
/// date answer is judged by the same clock as everything else the sender decides.
public enum RetryAfter: Sendable, Equatable {
  /// `Retry-After: 120`: delta-seconds.
  case seconds(Int64)
  /// `Retry-After: Wed, 21 Oct 2026 07:28:00 GMT`: the time, epoch ms.
  case date(epochMs: Int64)

  /// The longest wait a `Retry-After` is taken to ask for, ms: a day (a push is long expired by then).
  public static let maximumMs: Int64 = 86_400_000

  /// Parses a header value: delta-seconds (`1*DIGIT`), or an HTTP date in any of the three forms a recipient
  /// must accept: IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, the obsolete RFC 850 form
  /// `Sunday, 06-Nov-94 08:49:37 GMT` (a two-digit year before 70 is 20xx) and asctime
  /// `Sun Nov  6 08:49:37 1994`. Nil for anything else (the header is then ignored).
  public init?(header: some StringProtocol) {
    let text = header.trimmingSpaces
    guard !text.isEmpty else { return nil }
    if text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
      // More digits than a day's seconds need are just a very long wait.
      self = .seconds(text.utf8.count > 9 ? Self.maximumMs / 1000 : Int64(text)!)
      return
    }
    guard let epochMs = Self.httpDate(text) else { return nil }
    self = .date(epochMs: epochMs)
  }

  /// How long to wait from `now` (epoch ms), ms: 0 for a date already past, at most ``maximumMs``.
  public func delayMs(now: Int64) -> Int64 {
    switch self {
    case .seconds(let seconds): min(max(0, seconds), Self.maximumMs / 1000) * 1000
    case .date(let epochMs): min(max(0, epochMs - now), Self.maximumMs)
    }
  }

  private static let months = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
  ]

  /// The epoch ms of an HTTP date, nil when `text` is none.
  static func httpDate(_ text: String) -> Int64? {
    let tokens = text.split { $0 == " " || $0 == "," || $0 == "-" }.map(String.init)
    var month: Int?
    var numbers: [(text: String, value: Int)] = []
    var clock: [Int]?
    for token in tokens {
      if let index = months.firstIndex(of: token.lowercased()) {
        guard month == nil else { return nil }
        month = index + 1
      } else if token.contains(":") {
        let parts = token.split(separator: ":", omittingEmptySubsequences: false)
        guard clock == nil, parts.count == 3, parts.allSatisfy({ $0.count == 2 }) else { return nil }
        let values = parts.compactMap { Int($0) }
        guard values.count == 3 else { return nil }
        clock = values
      } else if let value = Int(token), token.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
        numbers.append((token, value))
      } else {
        // The weekday and the zone: `GMT` (or `UTC`, which some servers write) are the only zones allowed.
        let lower = token.lowercased()
        let isZone = lower == "gmt" || lower == "utc" || lower == "z"
        let isWeekday = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].contains { lower.hasPrefix($0) }
        guard isZone || isWeekday else { return nil }
      }
    }
    guard let month, let clock, numbers.count == 2, numbers[0].text.count <= 2 else { return nil }
    let day = numbers[0].value
    var year = numbers[1].value
    switch numbers[1].text.count {
    case 2: year += year < 70 ? 2000 : 1900
    case 4: break
    default: return nil
    }
    guard (1...31).contains(day), clock[0] < 24, clock[1] < 60, clock[2] < 61 else { return nil }
    let days = daysFromCivil(year: year, month: month, day: day)
    return ((days * 24 + Int64(clock[0])) * 60 + Int64(clock[1])) * 60_000 + Int64(clock[2]) * 1000
  }

  /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
  static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
    let y = Int64(month <= 2 ? year - 1 : year)
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let m = Int64(month)
    let dayOfYear = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + Int64(day) - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }
}

extension StringProtocol {
  /// Without leading and trailing spaces and tabs.
  fileprivate var trimmingSpaces: String {
    var scalars = Substring(self)
    while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
    while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
    return String(scalars)
  }
}
