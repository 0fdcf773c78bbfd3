import Config

/// The command line: `aprs-cloud-fcgi [--listen PATH|HOST:PORT] [--db PATH] [--config FILE]
/// [--workers N] [--log-level LEVEL] [--help]`. Flags become overrides above the config file
/// and the environment, so they are validated (and named in errors) like every other setting.
struct Options: Equatable {
  var listen: String?
  var database: String?
  var configPath: String?
  var workers: String?
  var logLevel: String?
  var help = false

  static let usage = """
    usage: aprs-cloud-fcgi [--listen PATH|HOST:PORT] [--db PATH] [--config FILE] [--workers N]
                           [--log-level LEVEL] [--help]

    Serves the aprs-cloud /v1 API over FastCGI (behind nginx), or answers one CGI request.

      --listen PATH|HOST:PORT  open this unix socket (mode 0660, a stale one is replaced) or TCP
                               address (e.g. 127.0.0.1:9000) and serve FastCGI on it. Without it:
                               serve the listening socket inherited on fd 0 (spawn-fcgi, Apache
                               mod_fcgid, systemd socket activation with StandardInput=socket);
                               or, when fd 0 is not a socket and GATEWAY_INTERFACE is set, answer
                               one CGI request from the environment and standard input.
      --db PATH                the SQLite database; created and migrated at start
                               (default ./var/aprs-cloud.sqlite)
      --config FILE            the INI config file (default: $APRS_CLOUD_CONFIG, else none)
      --workers N              worker threads, each with its own database connection (1-256,
                               default 4)
      --log-level LEVEL        debug, info, warn or error (default info); logs go to stderr
      --help                   show this help

    Every setting can also be given in the config file ([server] listen, database, workers,
    logLevel, stationExpiry, ringSize, maxBody, busyTimeout; [ratelimit] registrationsPerHour,
    heartbeatsPerHour, avatarUploadsPerHour) or the environment
    (APRS_CLOUD_SERVER_DATABASE, APRS_CLOUD_SERVER_WORKERS, ...). Flags win over both, the
    environment over the file. SIGTERM or SIGINT finishes the requests in flight and exits 0.
    """

  /// Parses the arguments after the program name. Throws a sentence for a usage error.
  static func parse(_ arguments: [String]) throws(UsageError) -> Options {
    let flags = try CommandLineFlags(
      arguments, valued: ["--listen", "--db", "--config", "--workers", "--log-level"])
    return Options(
      listen: flags.values["--listen"], database: flags.values["--db"], configPath: flags.values["--config"],
      workers: flags.values["--workers"], logLevel: flags.values["--log-level"], help: flags.help)
  }

  /// Puts the flags above the file and the environment.
  func apply(to config: inout ConfigFile) {
    if let listen { config.override("server", "listen", listen, source: "command line --listen") }
    if let database { config.override("server", "database", database, source: "command line --db") }
    if let workers { config.override("server", "workers", workers, source: "command line --workers") }
    if let logLevel { config.override("server", "logLevel", logLevel, source: "command line --log-level") }
  }
}
