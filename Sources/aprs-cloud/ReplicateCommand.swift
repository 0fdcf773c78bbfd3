import Config

#if canImport(Glibc)
  import Glibc
#endif

/// `aprs-cloud replicate --config FILE`: Litestream for the configured database (systemd's
/// `aprs-cloud-litestream.service`; `up` runs the same thing as one of its children).
enum ReplicateCommand: Command {
  static let name = "replicate"
  static let summary = "stream the database to its replica with Litestream (for systemd)"
  static let usage = """
    usage: aprs-cloud replicate [--config FILE] [--db PATH]

    Writes the Litestream configuration for the database from [replication]
    in FILE (into litestream.yml beside the database, mode 0600) and becomes
    `litestream replicate` with it: the same process, so systemd supervises
    Litestream itself. Litestream ships every commit to the replica within
    about [replication] syncInterval (default 1s) and owns the database's WAL
    checkpoints while it runs. `aprs-cloud up` runs the same as one of its
    children.

    Exit status 1 when [replication] url is not set, the configuration is
    invalid or Litestream cannot be found; otherwise Litestream's own.

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
      var config = try ReplicationSetup.loadConfig(parsed.options["config"])
      if let database = parsed.options["db"] {
        config.override("server", "database", database, source: "command line --db")
      }
      let replication = try ReplicationSetup.settings(config)
      guard replication.isEnabled else {
        throw CommandFailure("replication is off: set [replication] url in the configuration")
      }
      let database: String
      do throws(ConfigError) {
        database = try ServerConfig(config).database
      } catch {
        throw CommandFailure(error.description)
      }
      let litestream = try ReplicationSetup.findLitestream(replication)
      let yaml = ReplicationSetup.litestreamConfig(
        database: database, replication: replication, config: config)
      let file = NginxFiles.parent(of: yaml.database) + "/" + LitestreamConfig.fileName
      try ReplicationSetup.writePrivateFile(yaml.yaml, to: file)
      let argv = ["litestream"] + LitestreamConfig.replicateArguments(configPath: file)
      let pointers = argv.map { strdup($0) } + [nil]
      execv(litestream, pointers)
      throw CommandFailure("cannot run \(litestream): \(String(cString: strerror(errno)))")
    }
  }
}
