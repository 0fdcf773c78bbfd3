import Config
import Platform
import Store

#if canImport(Glibc)
  import Glibc
#endif

/// `aprs-cloud up`: the whole stack on one machine, supervised.
enum UpCommand: Command {
  static let name = "up"
  static let summary = "run the whole stack locally (nginx, responder, listener, database) until Ctrl-C"
  static let usage = """
    usage: aprs-cloud up [--http HOST:PORT] [--metrics HOST:PORT] [--data DIR] [--config FILE]
                         [--nginx-dir DIR]

    Runs the whole server on this machine for trying it out or developing it:
    creates DIR, applies the database migrations to DIR/aprs-cloud.sqlite,
    writes DIR/nginx.conf from nginx/local.conf.template, starts the responder
    (aprs-cloud-fcgi, found beside this executable) on DIR/fcgi.sock, nginx
    on HOST:PORT and the listener (aprs-listener: APRS-IS as [aprsis] in the
    config says; without a login and passcode it runs receive-only), waits
    until /health answers and prints the URL, the private metrics URL
    (http://127.0.0.1:9180/metrics by default) and curl examples. With
    [replication] url in the config it also runs Litestream (configured in
    DIR/litestream.yml, written from the config). A child that dies after
    running 5 s or more is restarted at once; one that keeps dying sooner backs
    off (0.5 s, doubling up to 10 s). Ctrl-C or SIGTERM stops everything and
    exits 0. No root needed; nginx's logs are DIR/nginx-error.log and
    DIR/nginx-access.log. Files in DIR are created 0600 (0660 when DIR is
    set-group-id and group-writable).

    Without --config (and $APRS_CLOUD_CONFIG) both processes get
    DIR/aprs-cloud.ini. The first run writes it: Web Push on with a contact
    made from your user and host name (mailto:USER@HOST: fine for a browser
    on localhost; change it to one the push services can reach), every other
    section commented out as an example. A configuration the listener would
    refuse stops `up` at once with the listener's message.

    options:
      --http HOST:PORT     where nginx listens (default 127.0.0.1:8080)
      --metrics HOST:PORT  where nginx serves /metrics, a loopback address only
                           (default 127.0.0.1:9180; the --http server answers it 404)
      --data DIR           the data directory (default ./var)
      --config FILE        the INI configuration passed to the responder and the
                           listener (default: $APRS_CLOUD_CONFIG, else DIR/aprs-cloud.ini)
      --nginx-dir DIR      the folder with the nginx templates (see `nginx-config --help`)

    environment:
      APRS_CLOUD_NGINX      the nginx executable (default: nginx from $PATH or /usr/sbin)
      APRS_CLOUD_NGINX_DIR  the folder with the nginx templates
      APRS_CLOUD_UP_CRASH_LOOP_WINDOW  seconds a child must run to be restarted
                            at once (default 5; tests shorten it)
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    let parsed: Arguments
    let listen: UpListenAddress
    let metrics: UpListenAddress
    var policy = UpSupervisor.Policy()
    do {
      parsed = try Arguments(arguments, options: ["http", "metrics", "data", "config", "nginx-dir"])
      guard parsed.positionals.isEmpty else {
        throw UsageError("unexpected argument '\(parsed.positionals[0])'")
      }
      listen = try UpListenAddress(parsing: parsed.options["http"] ?? "127.0.0.1:8080")
      metrics = try UpListenAddress(
        parsingMetrics: parsed.options["metrics"] ?? UpListenAddress.defaultMetrics)
      guard metrics.port != listen.port else {
        throw UsageError("--metrics needs a port of its own, not \(listen.port) as --http's")
      }
      if let window = getenv("APRS_CLOUD_UP_CRASH_LOOP_WINDOW").map({ String(cString: $0) }) {
        guard let seconds = Double(window), seconds >= 0, seconds.isFinite else {
          throw UsageError("APRS_CLOUD_UP_CRASH_LOOP_WINDOW must be a number of seconds (got '\(window)')")
        }
        policy.crashLoopWindow = seconds
      }
    } catch {
      printError("aprs-cloud up: \(error)\n\n\(usage)")
      return .usage
    }
    do throws(UpError) {
      let plan = try UpPlan.prepare(
        listen: listen, metrics: metrics, data: parsed.options["data"] ?? "./var",
        config: parsed.options["config"],
        nginxDirectory: parsed.options["nginx-dir"])
      if let contact = plan.starterContact {
        _ = Platform.writeAll(
          1,
          Array(
            """
            aprs-cloud up: wrote a starter configuration to \(plan.configPath) (Web Push contact \
            \(contact): change it to an address push services can reach; see the comments in the file)

            """.utf8))
      }
      return UpRunner(plan: plan, policy: policy).run()
    } catch {
      printError("aprs-cloud up: \(error)")
      return .failure
    }
  }
}

/// One supervised program.
struct UpChild {
  var name: String
  var path: String
  var arguments: [String]
  /// A unix socket the child listens on: removed before each start if an earlier run left it.
  var socket: String?
}

/// Everything `up` resolved and prepared before starting children.
struct UpPlan {
  var listen: UpListenAddress
  /// The private `/metrics` listener (loopback).
  var metrics: UpListenAddress
  var dataDirectory: String
  /// The configuration both processes get (`--config FILE`): `--config`, `$APRS_CLOUD_CONFIG`, or
  /// `DIR/aprs-cloud.ini` (`UpStarterConfig`).
  var configPath: String
  /// The Web Push contact of the starter `up` wrote to `configPath` on this run; nil when it wrote none.
  var starterContact: String?
  var children: [UpChild]

  /// Finds the programs, checks the port, creates the data directory, migrates the database, writes
  /// and checks the nginx configuration. Every failure is a sentence for the operator.
  static func prepare(
    listen: UpListenAddress, metrics: UpListenAddress, data: String, config: String?, nginxDirectory: String?
  ) throws(UpError) -> UpPlan {
    let nginx: String
    if let variable = getenv("APRS_CLOUD_NGINX").map({ String(cString: $0) }), !variable.isEmpty {
      guard access(variable, X_OK) == 0 else {
        throw UpError("APRS_CLOUD_NGINX: no nginx executable at \(variable)")
      }
      nginx = variable
    } else {
      guard
        let found = UpProcess.findExecutable(
          "nginx", extraDirectories: ["/usr/sbin", "/usr/local/sbin", "/usr/local/nginx/sbin"])
      else {
        throw UpError(
          "nginx is not installed (looked in $PATH and /usr/sbin); on Debian or Ubuntu: "
            + "`apt-get install nginx-light` (or `make deps`)")
      }
      nginx = found
    }
    guard let executable = UpProcess.executablePath() else {
      throw UpError("cannot find this executable's path (/proc/self/exe)")
    }
    let binaries = NginxFiles.parent(of: executable)
    let responder = binaries + "/aprs-cloud-fcgi"
    guard access(responder, X_OK) == 0 else {
      throw UpError("the responder \(responder) is missing; build it beside aprs-cloud (`swift build`)")
    }
    let nginxFolder = try NginxFiles.findDirectory(explicit: nginxDirectory)
    // The configuration: --config, else $APRS_CLOUD_CONFIG, else the data directory's own (written below).
    let environment = ConfigFile.processEnvironment()
    let named = config ?? environment[ConfigFile.configPathVariable].flatMap { $0.isEmpty ? nil : $0 }
    if let named {
      guard NginxFiles.isFile(named), access(named, R_OK) == 0 else {
        throw UpError("\(config == nil ? ConfigFile.configPathVariable : "--config"): cannot read \(named)")
      }
    }
    try UpNetwork.checkAvailable(listen)
    try UpNetwork.checkAvailable(metrics, flag: "--metrics")

    // The database, nginx's config and logs: 0600 unless DIR is group-shared (FileModes).
    FileModes.applyUmask(forFilesIn: NginxFiles.absolute(data))
    let directory = try makeDataDirectory(data)
    try lock(directory)
    let database = directory + "/aprs-cloud.sqlite"
    let configPath: String
    var starterContact: String?
    if let named {
      configPath = NginxFiles.absolute(named)
    } else {
      configPath = directory + "/" + UpStarterConfig.fileName
      starterContact = try UpStarterConfig.writeIfMissing(configPath)
    }
    try checkListenerConfig(configPath, database: database, environment: environment)
    try migrate(database)
    let replication = try replicationChild(config: configPath, database: database, directory: directory)
    let configArguments = ["--config", configPath]

    let socket = directory + "/fcgi.sock"
    let nginxConfig = directory + "/nginx.conf"
    let errorLog = directory + "/nginx-error.log"
    let local = NginxLocalConfig(
      listen: listen, metrics: metrics, prefix: directory, socket: socket, nginxDirectory: nginxFolder,
      rootUser: NginxLocalConfig.currentRootUser())
    let template = try NginxFiles.read(nginxFolder + "/" + NginxLocalConfig.templateName)
    try NginxFiles.write(try local.render(template), to: nginxConfig)
    let nginxArguments = ["-p", directory + "/", "-c", nginxConfig, "-e", errorLog]
    switch UpProcess.run(nginx, ["-q", "-t"] + nginxArguments) {
    case .success(.exited(0)):
      break
    case .success(let status):
      throw UpError("nginx refused \(nginxConfig) (nginx -t: \(status)); see the messages above")
    case .failure(let error):
      throw UpError("cannot run nginx: \(error)")
    }

    let children = [
      UpChild(
        name: "aprs-cloud-fcgi", path: responder,
        arguments: ["--listen", socket, "--db", database] + configArguments, socket: socket),
      UpChild(name: "nginx", path: nginx, arguments: nginxArguments),
      UpChild(
        name: "aprs-listener", path: binaries + "/aprs-listener",
        arguments: ["--db", database] + configArguments),
    ]
    return UpPlan(
      listen: listen, metrics: metrics, dataDirectory: directory, configPath: configPath,
      starterContact: starterContact, children: children + [replication].compactMap { $0 })
  }

  /// Reads the listener's settings and its push settings from `path` as the listener will (the environment's
  /// overrides, `--db database`), so that a configuration it would refuse stops `up` at once with the
  /// listener's own message instead of a listener restarted over and over.
  private static func checkListenerConfig(_ path: String, database: String, environment: [String: String])
    throws(UpError)
  {
    do throws(ConfigError) {
      var config = try ConfigFile.load(path: path, environment: environment)
      config.override("server", "database", database, source: "aprs-cloud up --data")
      _ = try ListenerConfig(config)
      _ = try PushConfig(config)
    } catch {
      throw UpError("the listener would not start: \(error.description)")
    }
  }

  /// Creates `path` and its parents; returns it absolute.
  private static func makeDataDirectory(_ path: String) throws(UpError) -> String {
    let absolute = NginxFiles.absolute(path)
    var current = ""
    for part in absolute.split(separator: "/") {
      current += "/" + part
      if NginxFiles.isDirectory(current) { continue }
      guard mkdir(current, 0o750) == 0 || errno == EEXIST else {
        throw UpError("cannot create the data directory \(current): \(String(cString: strerror(errno)))")
      }
    }
    guard NginxFiles.isDirectory(absolute) else { throw UpError("\(absolute) is not a directory") }
    return NginxFiles.absolute(absolute)
  }

  /// One `up` per data directory: an exclusive lock held (by a deliberately kept descriptor) until exit.
  private static func lock(_ directory: String) throws(UpError) {
    let path = directory + "/up.lock"
    let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o640)
    guard fd >= 0 else { throw UpError("cannot open \(path): \(String(cString: strerror(errno)))") }
    guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
      close(fd)
      throw UpError("another `aprs-cloud up` is running with the data directory \(directory)")
    }
  }

  private static func migrate(_ path: String) throws(UpError) {
    do {
      let database = try Database(path: path)
      defer { database.close() }
      _ = try database.migrate()
    } catch {
      throw UpError("cannot prepare the database \(path): \(error)")
    }
  }
}
