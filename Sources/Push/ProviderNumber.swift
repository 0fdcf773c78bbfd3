import JSON

/// How every number read from a provider's answer becomes an integer: failable and clamped, never a trap.
///
/// A provider (or a proxy, or an attacker on a broken TLS setup) may answer `1e300`, `-5`,
/// `123456789012345678901234567890`, `1e400` or `"soon"` where an integer belongs; `Int64(Double)` traps on
/// the first and the last two, and arithmetic on a huge value overflows. Here a number that is not an integer
/// literal is rounded toward zero, anything outside `range` (an infinity too: `1e400` reads as one) is clamped
/// to its nearest end, and a value that is not a number (a string, `null`, an object) is nil.
enum ProviderNumber {
  /// The integer `value` holds, clamped to `range`; nil when it is not a JSON number.
  static func int64(_ value: JSONValue?, clampedTo range: ClosedRange<Int64>) -> Int64? {
    guard case .number(let number)? = value else { return nil }
    if let exact = number.int64 { return min(max(exact, range.lowerBound), range.upperBound) }
    guard let double = number.double else { return nil }
    return clamp(double, to: range)
  }

  /// `value` rounded toward zero and clamped to `range` (an infinity to its end); nil for NaN.
  static func clamp(_ value: Double, to range: ClosedRange<Int64>) -> Int64? {
    guard !value.isNaN else { return nil }
    // Double(Int64.max) rounds up to 2^63, so compare before converting: inside the bounds the conversion is exact
    // enough and cannot trap.
    if value <= Double(range.lowerBound) { return range.lowerBound }
    if value >= Double(range.upperBound) { return range.upperBound }
    return min(max(Int64(value), range.lowerBound), range.upperBound)
  }

  /// `lhs + rhs`, stopping at `Int64.max` / `Int64.min` instead of trapping.
  static func adding(_ lhs: Int64, _ rhs: Int64) -> Int64 {
    let (sum, overflow) = lhs.addingReportingOverflow(rhs)
    return overflow ? (rhs > 0 ? .max : .min) : sum
  }

  /// `lhs * rhs`, stopping at `Int64.max` / `Int64.min` instead of trapping.
  static func multiplying(_ lhs: Int64, _ rhs: Int64) -> Int64 {
    let (product, overflow) = lhs.multipliedReportingOverflow(by: rhs)
    return overflow ? ((lhs < 0) != (rhs < 0) ? .min : .max) : product
  }
}
