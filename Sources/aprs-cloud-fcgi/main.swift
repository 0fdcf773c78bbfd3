// aprs-cloud-fcgi: the /v1 API as a FastCGI responder (own socket or fd 0) or a CGI program.
// This file only wires things together: settings, the database, the mode, the exit status.
import API
import CompanionFiles
import Config
import FastCGI
import Logging
import Platform
import Store
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

// A client that goes away must cost an EPIPE, not the process.
StopSignals.ignoreBrokenPipes()

let environment = ConfigFile.processEnvironment()
/// How often the file watch looks at the database file without an inotify event (ms).
let fileWatchFallbackMs: Int64 = 30_000

let options: Options
do {
  options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
  writeAll(2, Array("aprs-cloud-fcgi: \(error)\n\n\(Options.usage)\n".utf8))
  exit(2)
}
if options.help {
  print(Options.usage)
  exit(0)
}

// The database watch is what wakes the FastCGI server's parked long polls.
extension SyncWatch: WakeSource {}

/// How this process was started.
enum Mode {
  case socket(String)
  case inherited
  case cgi
}

// Decided before the settings are read, so that in CGI mode even a broken configuration is
// answered with JSON (the app treats anything else as a network failure).
let fdZeroIsListening = ListenSocket.fdZeroIsListening()
let runsAsCGI = options.listen == nil && !fdZeroIsListening && environment["GATEWAY_INTERFACE"] != nil

/// Answers the one CGI request with `error` (when running as CGI), logs `message`, exits.
func failStartup(_ message: String, status: Int32, answer: APIError, logger: Logger = Logger()) -> Never {
  logger.error(message)
  if runsAsCGI { CGIServer.answer(Responder.encode(.error(answer))) }
  exit(status)
}

// Settings: defaults < config file < environment < flags.
var configFile: ConfigFile
do {
  configFile = try ConfigFile.load(flag: options.configPath, environment: environment)
} catch {
  failStartup(error.description, status: 2, answer: .internalError("the server's configuration is invalid"))
}
options.apply(to: &configFile)
let settings: ServerConfig
do {
  settings = try ServerConfig(configFile)
} catch {
  failStartup(error.description, status: 2, answer: .internalError("the server's configuration is invalid"))
}
// The database, its -wal and -shm files: 0600 unless their folder is group-shared (FileModes).
FileModes.applyUmask(forFilesIn: FileModes.folder(of: settings.database))
let logger = Logger(level: settings.logLevel)
for warning in configFile.warnings(for: .all) {
  logger.warn("configuration", ["warning": warning])
}

let mode: Mode
if runsAsCGI {
  mode = .cgi
} else if let listen = settings.listen {
  mode = .socket(listen)
} else if fdZeroIsListening {
  mode = .inherited
} else {
  writeAll(
    2,
    Array(
      """
      aprs-cloud-fcgi: nothing to serve: give --listen PATH|HOST:PORT, start it with a listening \
      socket on fd 0 (spawn-fcgi, mod_fcgid, systemd), or run it as a CGI program

      \(Options.usage)

      """.utf8))
  exit(2)
}

let apiConfig: APIConfig = {
  var config = APIConfig()
  // The limits and the sending rules as the file gives them: declared once, in Config.
  config.limits = settings.limits
  for origin in settings.allowedOrigins {
    guard let normalised = APIConfig.normalisedOrigin(origin) else {
      failStartup(
        "[server] allowedOrigins: \(origin) is not an origin (http:// or https://, a host, an optional port)",
        status: 2, answer: .internalError("the server's configuration is invalid"))
    }
    config.allowedOrigins.insert(normalised)
  }
  config.send = settings.send
  // The listener's login, refused as an addressee (the same file configures both programs).
  config.listenerLogin = (try? configFile.string("aprsis", "login")).flatMap { $0.isEmpty ? nil : $0 }
  // Advertised (/v1/info) only where a held sync costs no thread; CGI still honours `wait`.
  config.longPoll = !runsAsCGI && settings.maxParked > 0
  config.info.longPoll = config.longPoll
  config.info.send = config.send.enabled
  // Web Push: on as the listener's [messaging.webpush] says; the VAPID public key from the file the listener
  // writes beside its private key (this process never reads the private key).
  do throws(ConfigError) {
    if let webPush = try PushConfig.webPush(configFile).settings {
      let path = VAPIDPublicKeyFile.path(forKeyFile: webPush.keyFile(database: settings.database))
      config.info.webPush = true
      config.info.vapidPublicKey = { VAPIDPublicKeyFile.read(path) }
      config.allowPrivatePushEndpoints = webPush.allowPrivateEndpoints
    }
  } catch {
    logger.warn("web push is off for /v1/info: its configuration is invalid", ["error": error.description])
  }
  // Forwarding: which targets may be saved (the listener sends them).
  do throws(ConfigError) {
    let forward = try PushConfig.forward(configFile)
    config.forward = forward != nil
    config.forwardEmail = forward?.email != nil
    config.allowPrivateForwardEndpoints = forward?.allowPrivateEndpoints ?? false
    if let forward {
      config.info.forwardTypes = (forward.email != nil ? ["email"] : []) + ["ntfy", "webhook"]
    }
  } catch {
    config.forward = false
    logger.warn("forwarding is off: its configuration is invalid", ["error": error.description])
  }
  return config
}()

// The workers' connections queue for the write lock on one gate rather than SQLite's sleep-and-poll. Each commit
// (a read marker, a send) wakes the held long polls of the responder that binds the wake socket (this one, or the
// FastCGI responder beside a CGI request).
let storeOptions = {
  var options = StoreOptions(
    busyTimeoutMs: Int32(settings.busyTimeoutMs), ringSize: settings.ringSize, writerGate: WriterGate(),
    maxUnpulledPerStation: settings.maxUnpulledPerStation)
  options.commitNotice = .wakingLongPolls(of: settings.database)
  return options
}()

/// Opens one connection (the first one also creates the file's directory).
func openDatabase() throws(StoreError) -> Database {
  try Database(path: settings.database, options: storeOptions)
}

/// The request counters and latency histograms `/metrics` shows, shared by every worker. In CGI
/// mode they only ever hold the one request of the process (the HELP text says so).
let requestMetrics = RequestMetrics(
  startedAt: epochMilliseconds(), mode: runsAsCGI ? "cgi" : "fastcgi",
  workers: runsAsCGI ? 1 : settings.workers)

/// Wakes the listener after the commits it acts on (its wake socket beside the database; a listener that does not
/// run costs a failed `sendto`, and the listener's slow fallback look covers a lost wake).
let listenerWake = WakeSocket.Sender(.listener, ofDatabase: settings.database)
requestMetrics.countListenerWakes { [listenerWake] in
  (listenerWake.sent.load(ordering: .relaxed), listenerWake.failed.load(ordering: .relaxed))
}

/// The long-poll wake socket beside the database (``CompanionFiles/WakeSocket/Role/longPolls``): held long polls are
/// looked at when
/// a writer's commit says so. Nil (and logged) when another responder holds it or it cannot be bound: this one then
/// looks every 10 ms while anything is held.
func bindLongPollWakeSocket() -> WakeSocket? {
  let path = WakeSocket.Role.longPolls.path(forDatabase: settings.database)
  do throws(FileLockError) {
    guard let socket = try WakeSocket.bind(.longPolls, path: path) else {
      logger.warn(
        "another responder holds the long-poll wake socket; held long polls are looked at every 10 ms",
        ["socket": path])
      return nil
    }
    return socket
  } catch {
    logger.warn(
      "cannot bind the long-poll wake socket; held long polls are looked at every 10 ms",
      ["socket": path, "error": error.description])
    return nil
  }
}

func makeResponder(_ database: Database) -> Responder {
  Responder(
    handler: APIHandler(
      database: database, config: apiConfig, metrics: requestMetrics, clock: epochMilliseconds,
      wakeListener: { listenerWake.send($0) }),
    logger: logger, metrics: requestMetrics, acceptsMetricsParameter: !runsAsCGI,
    // One line per request duplicates nginx's access log: debug unless asked for. A CGI request
    // is a process of its own, where the line costs nothing next to the start.
    requestLogLevel: runsAsCGI || settings.logRequests ? .info : .debug, holdsByPolling: runsAsCGI)
}

FileModes.createParentDirectories(of: settings.database)

switch mode {
case .cgi:
  let database: Database
  do {
    database = try openDatabase()
    try database.migrate()
  } catch {
    failStartup(
      "cannot open the database: \(error)", status: 1, answer: .unavailable("cannot open the database"),
      logger: logger)
  }
  logger.debug("aprs-cloud-fcgi started", ["mode": "cgi", "database": settings.database])
  let responder = makeResponder(database)
  CGIServer(environment: environment, bodyLimit: settings.maxBody, logger: logger).serve(responder.handle)
  database.close()
  exit(0)

case .socket, .inherited:
  // Never beside processes still using another file at this path (docs/design.md "Faults"): held until the end.
  let users: DatabaseUsers
  do {
    users = try DatabaseUsers(databasePath: settings.database)
    let moved = try users.join(shouldStop: { false }, waiting: { logger.warn($0) }) ?? []
    if !moved.isEmpty {
      logger.warn(
        "the database file was replaced or deleted since its last users ran; their write-ahead log is kept aside,"
          + " not applied to this file", ["moved": moved.joined(separator: ",")])
    }
  } catch {
    logger.error("cannot use the database's users file", ["error": error.description])
    exit(1)
  }
  // Before any thread exists, so every thread inherits the mask and only the signal thread
  // receives them (a signal arriving during start-up waits for it).
  FastCGIServer.blockStopSignals()
  let socket: ListenSocket
  do {
    if case .socket(let spec) = mode {
      socket = try ListenSocket.open(spec)
    } else {
      socket = try ListenSocket.inherited()
    }
  } catch {
    logger.error(error.description)
    exit(1)
  }
  // Every parked long poll holds a socket: take every descriptor the hard limit allows.
  let descriptors = OpenFileLimit.raiseToHardLimit()
  if settings.maxParked > 0 && descriptors < settings.maxParked + settings.workers + 64 {
    logger.warn(
      "the open-file limit is below what maxParked needs; long polls past it are refused at accept",
      ["limit": String(descriptors), "maxParked": String(settings.maxParked)])
  }
  var databases: [Database] = []
  let schemaVersion: Int
  let wakeSource: SyncWatch?
  do {
    let first = try openDatabase()
    schemaVersion = try first.migrate()
    databases.append(first)
    while databases.count < settings.workers { databases.append(try openDatabase()) }
    wakeSource =
      settings.maxParked > 0
      ? try SyncWatch(database: try openDatabase(), wakeSocket: bindLongPollWakeSocket()) { [logger] error in
        logger.error("cannot read what woke long polls", ["error": error])
      } : nil
  } catch {
    logger.error("cannot open the database", ["database": settings.database, "error": error.description])
    socket.close()
    exit(1)
  }
  // The file watch: a database file deleted or replaced under the responder ends it at once (inotify, `PathWatch`;
  // a look every `fileWatchFallbackMs` besides, where inotify sees nothing), without touching the file or its
  // write-ahead log (every request checks it too and answers 503), so the supervisor starts it again on the file
  // the path names. It sleeps while nothing happens to the file: no wake-up at idle.
  if let opened = databases.first?.openedIdentity {
    let path = settings.database
    let watch = PathWatch(path: path)
    _ = try? startThread(name: "file-watch") {
      while true {
        _ = watch.wait(timeoutMs: fileWatchFallbackMs)
        if let change = DatabaseFileChange.classify(
          opened: opened, current: DatabaseFileChange.Identity.of(path: path), sqliteSaysMoved: false)
        {
          logger.error(
            "\(change) under the running responder; exiting so that the service restarts on the file the path"
              + " names", ["database": path])
          _exit(1)
        }
      }
    }
  }
  logger.info(
    "aprs-cloud-fcgi started",
    [
      "mode": socket.kind.rawValue, "listen": socket.address, "workers": String(settings.workers),
      "database": settings.database, "schemaVersion": String(schemaVersion), "pid": String(getpid()),
      "maxParked": String(settings.maxParked), "maxParkedPerStation": String(settings.maxParkedPerStation),
      "maxParkedPerAddress": String(settings.maxParkedPerAddress), "openFiles": String(descriptors),
    ])
  let stoppedBySignal: Bool
  do {
    let server = try FastCGIServer(
      socket: socket, bodyLimit: settings.maxBody, logger: logger,
      parking: ParkingOptions(
        maxParked: settings.maxParked, maxParkedPerKey: settings.maxParkedPerStation,
        maxParkedPerGroup: settings.maxParkedPerAddress,
        deadlineTickMs: ParkingOptions.responderDeadlineTickMs,
        source: wakeSource))
    requestMetrics.countParked { server.parkedCount }
    try server.stopOnSignals()
    let responders = databases.map(makeResponder)
    if settings.maxParked > 0 {
      stoppedBySignal = try server.run(
        workers: responders.map { WorkerHandlers(handle: $0.handle, resume: $0.resume) })
    } else {
      stoppedBySignal = try server.run(handlers: responders.map { $0.handle })
    }
  } catch {
    logger.error(error.description)
    exit(1)
  }
  socket.close()
  for database in databases { database.close() }
  wakeSource?.close()
  if stoppedBySignal {
    logger.info("aprs-cloud-fcgi stopped")
    exit(0)
  }
  logger.error("aprs-cloud-fcgi stopped: every worker gave up")
  exit(1)
}
