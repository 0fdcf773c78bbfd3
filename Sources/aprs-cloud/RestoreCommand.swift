import CompanionFiles
import Config
import Platform
import Store

#if canImport(Glibc)
  import Glibc
#endif

/// `aprs-cloud restore --config FILE --data DIR`: the database back from its Litestream replica, on
/// a new machine after the old one was lost.
enum RestoreCommand: Command {
  static let name = "restore"
  static let summary = "bring the database back from its replica (after losing the machine)"
  static let usage = """
    usage: aprs-cloud restore [--config FILE] [--data DIR | --db PATH] [--force]

    Restores the database from the replica that [replication] in FILE names
    (with Litestream, as `aprs-cloud up` or `replicate` wrote it) into
    DIR/aprs-cloud.sqlite, the file `aprs-cloud up --data DIR` uses (or into
    PATH, or else into [server] database of FILE). The copy is written
    beside the target first, checked with PRAGMA integrity_check and for a
    schema this build can run, and the lost machine's listener lease is
    cleared in it, so the new listener goes on air at once; only then is it
    renamed into place. Start the server on it next (`aprs-cloud up --data
    DIR --config FILE`, or the services); replication then continues into
    the same replica.

    The replica holds every commit up to about [replication] syncInterval
    before the loss. Message timestamps after the restore stay above every
    one served before it as long as the clock is right (NTP), so phones
    whose cursor is ahead of the restored database miss nothing new.

    Refuses (exit 1, touching nothing) when a database is already there,
    unless --force; with --force it replaces it (and its -wal, -shm and
    Litestream state), but never while a listener or a FastCGI responder
    runs on the database (even one whose lease lapsed: they hold
    <database>.users), a listener holds its lease, or an `aprs-cloud up`
    runs on DIR. Exit status 0 when the database is in place.

    options:
      --config FILE   the INI configuration (default: $APRS_CLOUD_CONFIG)
      --data DIR      the data directory: restore into DIR/aprs-cloud.sqlite
      --db PATH       restore into PATH instead
      --force         replace an existing database
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    runReporting(name, usage: usage) { () throws(CommandFailure) -> ExitStatus in
      let parsed = try parseArguments(arguments, options: ["config", "data", "db"], flags: ["force"])
      guard parsed.positionals.isEmpty else {
        throw CommandFailure("unexpected argument '\(parsed.positionals[0])'", usage: true)
      }
      if parsed.options["data"] != nil && parsed.options["db"] != nil {
        throw CommandFailure("give --data DIR or --db PATH, not both", usage: true)
      }
      let config = try ReplicationSetup.loadConfig(parsed.options["config"])
      let replication = try ReplicationSetup.settings(config)
      guard replication.isEnabled, let url = replication.url else {
        throw CommandFailure("no replica to restore from: [replication] url is not set")
      }
      let server: ServerConfig
      do throws(ConfigError) {
        server = try ServerConfig(config)
      } catch {
        throw CommandFailure(error.description)
      }
      let target: String
      if let data = parsed.options["data"] {
        target = NginxFiles.absolute(data) + "/aprs-cloud.sqlite"
      } else {
        target = NginxFiles.absolute(parsed.options["db"] ?? server.database)
      }
      let restore = Restore(
        target: target, force: parsed.options["force"] != nil, replication: replication,
        litestreamConfig: ReplicationSetup.litestreamConfig(
          database: target, replication: replication, config: config),
        busyTimeoutMs: Int32(clamping: server.busyTimeoutMs), ringSize: server.ringSize,
        expiryMs: server.stationExpiryMs)
      let summary = try restore.run()
      print("restored: \(target) from \(url)")
      print(summary)
      return .success
    }
  }
}

/// One restore, step by step (see `RestoreCommand.usage`).
private struct Restore {
  let target: String
  let force: Bool
  let replication: ReplicationConfig
  let litestreamConfig: LitestreamConfig
  let busyTimeoutMs: Int32
  let ringSize: Int
  let expiryMs: Int64

  var directory: String { NginxFiles.parent(of: target) }

  /// Restores, checks, clears the lease, moves the copy into place; returns the lines to print.
  func run() throws(CommandFailure) -> String {
    let existing = ["", "-wal"].map { target + $0 }.filter { exists($0) }
    if !existing.isEmpty && !force {
      throw CommandFailure(
        "\(existing[0]) exists; nothing was changed (--force replaces it, after the server is stopped)")
    }
    let litestream = try ReplicationSetup.findLitestream(replication)
    try makeDirectory(directory)
    let upLock = try lockAgainstUp()
    defer { if let upLock { close(upLock) } }
    // Held until the copy is in place: no daemon runs on the database meanwhile (they wait for it).
    let users = try lockAgainstDaemons()
    defer { users.close() }
    if !existing.isEmpty { try checkNoListener() }

    let pid = getpid()
    let copy = target + ".restore-\(pid)"
    let configFile = directory + "/.litestream-restore-\(pid).yml"
    removeDatabaseFiles(copy)
    defer {
      removeDatabaseFiles(copy)
      unlink(configFile)
    }
    try ReplicationSetup.writePrivateFile(litestreamConfig.yaml, to: configFile)
    let arguments = [
      "restore", "-config", configFile, "-no-expand-env", "-o", copy, litestreamConfig.database,
    ]
    switch UpProcess.run(litestream, arguments) {
    case .success(.exited(0)):
      break
    case .success(let status):
      throw CommandFailure(
        "litestream restore failed (\(status)); see its messages above. Nothing was changed.")
    case .failure(let error):
      throw CommandFailure("cannot run \(litestream): \(error)")
    }
    guard exists(copy) else {
      throw CommandFailure("litestream restore wrote no database; nothing was changed")
    }
    let summary = try check(copy)

    // The old database's files and Litestream's state of it go; the copy takes their place.
    removeDatabaseFiles(target)
    try ReplicationSetup.removeTree(ReplicationSetup.stateDirectory(of: target))
    _ = chmod(copy, 0o660)
    guard syncFile(copy), rename(copy, target) == 0 else {
      throw CommandFailure(
        "cannot move the restored database to \(target): \(String(cString: strerror(errno)))")
    }
    syncDirectory(directory)
    return summary
  }

  /// Integrity, schema, what it holds; clears the listener lease; checkpoints so the copy is one file.
  private func check(_ path: String) throws(CommandFailure) -> String {
    do {
      let database = try Database(
        path: path, options: StoreOptions(busyTimeoutMs: busyTimeoutMs, ringSize: ringSize))
      defer { database.close() }
      let integrity = try database.integrityCheck()
      guard integrity == "ok" else {
        throw CommandFailure(
          "the restored database failed PRAGMA integrity_check; nothing was changed:\n\(integrity)")
      }
      let schema = try database.schemaVersion()
      let latest = Database.latestSchemaVersion
      guard schema <= latest else {
        throw CommandFailure(
          "the restored database has schema \(schema), newer than this build's \(latest): "
            + "install the newer aprs-cloud first; nothing was changed")
      }
      guard schema > 0 else { throw CommandFailure("the restored file is not an aprs-cloud database") }
      var lines = ["integrity_check: ok"]
      lines.append(
        "schema: \(schema)" + (schema < latest ? " (migrated to \(latest) when the server starts)" : ""))
      let now = epochMilliseconds()
      if schema == latest, let stats = try? database.stats(now: now, expiryMs: expiryMs) {
        let devices = stats.devices.values.reduce(0) { $0 + $1.total }
        var holds = "holds: \(stats.stations) stations, \(devices) devices, \(stats.totalMessages) messages"
        if stats.lastMessageTimestamp > 0 {
          holds += " (newest \(Format.timeAndAge(stats.lastMessageTimestamp, now: now)))"
        }
        lines.append(holds)
      }
      if let lease = try database.clearListenerLease() {
        lines.append(
          "listener lease: cleared (held by \(Format.printable(lease.holder)) on the lost machine)")
      } else {
        lines.append("listener lease: none")
      }
      let checkpoint = try database.checkpoint(mode: .truncate)
      if checkpoint.busy { throw CommandFailure("cannot checkpoint the restored database (busy)") }
      return lines.joined(separator: "\n")
    } catch let error as CommandFailure {
      throw error
    } catch {
      throw CommandFailure("cannot check the restored database: \(error)")
    }
  }

  /// With --force over an existing database: no listener may be using it.
  private func checkNoListener() throws(CommandFailure) {
    guard exists(target) else { return }
    do {
      let database = try Database(
        path: target, options: StoreOptions(busyTimeoutMs: busyTimeoutMs, ringSize: ringSize, readOnly: true))
      defer { database.close() }
      if let lease = try database.lease(), lease.expiresAt > epochMilliseconds() {
        throw CommandFailure(
          "a listener (\(Format.printable(lease.holder))) holds the lease of \(target): stop the server first; "
            + "nothing was changed")
      }
    } catch let error as CommandFailure {
      throw error
    } catch {
      // An unreadable old database is what --force is for.
      return
    }
  }

  /// Holds the database's users file (``CompanionFiles/DatabaseUsers``) exclusively; refuses while a listener or a FastCGI
  /// responder runs on the database (they hold it shared for as long as they run, even one whose lease lapsed).
  private func lockAgainstDaemons() throws(CommandFailure) -> DatabaseUsers {
    let users: DatabaseUsers?
    do throws(FileLockError) {
      users = try DatabaseUsers.lockExclusive(databasePath: target)
    } catch {
      throw CommandFailure("cannot lock \(error.path): \(error.description)")
    }
    guard let users else {
      throw CommandFailure(
        "aprs-listener or aprs-cloud-fcgi runs on \(target) (they hold \(DatabaseUsers.path(forDatabase: target))):"
          + " stop the server first; nothing was changed")
    }
    return users
  }

  /// Holds `up.lock` of the directory when it exists, so no `aprs-cloud up` starts on it meanwhile;
  /// refuses when one runs.
  private func lockAgainstUp() throws(CommandFailure) -> Int32? {
    let path = directory + "/up.lock"
    guard exists(path) else { return nil }
    let fd = open(path, O_RDWR | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
      close(fd)
      throw CommandFailure("an `aprs-cloud up` runs with the data directory \(directory); stop it first")
    }
    return fd
  }

  private func makeDirectory(_ path: String) throws(CommandFailure) {
    var current = ""
    for part in path.split(separator: "/") {
      current += "/" + part
      if NginxFiles.isDirectory(current) { continue }
      guard mkdir(current, 0o750) == 0 || errno == EEXIST else {
        throw CommandFailure("cannot create \(current): \(String(cString: strerror(errno)))")
      }
    }
  }

  private func exists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
  }

  private func removeDatabaseFiles(_ path: String) {
    for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
  }

  private func syncFile(_ path: String) -> Bool {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return fsync(fd) == 0
  }

  private func syncDirectory(_ path: String) {
    let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { return }
    _ = fsync(fd)
    close(fd)
  }
}
