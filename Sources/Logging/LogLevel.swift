/// How much a program logs, from the chattiest to the quietest.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
  case debug = 0
  case info = 1
  case warn = 2
  case error = 3

  /// Parses `debug`, `info`, `warn` (or `warning`) and `error`, any case.
  public init?(name: String) {
    switch name.lowercased() {
    case "debug": self = .debug
    case "info": self = .info
    case "warn", "warning": self = .warn
    case "error": self = .error
    default: return nil
    }
  }

  /// The name as written in logs and config files.
  public var name: String {
    switch self {
    case .debug: "debug"
    case .info: "info"
    case .warn: "warn"
    case .error: "error"
    }
  }

  public var description: String { name }

  public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
