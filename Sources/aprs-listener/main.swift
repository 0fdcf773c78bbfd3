// aprs-listener: the APRS-IS daemon of aprs-cloud. This file only wires things together: settings, logging,
// signals, the runtime, the exit status. Everything else is in the Listener module.
import APRS
import Config
import Listener
import Logging
import Platform
import Push
import Store

#if canImport(Glibc)
  import Glibc
#endif

// A server that goes away must cost an EPIPE, not the process.
StopSignals.ignoreBrokenPipes()

/// Writes text to standard error.
func printError(_ text: String) {
  let bytes = Array((text.hasSuffix("\n") ? text : text + "\n").utf8)
  _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

let environment = ConfigFile.processEnvironment()
let options: Options
do {
  options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
  printError("aprs-listener: \(error)\n\n\(Options.usage)")
  exit(2)
}
if options.help {
  print(Options.usage)
  exit(0)
}

// Settings: defaults < config file < environment < flags.
var configFile: ConfigFile
do {
  configFile = try ConfigFile.load(flag: options.configPath, environment: environment)
} catch {
  Logger().error(error.description)
  exit(2)
}
options.apply(to: &configFile)
let settings: ListenerConfig
do {
  settings = try ListenerConfig(configFile)
} catch {
  Logger().error(error.description)
  exit(2)
}
// The database, its -wal and -shm files: 0600 unless their folder is group-shared (FileModes).
FileModes.applyUmask(forFilesIn: FileModes.folder(of: settings.server.database))
let logger = Logger(level: settings.server.logLevel)
for warning in configFile.warnings(for: .all) {
  logger.warn("configuration", ["warning": warning])
}
if let login = settings.login, let passcode = settings.passcode, passcode != -1,
  Passcode.compute(login) != passcode
{
  logger.warn(
    "[aprsis] passcode does not match [aprsis] login: APRS-IS will answer unverified and nothing will be ACKed",
    ["login": login])
}

FileModes.createParentDirectories(of: settings.server.database)

// The push sender: its own thread and database connection, started once the lease is held.
let pushConfig: PushConfig
do {
  pushConfig = try PushConfig(configFile)
} catch {
  logger.error(error.description)
  exit(2)
}
// A feature left off by a setting it lacks (an upgrade's config): the service starts, the log and /health say it.
for warning in pushConfig.warnings {
  logger.warn("configuration", ["warning": warning])
}
PushService.globalInit()
var pushOptions = PushServiceOptions(
  databasePath: settings.server.database,
  storeOptions: StoreOptions(
    busyTimeoutMs: Int32(clamping: settings.server.busyTimeoutMs), ringSize: settings.server.ringSize,
    maxUnpulledPerStation: settings.server.maxUnpulledPerStation),
  push: pushConfig, stationExpiryMs: settings.server.stationExpiryMs, logger: logger)
// The outbox's waits move with a step of the wall clock (PushServiceOptions.monotonic).
pushOptions.monotonic = monotonicMilliseconds
// Every commit that queues pushes wakes the sender (`PushNotifier`), and it sleeps until its next retry comes due:
// its own look at the outbox is for what other processes wrote (claim codes, confirmation mails) and for pushes left
// from before a restart, so it can be slow enough that an idle listener sleeps (docs/operating.md "Idle").
pushOptions.pollIntervalMs = 10_000
let push = PushService(options: pushOptions)

/// Starts and stops the push sender with the listener, and wakes it after every commit that queued pushes.
struct PushNotifier: OutboxNotifierLifecycle {
  let service: PushService
  let logger: Logger
  func messagesStored(stations: [String]) { service.notify() }
  func listenerStarted() {
    do {
      try service.start()
    } catch {
      logger.error("cannot start the push sender; messages are still stored", ["error": "\(error)"])
    }
  }
  func listenerStopped() { service.stop() }
}

// Every thread inherits this mask; only the signal thread below receives the stop signals.
StopSignals.block()

let runtime = ListenerRuntime(
  options: ListenerRuntime.Options(
    config: settings, login: settings.login ?? ReceiveOnlyLogin.generate(), standby: options.standby,
    holder: LeaseHolder.current().description),
  logger: logger,
  notifier: PushNotifier(service: push, logger: logger))

do {
  try StopSignals.handle { [runtime, logger] signal in
    logger.info("stop signal received", ["signal": signal == SIGTERM ? "TERM" : "INT"])
    runtime.requestStop(status: 0)
  }
} catch {
  logger.error("cannot start the signal thread")
  exit(1)
}
exit(runtime.run())
