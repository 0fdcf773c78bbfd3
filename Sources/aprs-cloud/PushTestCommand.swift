import Config
import Logging
import Platform
import Push
import Store

#if canImport(Glibc)
  import Glibc
#endif

/// `aprs-cloud push-test STATION [--config FILE] [--db PATH]`: one test notification to every
/// device of a station, each provider's answer printed.
enum PushTestCommand: Command {
  static let name = "push-test"
  static let summary = "send a test notification to every device of a station"
  static let usage = """
    usage: aprs-cloud push-test STATION [--config FILE] [--db PATH]

    Sends one test notification ("Test notification from aprs-cloud") to every
    device registered for STATION (e.g. N0CALL-7), as the listener would: FCM
    for Android and APNs for iOS with the credentials of the [messaging…]
    sections, Web Push and UnifiedPush to each device's endpoint with the VAPID
    key of [messaging.webpush] (encrypted when the device gave pushKeys). It
    prints one line per device: platform, token or endpoint (shortened), the
    provider's HTTP status and reason. Exits 0 when every device's provider
    accepted the notification, 1 otherwise (no devices, a provider off or
    stopped, a refusal). A dead token is only reported (the push sender deletes
    it on the next real push). What it writes: the APNs provider token, shared
    with the sender so APNs does not see a new one more often than every 20
    minutes, and with Web Push on the VAPID public key file (vapid.pem.pub), and
    the key pair itself if the listener has not made it yet. Run it as the
    listener's user (sudo -u aprs-cloud) so these files stay the listener's.

    options:
      --config FILE   the INI configuration (default: $APRS_CLOUD_CONFIG, else none)
      --db PATH       the SQLite database (default: [server] database)

    Related: `aprs-cloud push-worker` runs only the push sender; see
    `aprs-cloud push-worker --help`.
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    let parsed: Arguments
    do {
      parsed = try Arguments(arguments, options: ["config", "db"])
      guard parsed.positionals.count == 1 else {
        throw UsageError(parsed.positionals.isEmpty ? "STATION is missing" : "only one STATION, please")
      }
    } catch {
      printError("aprs-cloud push-test: \(error)\n\n\(usage)")
      return .usage
    }
    let station = parsed.positionals[0].uppercased()
    let settings: PushCommandSettings
    do {
      settings = try PushCommandSettings.load(
        configPath: parsed.options["config"], database: parsed.options["db"], logLevel: "warn")
    } catch {
      printError("aprs-cloud push-test: \(error)")
      return .failure
    }
    PushService.globalInit()
    let outcome: (states: [DevicePlatform: ProviderState], results: [PushTestResult])
    do throws(PushError) {
      outcome = try PushTester.run(station: station, options: settings.options)
    } catch {
      printError("aprs-cloud push-test: \(error)")
      return .failure
    }
    for platform in DevicePlatform.allCases {
      let state = outcome.states[platform] ?? .off("not configured")
      if state != .ok { print("\(platform.rawValue) push: \(state)") }
    }
    guard !outcome.results.isEmpty else {
      print("\(station): no devices registered")
      return .failure
    }
    for result in outcome.results {
      let status = result.status.map(String.init) ?? "-"
      let expired = result.expired ? " [not refreshed within stationExpiry: real pushes skip it]" : ""
      print("\(result.platform.rawValue) \(result.token): \(status) \(result.reason)\(expired)")
    }
    return outcome.results.allSatisfy(\.accepted) ? .success : .failure
  }
}

/// `aprs-cloud push-worker --config FILE [--db PATH] [--log-level LEVEL]`: the push sender alone.
enum PushWorkerCommand: Command {
  static let name = "push-worker"
  static let summary = "run only the push sender until SIGTERM (never beside a listener)"
  static let usage = """
    usage: aprs-cloud push-worker [--config FILE] [--db PATH] [--log-level LEVEL]

    Runs only the push sender (the listener runs the same sender on a thread of
    its own): reads the outbox of the database, coalesces each station's burst,
    sends through FCM, APNs, Web Push and UnifiedPush (as [messaging…] in the
    configuration turns each on), deletes dead tokens and subscriptions, and
    publishes each provider's state for /health. It reads the outbox every
    second, so pushes queued by another process go out within about a second.
    Run it only where no listener sends pushes for the same database (both
    would send). SIGTERM or SIGINT stops it (pushes not sent stay queued) and
    it exits 0.

    options:
      --config FILE      the INI configuration (default: $APRS_CLOUD_CONFIG, else none)
      --db PATH          the SQLite database (default: [server] database); created
                         and migrated if needed
      --log-level LEVEL  debug, info, warn or error (default: [server] logLevel)
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    let parsed: Arguments
    do {
      parsed = try Arguments(arguments, options: ["config", "db", "log-level"])
      guard parsed.positionals.isEmpty else {
        throw UsageError("unexpected argument '\(parsed.positionals[0])'")
      }
    } catch {
      printError("aprs-cloud push-worker: \(error)\n\n\(usage)")
      return .usage
    }
    let settings: PushCommandSettings
    do {
      settings = try PushCommandSettings.load(
        configPath: parsed.options["config"], database: parsed.options["db"],
        logLevel: parsed.options["log-level"])
    } catch {
      printError("aprs-cloud push-worker: \(error)")
      return .failure
    }
    let logger = settings.options.logger
    for warning in settings.warnings { logger.warn(warning) }
    // Before any thread starts, so the push thread inherits the mask and only sigwait sees them.
    StopSignals.block()
    StopSignals.ignoreBrokenPipes()
    PushService.globalInit()
    do {
      let database = try Database(path: settings.options.databasePath, options: settings.options.storeOptions)
      try database.migrate()
      database.close()
    } catch {
      logger.error(
        "cannot open the database", ["database": settings.options.databasePath, "error": "\(error)"])
      return .failure
    }
    let service = PushService(options: settings.options)
    do throws(PushError) {
      try service.start()
    } catch {
      logger.error("cannot start the push sender", ["error": error.description])
      return .failure
    }
    logger.info(
      "push worker started", ["database": settings.options.databasePath, "pid": String(getpid())])
    let received = StopSignals.wait()
    logger.info("push worker stopping", ["signal": String(received)])
    service.stop()
    return .success
  }
}

/// The settings both push commands read: `[server]` for the database and station expiry,
/// `[messaging…]` for the providers.
struct PushCommandSettings {
  var options: PushServiceOptions
  var warnings: [String]

  static func load(configPath: String?, database: String?, logLevel: String?) throws -> PushCommandSettings {
    let environment = ConfigFile.processEnvironment()
    var config = try ConfigFile.load(flag: configPath, environment: environment)
    if let database { config.override("server", "database", database, source: "command line --db") }
    if let logLevel { config.override("server", "logLevel", logLevel, source: "command line --log-level") }
    let server = try ServerConfig(config)
    FileModes.applyUmask(forFilesIn: FileModes.folder(of: server.database))
    let push = try PushConfig(config)
    var options = PushServiceOptions(
      databasePath: server.database,
      storeOptions: StoreOptions(busyTimeoutMs: Int32(server.busyTimeoutMs), ringSize: server.ringSize),
      push: push, stationExpiryMs: server.stationExpiryMs, logger: Logger(level: server.logLevel))
    // push-worker: the outbox's waits move with a step of the wall clock, as in the listener.
    options.monotonic = monotonicMilliseconds
    return PushCommandSettings(
      options: options, warnings: config.warnings(for: ConfigSchema.all) + push.warnings)
  }
}
