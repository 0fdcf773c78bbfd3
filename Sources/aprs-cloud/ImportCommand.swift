import API
import Config
import Platform
import Store

/// `aprs-cloud import FILE`: reads a station's export document (`POST /v1/export`, `aprs-cloud stations CALL
/// --export FILE`) into this server's database, for moving a station between servers.
enum ImportCommand: Command {
  static let name = "import"
  static let summary = "import a station's export document (POST /v1/export) into this server"
  static let usage = """
    usage: aprs-cloud import FILE --db PATH [--config FILE]

    Reads FILE, the JSON document POST /v1/export gave a station's owner (or
    `aprs-cloud stations STATION --export FILE` gave the operator), into the
    database: the station, its claim (the owner's key keeps working), settings,
    subscriptions, read markers and every stored entry, each under its own
    timestamp, so the owner's apps continue from their cursors. Nothing imported
    is pushed or ACKed again; a send still in flight comes in as expired (its
    schedule stays with the old server). Devices register anew.

    Everything is checked before anything is written, and the import is one
    transaction: it refuses a station already registered here (unregister it
    first) and an entry whose timestamp another station's message holds (import
    into a fresh server), and then changes nothing. Safe while the server runs;
    the listener adds the station to its filter as for a registration.

    options:
      --db PATH       the SQLite database (default: [server] database of --config)
      --config FILE   the INI configuration, for the database and
                      [server] maxUnpulledPerStation
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    runReporting(name, usage: usage) { () throws(CommandFailure) -> ExitStatus in
      let parsed = try parseArguments(arguments, options: ["db", "config"], flags: [])
      guard parsed.positionals.count == 1, let file = parsed.positionals.first else {
        throw CommandFailure("give the export document's FILE", usage: true)
      }
      let settings = try OperatorSettings.load(parsed)
      let bytes: [UInt8]
      switch SmallFile.read(file, limit: StationArchive.maximumDocumentBytes) {
      case .success(let read): bytes = read
      case .failure(let failure): throw CommandFailure(failure.description)
      }
      let archive: StationArchive
      do throws(APIError) {
        archive = try StationArchive(document: bytes, retentionCap: settings.maxUnpulledPerStation)
      } catch {
        throw CommandFailure("\(file): \(error.message)")
      }
      let database = try settings.openForWriting()
      defer { database.close() }
      do throws(StoreError) {
        try database.importStation(archive, now: epochMilliseconds())
      } catch .invalidArgument(let reason) {
        throw CommandFailure("\(settings.database): \(reason)")
      } catch {
        throw CommandFailure("\(settings.database): \(error)")
      }
      // The listener takes the new station into its filter now, not at its next fallback look.
      WakeSender(listenerOf: settings.database).send(.registrations)
      print(
        "imported \(archive.station): \(Format.contents(archive))"
          + (archive.claim == nil ? "" : "; the owner's station key works here"))
      return .success
    }
  }
}
