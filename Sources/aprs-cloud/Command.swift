import Config
import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// One `aprs-cloud` subcommand.
protocol Command {
  /// The word that selects it (`passcode`, `parse`, …).
  static var name: String { get }
  /// One line for the command list.
  static var summary: String { get }
  /// The full `--help` text.
  static var usage: String { get }
  /// Runs with the arguments after the subcommand's name; returns the exit status.
  static func run(_ arguments: [String]) -> ExitStatus
}

/// The CLI's exit statuses: 0 success, 1 bad input or a failed operation, 2 wrong usage.
enum ExitStatus: Int32 {
  case success = 0
  case failure = 1
  case usage = 2
}

/// Minimal argument parsing shared by the subcommands: `--flag value`, `--flag=value`, positionals.
struct Arguments {
  private(set) var positionals: [String] = []
  private(set) var options: [String: String] = [:]
  private(set) var wantsHelp = false

  /// Parses `arguments`, accepting only the options in `known` (each takes one value).
  init(_ arguments: [String], options known: Set<String> = [], flags: Set<String> = []) throws(UsageError) {
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if argument == "--help" || argument == "-h" {
        wantsHelp = true
      } else if argument.hasPrefix("--") {
        var name = String(argument.dropFirst(2))
        var value: String?
        if let equals = name.firstIndex(of: "=") {
          value = String(name[name.index(after: equals)...])
          name = String(name[..<equals])
        }
        if flags.contains(name) {
          guard value == nil else { throw UsageError("--\(name) takes no value") }
          options[name] = "true"
          continue
        }
        guard known.contains(name) else { throw UsageError("unknown option --\(name)") }
        if value == nil {
          guard index < arguments.count else { throw UsageError("--\(name) needs a value") }
          value = arguments[index]
          index += 1
        }
        options[name] = value
      } else {
        positionals.append(argument)
      }
    }
  }
}

/// Writes text to standard error.
func printError(_ text: String) {
  var line = text
  if !line.hasSuffix("\n") { line += "\n" }
  writeAll(2, Array(line.utf8))
}

/// Runs one command, turning usage errors into exit status 2 with the command's usage on stderr.
func runCommand<C: Command>(_ command: C.Type, _ arguments: [String]) -> ExitStatus {
  if arguments.contains("--help") || arguments.contains("-h") {
    print(C.usage)
    return .success
  }
  return C.run(arguments)
}
