import Config
import Platform
import Store

#if canImport(Glibc)
  import Glibc
#endif

/// `aprs-cloud maintenance --config FILE`: the listener's periodic maintenance, once, now.
enum MaintenanceCommand: Command {
  static let name = "maintenance"
  static let summary = "run the listener's hourly maintenance once, now"
  static let usage = """
    usage: aprs-cloud maintenance [--config FILE] [--db PATH]

    Runs what the listener does every hour, at once: deletes dedup keys, ACK
    times and rate-limit windows that expired, delivery receipts older than a
    week, and stations and push tokens not heard within [server]
    stationExpiry; then checkpoints the write-ahead log, truncating it, unless
    [replication] is on (then Litestream owns the checkpoints). Safe while
    the server runs. Prints what it deleted.

    Exit status 0 when it ran, 1 when the database cannot be opened or
    written.

    options:
      --config FILE   the INI configuration (default: $APRS_CLOUD_CONFIG)
      --db PATH       the database (default: [server] database of FILE)
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    runReporting(name, usage: usage) { () throws(CommandFailure) -> ExitStatus in
      let parsed = try parseArguments(arguments, options: ["config", "db"])
      guard parsed.positionals.isEmpty else {
        throw CommandFailure("unexpected argument '\(parsed.positionals[0])'", usage: true)
      }
      let settings = try OperatorSettings.load(parsed)
      let replication = try ReplicationSetup.settings(
        try ReplicationSetup.loadConfig(parsed.options["config"]))
      var info = stat()
      guard stat(settings.database, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
        throw CommandFailure("no database at \(settings.database)")
      }
      let plan = MaintenancePlan(
        stationExpiryMs: settings.stationExpiryMs,
        checkpoint: replication.isEnabled ? .leaveToReplication : .truncate)
      let report: MaintenanceReport
      do throws(StoreError) {
        let database = try Database(
          path: settings.database,
          options: StoreOptions(
            busyTimeoutMs: Int32(clamping: settings.busyTimeoutMs), ringSize: settings.ringSize))
        defer { database.close() }
        try database.checkSchema()
        // Never past the listener's steady clock (its newest stored window): see Database.pruneExpired.
        let now = epochMilliseconds()
        report = try database.runMaintenance(
          plan, now: now, windowsNow: min(now, try database.steadyClockFloor()))
      } catch {
        throw CommandFailure("\(settings.database): \(error)")
      }
      print("maintenance: \(settings.database)")
      for (key, value) in report.fields { print("\(key): \(value)") }
      return .success
    }
  }
}
