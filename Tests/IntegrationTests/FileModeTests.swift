import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The database, its `-wal` and `-shm` files and backups hold push tokens: every executable creates
/// them 0600 (0660 in a set-group-id folder, the VPS guide's shared group folder), whatever the
/// caller's umask. Each program here runs under Debian's usual umask 022.
@Suite final class FileModeTests {
  let directory: String

  init() throws {
    directory = try makeTemporaryDirectory("modes")
    // An ordinary, world-readable folder: only the umask decides the files' modes.
    chmod(directory, 0o755)
  }

  deinit { try? FileManager.default.removeItem(atPath: directory) }

  /// `program arguments` under umask 022 (the shell `exec`s it, so the pid is the program's).
  static func underUmask022(_ program: String, _ arguments: [String]) -> (String, [String]) {
    ("/bin/sh", ["-c", "umask 022; exec \"$0\" \"$@\"", program] + arguments)
  }

  /// Runs a program under umask 022 to the end.
  func run(_ program: String, _ arguments: [String], environment: [String: String]? = nil) throws
    -> ProcessOutput
  {
    let (shell, shellArguments) = Self.underUmask022(program, arguments)
    return try runProcess(shell, shellArguments, environment: environment)
  }

  /// Starts a long-running program under umask 022, its output in `log`.
  func start(_ program: String, _ arguments: [String], log: String) throws -> Process {
    let (shell, shellArguments) = Self.underUmask022(program, arguments)
    return try TestStack.launch(shell, shellArguments, output: log)
  }

  /// Waits until the database and its `-wal` and `-shm` files exist (a program holds it open).
  func waitForDatabaseFiles(_ database: String, _ process: Process, log: String) throws {
    let present = waitUntil(timeout: 20, interval: 0.02) {
      [database, database + "-wal", database + "-shm"].allSatisfy {
        FileManager.default.fileExists(atPath: $0)
      }
    }
    let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    try #require(present, "the database files did not appear:\n\(output)")
    try #require(process.isRunning, "\(output)")
  }

  func expectModes(_ paths: [String], _ mode: mode_t, sourceLocation: SourceLocation = #_sourceLocation) {
    for path in paths {
      let actual = fileMode(path)
      #expect(
        actual == mode,
        "\(path): \(actual.map { String($0, radix: 8) } ?? "missing"), not \(String(mode, radix: 8))",
        sourceLocation: sourceLocation)
    }
  }

  @Test func theResponderTheToolAndBackupsCreatePrivateFiles() throws {
    let database = directory + "/data/aprs-cloud.sqlite"
    let log = directory + "/responder.log"
    let responder = try start(
      try TestPaths.executable("aprs-cloud-fcgi"),
      ["--listen", directory + "/fcgi.sock", "--db", database], log: log)
    defer { TestStack.terminate(responder) }
    try waitForDatabaseFiles(database, responder, log: log)
    // The folder the responder created for its database is private too.
    expectModes([directory + "/data"], 0o700)
    expectModes([database, database + "-wal", database + "-shm"], 0o600)

    let backup = directory + "/aprs-cloud-backup.sqlite"
    let backedUp = try run(try TestPaths.executable("aprs-cloud"), ["backup", "--db", database, backup])
    #expect(backedUp.status == 0, "\(backedUp.stderrText)")
    expectModes([backup], 0o600)

    let migrated = directory + "/migrated.sqlite"
    let migrate = try run(try TestPaths.executable("aprs-cloud"), ["migrate", "--db", migrated])
    #expect(migrate.status == 0, "\(migrate.stderrText)")
    expectModes([migrated], 0o600)
  }

  @Test func theResponderAsCGICreatesAPrivateDatabase() throws {
    let database = directory + "/cgi.sqlite"
    let cgi = try run(
      try TestPaths.executable("aprs-cloud-fcgi"), ["--db", database],
      environment: [
        "GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "GET", "REQUEST_URI": "/health",
        "PATH": "/usr/bin:/bin",
      ])
    #expect(cgi.status == 0, "\(cgi.stderrText)")
    #expect(cgi.stdoutText.contains("Status: 200"), "\(cgi.stdoutText)")
    expectModes([database], 0o600)
  }

  @Test func theListenerCreatesPrivateFiles() throws {
    let database = directory + "/listener.sqlite"
    let config = directory + "/listener.ini"
    // APRS-IS on a port nothing listens on: the listener opens the database and keeps retrying.
    try "[aprsis]\nservers = 127.0.0.1:\(try freePort())\n[messaging.webpush]\nenabled = false\n".write(
      toFile: config, atomically: true, encoding: .utf8)
    let log = directory + "/listener.log"
    let listener = try start(
      try TestPaths.executable("aprs-listener"), ["--db", database, "--config", config], log: log)
    defer { TestStack.terminate(listener) }
    try waitForDatabaseFiles(database, listener, log: log)
    expectModes([database, database + "-wal", database + "-shm"], 0o600)
  }

  /// In a group-writable set-group-id folder (`install -d -m 2770`, the VPS guide's) files are 0660,
  /// so the other service's user in the group can open them; a backup into the guide's `2750` backup
  /// folder is 0640 (the group reads it), into an ordinary folder private again.
  @Test func aGroupSharedFolderGetsGroupReadableAndWritableFiles() throws {
    let shared = directory + "/shared"
    try #require(mkdir(shared, 0o700) == 0 && chmod(shared, 0o2770) == 0)
    let database = shared + "/aprs-cloud.sqlite"
    let log = directory + "/responder.log"
    let responder = try start(
      try TestPaths.executable("aprs-cloud-fcgi"),
      ["--listen", directory + "/fcgi.sock", "--db", database], log: log)
    defer { TestStack.terminate(responder) }
    try waitForDatabaseFiles(database, responder, log: log)
    expectModes([database, database + "-wal", database + "-shm"], 0o660)

    let cli = try TestPaths.executable("aprs-cloud")
    let sharedBackup = shared + "/backup.sqlite"
    #expect(try run(cli, ["backup", "--db", database, sharedBackup]).status == 0)
    expectModes([sharedBackup], 0o660)
    let backups = directory + "/backups"
    try #require(mkdir(backups, 0o700) == 0 && chmod(backups, 0o2750) == 0)
    let groupBackup = backups + "/backup.sqlite"
    #expect(try run(cli, ["backup", "--db", database, groupBackup]).status == 0)
    expectModes([groupBackup], 0o640)
    let privateBackup = directory + "/backup.sqlite"
    #expect(try run(cli, ["backup", "--db", database, privateBackup]).status == 0)
    expectModes([privateBackup], 0o600)
  }
}
