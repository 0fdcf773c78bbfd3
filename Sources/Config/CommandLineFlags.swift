/// A mistake in how a program was called (exit status 2).
public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// The daemons' command lines: `--name value`, `--name=value`, switches without a value, and
/// `--help`/`-h`. Nothing positional.
public struct CommandLineFlags: Equatable, Sendable {
  /// The value of each option given (the last one wins).
  public var values: [String: String] = [:]
  /// The switches given.
  public var switches: Set<String> = []
  /// `--help` or `-h` was given.
  public var help = false

  /// Parses `arguments`, accepting the options in `valued` (each with one value) and the
  /// switches in `switches`; every other word is a usage error that says what is wrong.
  public init(_ arguments: [String], valued: Set<String>, switches known: Set<String> = [])
    throws(UsageError)
  {
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if argument == "--help" || argument == "-h" {
        help = true
        continue
      }
      if known.contains(argument) {
        switches.insert(argument)
        continue
      }
      guard argument.hasPrefix("--") else { throw UsageError("unexpected argument '\(argument)'") }
      var name = argument
      var value: String?
      if let equals = argument.firstIndex(of: "=") {
        name = String(argument[..<equals])
        value = String(argument[argument.index(after: equals)...])
      }
      guard valued.contains(name) else {
        throw UsageError(known.contains(name) ? "\(name) takes no value" : "unknown option '\(name)'")
      }
      if value == nil {
        guard index < arguments.count else { throw UsageError("\(name) needs a value") }
        value = arguments[index]
        index += 1
      }
      values[name] = value
    }
  }
}
