import API
import CompanionFiles
import Config
import Platform
import Store

/// `aprs-cloud import FILE`: reads a station's export document (`POST /v1/export`, `aprs-cloud stations CALL
/// --export FILE`) into this server's database, for moving a station between servers.
enum ImportCommand: Command {
  static let name = "import"
  static let summary = "import a station's export document (POST /v1/export) into this server"
  static let usage = """
    usage: aprs-cloud import FILE [--with-claim] --db PATH [--config FILE]

    Reads FILE, the JSON document POST /v1/export gave a station's owner (or
    `aprs-cloud stations STATION --export FILE` gave the operator), into the
    database: the station, its settings, subscriptions, read markers and its
    stored entries, each under its own timestamp, so the owner's apps continue
    from their cursors. Nothing imported is pushed or ACKed again; a send still
    in flight comes in as expired (its schedule stays with the old server).
    Devices register anew.

    The station keeps no more entries than its retention keeps on this server:
    the newest [server] ringSize of each ring, or of its own messages the
    `untilPulled` max of its settings (at most maxUnpulledPerStation); the
    older ones are left out, and the command says how many.

    The document's claim is a key hash that whoever wrote the document chose:
    without --with-claim the station comes in unclaimed (its owner claims it
    here anew). With --with-claim, given only for a document you know is the
    owner's, the claim comes along unproven and the owner's station key works
    here (`aprs-cloud stations STATION --approve-claim` proves it).

    Everything is checked before anything is written, and the import is one
    transaction: it refuses a station already registered here (unregister it
    first) and an entry whose timestamp another station's message holds (import
    into a fresh server), and then changes nothing. Safe while the server runs;
    the listener adds the station to its filter as for a registration.

    options:
      --with-claim    bring the document's claim along (unproven)
      --db PATH       the SQLite database (default: [server] database of --config)
      --config FILE   the INI configuration, for the database and [server]
                      ringSize and maxUnpulledPerStation
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    runReporting(name, usage: usage) { () throws(CommandFailure) -> ExitStatus in
      let parsed = try parseArguments(arguments, options: ["db", "config"], flags: ["with-claim"])
      guard parsed.positionals.count == 1, let file = parsed.positionals.first else {
        throw CommandFailure("give the export document's FILE", usage: true)
      }
      let withClaim = parsed.options["with-claim"] != nil
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
      let result: StationImport
      do throws(StoreError) {
        result = try database.importStation(archive, withClaim: withClaim, now: epochMilliseconds())
      } catch .invalidArgument(let reason) {
        throw CommandFailure("\(settings.database): \(reason)")
      } catch {
        throw CommandFailure("\(settings.database): \(error)")
      }
      // The listener takes the new station into its filter now, not at its next fallback look.
      WakeSocket.Sender(.listener, ofDatabase: settings.database).send(.registrations)
      print(
        report(
          archive, result, ringSize: settings.ringSize,
          own: database.retainedMessages(archive.settings.retention)))
      return .success
    }
  }

  /// The command's line: `imported N0CALL-7: 50 entries, 1 read marker, 2 subscriptions; 70 older entries dropped
  /// (…); unclaimed: …`. `own` is how many of its own messages the station's retention keeps here.
  static func report(_ archive: StationArchive, _ result: StationImport, ringSize: Int, own: Int) -> String {
    var line = "imported \(archive.station): \(Format.contents(archive, entries: result.entries))"
    if result.dropped > 0 {
      let kept =
        own == ringSize
        ? "the newest \(ringSize) of each ring"
        : "the newest \(own) of its own messages, \(ringSize) of each other ring"
      line +=
        "; \(Format.count(result.dropped, "older entry", "older entries")) dropped (more than the station's"
        + " retention keeps here: \(kept))"
    }
    if result.claim != nil {
      line += "; the document's claim came along unproven: the owner's station key works here"
    } else if archive.claim != nil {
      line += "; unclaimed: the document's claim was left out (--with-claim brings it, unproven)"
    } else {
      line += "; unclaimed (the document has no claim)"
    }
    return line
  }
}
