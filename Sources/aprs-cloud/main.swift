// aprs-cloud: the operator's command line.
import Config
import Platform

#if canImport(Glibc)
  import Glibc
#endif

// Whatever a command creates is private unless it says otherwise (FileModes).
umask(FileModes.privateMask)

let commands: [any Command.Type] = [
  PasscodeCommand.self, ParseCommand.self, MigrateCommand.self,
  NginxConfigCommand.self, UpCommand.self, PushTestCommand.self,
  StatusCommand.self, StationsCommand.self, MessagesCommand.self, BackupCommand.self,
  ImportConfigCommand.self, RestoreCommand.self, ReplicateCommand.self, MaintenanceCommand.self,
  PushWorkerCommand.self, BanCommand.self, UnbanCommand.self, CheckConfigCommand.self, ImportCommand.self,
  ConformanceCommand.self,
]

func mainUsage(_ commands: [any Command.Type]) -> String {
  var text = """
    usage: aprs-cloud COMMAND [ARGUMENTS] [--help]

    The operator's tool for an aprs-cloud server.

    commands:

    """
  for command in commands {
    text += "  " + command.name.padding(to: 14) + command.summary + "\n"
  }
  text += "\nRun `aprs-cloud COMMAND --help` for a command's options."
  return text
}

extension String {
  fileprivate func padding(to width: Int) -> String {
    count >= width ? self + " " : self + String(repeating: " ", count: width - count)
  }
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first else {
  printError(mainUsage(commands))
  exit(ExitStatus.usage.rawValue)
}
if name == "--help" || name == "-h" || name == "help" {
  print(mainUsage(commands))
  exit(0)
}
guard let command = commands.first(where: { $0.name == name }) else {
  printError("aprs-cloud: unknown command '\(name)'\n\n" + mainUsage(commands))
  exit(ExitStatus.usage.rawValue)
}
arguments.removeFirst()
let status = runCommand(command, arguments)
exit(status.rawValue)
