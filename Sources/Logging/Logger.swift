import Platform

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One line per event on standard error, in `key=value` form:
///
/// ```
/// ts=2026-11-29T14:00:00.123Z level=info msg="request" method=POST path=/v1/sync status=200 us=153
/// ```
///
/// `msg` is always quoted; other values are quoted only when they are empty or contain a space,
/// a quote, `=`, a backslash or a control character (escaped as `\"`, `\\`, `\n`, `\xNN`), so a
/// hostile value can never start a new line. Values are cut at `maxValueLength` characters.
/// Each line is written with a single `write(2)`, so lines from several threads never interleave.
/// Callers must not pass passcodes or push tokens in full.
public struct Logger: Sendable {
  /// Events below this level are dropped.
  public var level: LogLevel
  /// The file descriptor lines are written to (2, standard error, unless a test says otherwise).
  public var fileDescriptor: Int32
  /// Epoch milliseconds for the `ts` field.
  public var clock: EpochClock

  /// The longest value written, in characters; longer ones end in `…`.
  public static let maxValueLength = 300

  public init(
    level: LogLevel = .info, fileDescriptor: Int32 = 2,
    clock: @escaping EpochClock = epochMilliseconds
  ) {
    self.level = level
    self.fileDescriptor = fileDescriptor
    self.clock = clock
  }

  /// Whether an event at `level` would be written (skip building expensive fields otherwise).
  public func isEnabled(_ level: LogLevel) -> Bool { level >= self.level }

  public func debug(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
    log(.debug, message, fields)
  }

  public func info(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
    log(.info, message, fields)
  }

  public func warn(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
    log(.warn, message, fields)
  }

  public func error(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
    log(.error, message, fields)
  }

  /// Writes one event if `level` is enabled.
  public func log(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
    guard isEnabled(level) else { return }
    write(
      Logger.format(timestampMs: clock(), level: level, message: message, fields: fields.map { ($0, $1) }))
  }

  /// Writes one event if `level` is enabled, with fields built at run time.
  public func log(_ level: LogLevel, _ message: String, fields: [(String, String)]) {
    guard isEnabled(level) else { return }
    write(Logger.format(timestampMs: clock(), level: level, message: message, fields: fields))
  }

  private func write(_ line: String) {
    var bytes = Array(line.utf8)
    bytes.append(UInt8(ascii: "\n"))
    bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        #if canImport(Glibc)
          let written = Glibc.write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
        #else
          let written = Darwin.write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
        #endif
        if written < 0 {
          if errno == EINTR { continue }
          return
        }
        offset += written
      }
    }
  }

  // MARK: Formatting

  /// The line for one event, without the trailing newline.
  public static func format(timestampMs: Int64, level: LogLevel, message: String, fields: [(String, String)])
    -> String
  {
    var line = "ts=" + timestamp(epochMs: timestampMs) + " level=" + level.name + " msg="
    appendQuoted(message, to: &line)
    for (key, value) in fields {
      line += " "
      line += sanitizedKey(key)
      line += "="
      if needsQuotes(value) {
        appendQuoted(value, to: &line)
      } else {
        line += value
      }
    }
    return line
  }

  /// Keys are code, not input, but are still limited to `[A-Za-z0-9_.-]`.
  static func sanitizedKey(_ key: String) -> String {
    let cleaned = String(
      key.unicodeScalars.map { scalar -> Character in
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "_", ".", "-": Character(scalar)
        default: "_"
        }
      })
    return cleaned.isEmpty ? "_" : cleaned
  }

  static func needsQuotes(_ value: String) -> Bool {
    if value.isEmpty || value.unicodeScalars.count > maxValueLength { return true }
    return value.unicodeScalars.contains { scalar in
      scalar == " " || scalar == "\"" || scalar == "=" || scalar == "\\" || scalar.value < 0x20
        || (scalar.value >= 0x7F && scalar.value < 0xA0) || scalar == "\u{2028}" || scalar == "\u{2029}"
    }
  }

  static func appendQuoted(_ value: String, to line: inout String) {
    line += "\""
    var count = 0
    for scalar in value.unicodeScalars {
      if count == maxValueLength {
        line += "…"
        break
      }
      count += 1
      switch scalar {
      case "\"": line += "\\\""
      case "\\": line += "\\\\"
      case "\n": line += "\\n"
      case "\r": line += "\\r"
      case "\t": line += "\\t"
      default:
        if scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0) {
          line += "\\x" + hex2(UInt8(truncatingIfNeeded: scalar.value))
        } else if scalar == "\u{2028}" || scalar == "\u{2029}" {
          line += scalar == "\u{2028}" ? "\\u2028" : "\\u2029"
        } else {
          line.unicodeScalars.append(scalar)
        }
      }
    }
    line += "\""
  }

  // MARK: Time

  /// `2026-11-29T14:00:00.123Z` for an epoch-millisecond time (UTC, proleptic Gregorian).
  public static func timestamp(epochMs: Int64) -> String {
    let millis = ((epochMs % 1000) + 1000) % 1000
    let seconds = (epochMs - millis) / 1000
    var days = seconds / 86_400
    var secondOfDay = seconds % 86_400
    if secondOfDay < 0 {
      secondOfDay += 86_400
      days -= 1
    }
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let shifted = days + 719_468
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)

    func pad(_ value: Int64, _ width: Int) -> String {
      let digits = String(value)
      return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
    return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(secondOfDay / 3600, 2) + ":"
      + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2) + "." + pad(millis, 3) + "Z"
  }
}

/// Two lower-case hex digits.
private func hex2(_ byte: UInt8) -> String {
  let digits = Array("0123456789abcdef")
  return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
}
