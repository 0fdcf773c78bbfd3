import Config
import Platform
import Store

/// `aprs-cloud migrate --db PATH`: creates or upgrades a database.
enum MigrateCommand: Command {
  static let name = "migrate"
  static let summary = "create or upgrade a database; print its schema version"
  static let usage = """
    usage: aprs-cloud migrate --db PATH

    Creates the SQLite database at PATH if it does not exist, applies the
    migrations it lacks (in order, each in a transaction) and prints the
    schema version. A database newer than this build is refused.
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    let parsed: Arguments
    do {
      parsed = try Arguments(arguments, options: ["db"])
    } catch {
      printError("aprs-cloud migrate: \(error)\n\n\(usage)")
      return .usage
    }
    guard let path = parsed.options["db"], parsed.positionals.isEmpty else {
      printError(usage)
      return .usage
    }
    FileModes.applyUmask(forFilesIn: FileModes.folder(of: path))
    do {
      let database = try Database(path: path)
      defer { database.close() }
      let version = try database.migrate()
      print("schema version \(version)")
      return .success
    } catch {
      printError("aprs-cloud migrate: \(error)")
      return .failure
    }
  }
}
