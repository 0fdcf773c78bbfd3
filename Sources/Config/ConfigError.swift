/// Everything reading the configuration can fail with. Every case says where the bad text came
/// from (file and line, environment variable, or command-line flag) and, for values, which key.
public enum ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The INI text is malformed: `config.ini line 12: expected key = value`.
  case syntax(file: String, line: Int, reason: String)
  /// A value does not fit its key: `config.ini line 3: server.workers: expected …, got "x"`.
  case invalidValue(key: String, value: String, source: String, reason: String)
  /// The file could not be read.
  case unreadable(path: String, reason: String)
  /// A required key is set nowhere: `aprs-cloud.ini: messaging.webpush.subject is not set: …` (`source` is the
  /// configuration file's name, `reason` says what to set where).
  case missingValue(key: String, source: String, reason: String)

  /// The dotted key the error is about (`server.workers`); nil for a syntax or file error.
  public var key: String? {
    switch self {
    case .invalidValue(let key, _, _, _), .missingValue(let key, _, _): key
    case .syntax, .unreadable: nil
    }
  }

  /// One line an operator can act on.
  public var description: String {
    switch self {
    case .syntax(let file, let line, let reason):
      return "\(file) line \(line): \(reason)"
    case .invalidValue(let key, let value, let source, let reason):
      return "\(source): \(key): \(reason), got \(ConfigError.quote(value))"
    case .unreadable(let path, let reason):
      return "cannot read config file \(path): \(reason)"
    case .missingValue(let key, let source, let reason):
      return "\(source): \(key) is not set: \(reason)"
    }
  }

  /// The value in double quotes, shortened and with control characters escaped.
  static func quote(_ value: String) -> String {
    var text = "\""
    for (index, scalar) in value.unicodeScalars.enumerated() {
      if index == 80 {
        text += "…"
        break
      }
      switch scalar {
      case "\"": text += "\\\""
      case "\\": text += "\\\\"
      case "\n": text += "\\n"
      case "\r": text += "\\r"
      case "\t": text += "\\t"
      default:
        if scalar.value < 0x20 || scalar.value == 0x7F {
          text += "\\x" + hex2(UInt8(scalar.value))
        } else {
          text.unicodeScalars.append(scalar)
        }
      }
    }
    return text + "\""
  }
}

/// Two lower-case hex digits.
func hex2(_ byte: UInt8) -> String {
  let digits = Array("0123456789abcdef")
  return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
}
