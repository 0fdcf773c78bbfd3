import Config

/// The command line: `aprs-listener [--db PATH] [--config FILE] [--standby] [--log-level LEVEL] [--help]`. Flags
/// become overrides above the config file and the environment, so they are validated (and named in errors) like
/// every other setting.
struct Options: Equatable {
  var database: String?
  var configPath: String?
  var logLevel: String?
  var standby = false
  var help = false

  static let usage = """
    usage: aprs-listener [--db PATH] [--config FILE] [--standby] [--log-level LEVEL] [--help]

    Holds the APRS-IS connection for aprs-cloud: keeps a filter of the registered stations, stores the messages
    addressed to them (once, however often they are retransmitted) and ACKs them for stations that asked.

      --db PATH          the SQLite database shared with aprs-cloud-fcgi; created and migrated at start
                         (default ./var/aprs-cloud.sqlite)
      --config FILE      the INI config file (default: $APRS_CLOUD_CONFIG, else none)
      --standby          when a listener on another host holds the database's listener lease, wait and
                         take over when it lapses, instead of exiting with status 1 (a listener on this
                         host is always waited for: see the lock file below)
      --log-level LEVEL  debug, info, warn or error (default info); logs go to stderr
      --help             show this help

    Settings ([aprsis] servers, login, passcode, trackOutgoing; [server] database,
    stationExpiry, logLevel, busyTimeout, ringSize) come from the config file or the environment
    (APRS_CLOUD_APRSIS_LOGIN, APRS_CLOUD_APRSIS_PASSCODE, ...). Flags win over both, the environment over the
    file. Without [aprsis] login and passcode the listener logs in receive-only (pass -1, a generated login):
    messages are stored but never ACKed. SIGTERM or SIGINT stops reading, commits what is queued, releases the
    lease and exits 0.

    One listener runs per database. On one host the lock file DATABASE.listener-lock (beside the database) decides:
    it is held for the life of the process and freed by the kernel when the process dies, so a listener restarted
    after a crash takes over at once, and a second one started meanwhile waits for the first to exit.
    """

  /// Parses the arguments after the program name. Throws a sentence for a usage error.
  static func parse(_ arguments: [String]) throws(UsageError) -> Options {
    let flags = try CommandLineFlags(
      arguments, valued: ["--db", "--config", "--log-level"], switches: ["--standby"])
    return Options(
      database: flags.values["--db"], configPath: flags.values["--config"],
      logLevel: flags.values["--log-level"],
      standby: flags.switches.contains("--standby"), help: flags.help)
  }

  /// Puts the flags above the file and the environment.
  func apply(to config: inout ConfigFile) {
    if let database { config.override("server", "database", database, source: "command line --db") }
    if let logLevel { config.override("server", "logLevel", logLevel, source: "command line --log-level") }
  }
}
