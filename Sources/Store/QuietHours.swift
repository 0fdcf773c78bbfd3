/// A station's quiet hours (docs/protocol.md "Station settings"): a window of the station's local day in which no
/// push goes out except from its `quietBypass` calls.
///
/// `start` and `end` are minutes of the local day (0–1439), where local time = UTC + `utcOffsetMinutes`
/// (+120 is UTC+2); the window holds `start` and runs up to, not including, `end`, across midnight when `end`
/// is earlier than `start` (22:00–07:00 is `start` 1320, `end` 420). Stored as `station_settings.quiet_start`,
/// `quiet_end` and `quiet_utc_offset`.
public struct QuietHours: Sendable, Equatable {
  /// Minutes in a day.
  public static let minutesPerDay = 1440
  /// The offsets a time zone may have: UTC−12:00 to UTC+14:00, in minutes.
  public static let utcOffsetRange = -720...840

  /// The first minute of the window, local time (0–1439).
  public let start: Int
  /// The minute the window ends (not inside it), local time (0–1439); earlier than `start` across midnight.
  public let end: Int
  /// Local time minus UTC, minutes (−720…840).
  public let utcOffsetMinutes: Int

  /// Validated quiet hours. `field` names them in a refusal (`quietHours`).
  /// - Throws: ``SettingsError`` for `field.start`, `field.end` or `field.utcOffsetMinutes`.
  public init(start: Int, end: Int, utcOffsetMinutes: Int, field: String = "quietHours") throws(SettingsError)
  {
    let minutes = 0...(Self.minutesPerDay - 1)
    guard minutes.contains(start) else {
      throw SettingsError(field: field + ".start", reason: "must be a minute of the day, 0 to 1439")
    }
    guard minutes.contains(end) else {
      throw SettingsError(field: field + ".end", reason: "must be a minute of the day, 0 to 1439")
    }
    guard end != start else {
      throw SettingsError(
        field: field + ".end", reason: "must differ from start (null turns quiet hours off)")
    }
    guard Self.utcOffsetRange.contains(utcOffsetMinutes) else {
      throw SettingsError(
        field: field + ".utcOffsetMinutes",
        reason:
          "must be between \(Self.utcOffsetRange.lowerBound) and \(Self.utcOffsetRange.upperBound) minutes")
    }
    self.start = start
    self.end = end
    self.utcOffsetMinutes = utcOffsetMinutes
  }

  /// The minute of the local day at `now` (epoch ms).
  public func localMinute(at now: Int64) -> Int {
    let utcMinute = Self.floorMod(Self.floorDivide(now, 60_000), Int64(Self.minutesPerDay))
    return Int(Self.floorMod(utcMinute + Int64(utcOffsetMinutes), Int64(Self.minutesPerDay)))
  }

  /// Whether `now` (epoch ms) falls inside the window.
  public func contains(_ now: Int64) -> Bool {
    let minute = localMinute(at: now)
    return start < end ? (start <= minute && minute < end) : (minute >= start || minute < end)
  }

  private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
    let quotient = value / divisor
    return (value % divisor < 0) ? quotient - 1 : quotient
  }

  private static func floorMod(_ value: Int64, _ divisor: Int64) -> Int64 {
    let remainder = value % divisor
    return remainder < 0 ? remainder + divisor : remainder
  }
}
