import API
import APRS
import Config

/// `aprs-cloud check-config FILE`: every error and warning the programs would find in FILE, without starting
/// anything (``ConfigCheck``).
enum CheckConfigCommand: Command {
  static let name = "check-config"
  static let summary = "print every error and warning in a configuration file, starting nothing"
  static let usage = """
    usage: aprs-cloud check-config FILE [--environment]

    Reads FILE as the listener, the responder and the push sender would, and prints
    every error (a program would refuse to start) and every warning (it starts and
    logs it: unknown or retired keys, a feature left off by a setting it lacks, a
    passcode that does not match the login), one a line, then a summary. Starts
    nothing, opens no database, touches no file. Run it before restarting after an
    upgrade or an edit.

    --environment   apply this shell's APRS_CLOUD_* variables too, as a program
                    started from it would (default: the file alone)

    exit status: 0 no errors (warnings only included: everything starts, as
    nginx -t exits 0 on warnings), 2 errors (the status the daemons exit with;
    systemd's RestartPreventExitStatus=2 keeps them stopped until the file is
    fixed), also for wrong usage.
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    let parsed: Arguments
    do {
      parsed = try Arguments(arguments, flags: ["environment"])
    } catch {
      printError("aprs-cloud check-config: \(error)\n\n\(usage)")
      return .usage
    }
    guard parsed.positionals.count == 1, let path = parsed.positionals.first else {
      printError(usage)
      return .usage
    }
    let environment = parsed.options["environment"] != nil ? ConfigFile.processEnvironment() : [:]
    let config: ConfigFile
    do {
      config = try ConfigFile.load(path: path, environment: environment)
    } catch {
      print("error: \(error)")
      print("\(path): 1 error, 0 warnings")
      return .usage
    }
    var check = ConfigCheck(config)
    if let listener = check.listener, let login = listener.login, let passcode = listener.passcode,
      passcode != -1, Passcode.compute(login) != passcode
    {
      check.warnings.append(
        "[aprsis] passcode does not match [aprsis] login \(login): APRS-IS will answer unverified and nothing"
          + " will be ACKed (aprs-cloud passcode \(login))")
    }
    // As the responder checks them at start (aprs-cloud-fcgi exits 2 on a bad one).
    for origin in check.server?.allowedOrigins ?? [] where APIConfig.normalisedOrigin(origin) == nil {
      check.errors.append(
        "[server] allowedOrigins: \(origin) is not an origin (http:// or https://, a host, an optional port)")
    }
    for error in check.errors { print("error: \(error)") }
    for warning in check.warnings { print("warning: \(warning)") }
    let errors = check.errors.count
    let warnings = check.warnings.count
    if errors == 0 && warnings == 0 {
      print("\(path): ok")
    } else {
      print(
        "\(path): \(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")"
          + (errors > 0 ? ": the programs would not start" : ": the programs start"))
    }
    return ExitStatus(rawValue: errors > 0 ? 2 : check.exitStatus) ?? .usage
  }
}
