import Platform
import Store

#if canImport(Glibc)
  import Glibc
#endif

/// `aprs-cloud backup --db PATH OUT`: an online backup, checked, then moved into place.
enum BackupCommand: Command {
  static let name = "backup"
  static let summary = "copy the database while the server runs, and check the copy"
  static let usage = """
    usage: aprs-cloud backup --db PATH [--config FILE] OUT

    Copies the database to the file OUT with SQLite's online backup API: safe
    while the responder and the listener run (neither is stopped or slowed
    for long), and consistent: the copy holds every transaction committed
    before the backup started. The copy is written beside OUT first, checked
    with `PRAGMA integrity_check`, and only then renamed to OUT (an existing
    OUT is replaced, so a failed backup never destroys the previous one).
    Prints the size, what the copy holds and the check's result.

    To restore: stop both services, remove the database's -wal and -shm files,
    copy the backup over the database, start them again (see docs/operating.md, "Backup and restore").

    Exit status 0 when the copy is in place and passed the check, 1 when the
    backup or the check failed (nothing is left at OUT then, or the previous
    file is unchanged).

    options:
      --db PATH       the SQLite database (default: [server] database of --config)
      --config FILE   the INI configuration
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    runReporting(name, usage: usage) { () throws(CommandFailure) -> ExitStatus in
      let parsed = try parseArguments(arguments, options: ["db", "config"])
      guard parsed.positionals.count == 1 else {
        throw CommandFailure(
          parsed.positionals.isEmpty ? "OUT is missing" : "only one OUT, please", usage: true)
      }
      let output = parsed.positionals[0]
      let settings = try OperatorSettings.load(parsed)
      var info = stat()
      if stat(output, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
        throw CommandFailure("\(output) is a directory; give the backup's file name")
      }
      if sameFile(output, settings.database) {
        throw CommandFailure("\(output) is the database itself")
      }
      // The copy holds push tokens: 0600 unless its folder is group-shared (FileModes).
      FileModes.applyUmask(forFilesIn: FileModes.folder(of: output))
      let temporary = output + ".tmp-\(getpid())"
      for suffix in ["", "-journal", "-wal", "-shm"] { unlink(temporary + suffix) }

      let started = epochMilliseconds()
      let database = try settings.openReadOnly(checkSchema: false)
      let result: BackupResult
      do throws(StoreError) {
        result = try database.backup(to: temporary)
      } catch {
        closeInspected(database)
        throw CommandFailure("backup of \(settings.database) failed: \(error)")
      }
      closeInspected(database)

      // The check, on the copy alone; what it holds is only shown (an older or newer schema may
      // not have every table this build counts).
      let check: String
      var holds: String
      do throws(StoreError) {
        let copy = try Database(path: temporary, options: StoreOptions(readOnly: true))
        defer { copy.close() }
        check = try copy.integrityCheck()
        holds = "schema \(try copy.schemaVersion())"
        if let counts = try? copy.stats(now: started, expiryMs: settings.stationExpiryMs) {
          holds +=
            ", \(counts.stations) stations, \(counts.devices.values.reduce(0) { $0 + $1.total }) devices, "
            + "\(counts.totalMessages) messages"
        }
      } catch {
        remove(temporary)
        throw CommandFailure("cannot check the backup: \(error)")
      }
      guard check == "ok" else {
        remove(temporary)
        throw CommandFailure(
          "the backup failed PRAGMA integrity_check (nothing written to \(output)):\n\(check)")
      }
      guard syncFile(temporary), rename(temporary, output) == 0 else {
        let reason = String(cString: strerror(errno))
        remove(temporary)
        throw CommandFailure("cannot move the backup to \(output): \(reason)")
      }
      syncDirectory(of: output)
      let elapsed = epochMilliseconds() - started
      print("backup: \(output)")
      print("size: \(Format.bytes(result.bytes)) (\(result.pages) pages) in \(elapsed) ms")
      print("holds: \(holds)")
      print("integrity_check: \(check)")
      return .success
    }
  }

  /// Whether two paths name the same existing file.
  static func sameFile(_ first: String, _ second: String) -> Bool {
    var a = stat()
    var b = stat()
    guard stat(first, &a) == 0, stat(second, &b) == 0 else { return false }
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino
  }

  /// Removes a file and whatever SQLite left beside it.
  private static func remove(_ path: String) {
    for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
  }

  /// `fsync(2)` of a file's contents; false when it cannot be opened or synced.
  private static func syncFile(_ path: String) -> Bool {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return fsync(fd) == 0
  }

  /// `fsync(2)` of the directory holding `path`, so the rename survives a crash.
  private static func syncDirectory(of path: String) {
    let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
    let fd = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { return }
    _ = fsync(fd)
    close(fd)
  }
}
