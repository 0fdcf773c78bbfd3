import APRS

/// `aprs-cloud passcode CALL`: prints the APRS-IS passcode of a callsign.
enum PasscodeCommand: Command {
  static let name = "passcode"
  static let summary = "print the APRS-IS passcode of a callsign"
  static let usage = """
    usage: aprs-cloud passcode CALLSIGN

    Prints the APRS-IS passcode of CALLSIGN (the SSID is ignored), the value
    clients send as `auth`.

    example: aprs-cloud passcode N0CALL-7   →   13023
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    guard arguments.count == 1, let call = arguments.first, !call.hasPrefix("-") else {
      printError(usage)
      return .usage
    }
    do {
      let address = try StationAddress(parsing: call)
      print(Passcode.compute(address.base))
      return .success
    } catch {
      printError("aprs-cloud passcode: \(error)")
      return .failure
    }
  }
}
