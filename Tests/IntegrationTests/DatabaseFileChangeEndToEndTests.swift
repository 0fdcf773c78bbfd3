import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The database file deleted, and replaced, under the running daemons of `aprs-cloud up` (docs/design.md "Faults"):
/// both notice within a second or two, ACK nothing more, and exit; `up` starts them again on the file the path
/// names. A deleted file is put back by the listener (a copy of what it held), so nothing ACKed is lost; a
/// replaced one is left as the operator put it, never mixed with the old file's write-ahead log, and the old
/// file's content is kept beside it.
@Suite struct DatabaseFileChangeEndToEndTests {
  static let station = "OH7LZB"

  /// `aprs-cloud up` on a fresh data directory with the station registered, and the fake.
  private final class Running {
    let fake: FakeAPRSIS
    let directory: String
    let database: SQLiteFile
    let httpPort: Int
    let logPath: String
    let up: Process

    init() throws {
      fake = try FakeAPRSIS()
      try fake.command(["cmd": "set", "dup_window": 0.5])
      directory = try makeTemporaryDirectory("filechange")
      let data = directory + "/var"
      mkdir(data, 0o750)
      database = SQLiteFile(path: data + "/aprs-cloud.sqlite")
      let migrated = try runProcess(
        try TestPaths.executable("aprs-cloud"), ["migrate", "--db", database.path])
      try #require(migrated.status == 0, "\(migrated.stderrText)")
      try database.register([DatabaseFileChangeEndToEndTests.station], ackMessages: true)
      let config = directory + "/aprs-cloud.ini"
      try """
      [aprsis]
      servers = 127.0.0.1:\(fake.port)
      login = N0CALL-10
      passcode = 13023
      reconnectDelay = 100ms
      maxReconnectDelay = 1s

      [listener]
      ackInterval = 300ms
      publishInterval = 200ms
      registrationPoll = 100ms

      [messaging.webpush]
      enabled = false

      [server]
      logLevel = info

      """.write(toFile: config, atomically: true, encoding: .utf8)
      httpPort = try freePort()
      logPath = directory + "/up.log"
      up = try TestStack.launch(
        try TestPaths.executable("aprs-cloud"),
        [
          "up", "--http", "127.0.0.1:\(httpPort)", "--metrics", "127.0.0.1:\(try freePort())", "--data", data,
          "--nginx-dir", TestPaths.nginxDirectory, "--config", config,
        ], output: logPath)
      try #require(try fake.wait("login", count: 1, timeout: 30), "no login:\n\(log)")
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
    var baseURL: String { "http://127.0.0.1:\(httpPort)" }

    func pids(_ name: String) -> [Int32] {
      ProcessTable.children(of: up.processIdentifier).filter { ProcessTable.name(of: $0) == name }
    }

    func stop() {
      TestStack.terminate(up)
      fake.stop()
      if ProcessInfo.processInfo.environment["APRS_CLOUD_KEEP_TEST_DIRS"] == nil {
        try? FileManager.default.removeItem(atPath: directory)
      }
    }
  }

  /// Waits for both daemons to be replaced by new processes and the new listener to be on air.
  private func waitForRestart(_ running: Running, listener: Int32, responder: Int32) throws -> Double {
    let since = Date()
    let back = try waitUntil(timeout: 30, interval: 0.05) {
      let listeners = running.pids("aprs-listener")
      let responders = running.pids("aprs-cloud-fcgi")
      guard listeners.count == 1, listeners[0] != listener, responders.count == 1, responders[0] != responder
      else { return false }
      return try running.fake.clients().contains { $0.bool("logged_in") == true }
        && healthOf(running.baseURL).status == 200
    }
    try #require(back, "not back:\n\(running.log)")
    return Date().timeIntervalSince(since)
  }

  @Test(.hangGuard)
  func aDeletedDatabaseIsPutBackAndLosesNothing() throws {
    let running = try Running()
    defer { running.stop() }
    let senders = RetransmittingSenders(fake: running.fake, stations: [Self.station])
    senders.add(5)
    try #require(try senders.pump(timeout: 20) { senders.allAcked }, "\(running.log)")
    let listener = try #require(running.pids("aprs-listener").first)
    let responder = try #require(running.pids("aprs-cloud-fcgi").first)

    #expect(unlink(running.database.path) == 0)
    let deletedAt = Date()
    senders.add(5)
    var healthDuring: Set<String> = []
    let noticed = try senders.pump(timeout: 10) {
      let health = healthOf(running.baseURL)
      healthDuring.insert("\(health.status) \(health.error ?? "ok")")
      return running.log.contains("the database file was deleted under the running listener")
    }
    #expect(noticed, "\(running.log)")
    let noticedSeconds = Date().timeIntervalSince(deletedAt)
    let restartSeconds = try waitForRestart(running, listener: listener, responder: responder)
    #expect(running.log.contains("the deleted database file was copied back into place"), "\(running.log)")
    #expect(try senders.pump(timeout: 30) { senders.allAcked }, "\(running.log)")
    let report = try senders.report(running.database)
    #expect(report.lost.isEmpty && report.duplicates == 0 && report.stored.count == 10, "\(report.text)")
    #expect(try running.database.int("SELECT count(*) FROM stations WHERE address = '\(Self.station)'") == 1)
    #expect(
      try running.database.run("PRAGMA integrity_check;").trimmingCharacters(in: .whitespacesAndNewlines)
        == "ok")
    print(
      "database deleted under running daemons: \(report.text); noticed after"
        + " \(String(format: "%.1f", noticedSeconds)) s, both back on the put-back file"
        + " \(String(format: "%.1f", restartSeconds)) s later; /health meanwhile: \(healthDuring.sorted())")
  }

  @Test(.hangGuard)
  func aReplacedDatabaseIsUsedAsItIsAndTheOldOneKept() throws {
    let running = try Running()
    defer { running.stop() }
    let senders = RetransmittingSenders(fake: running.fake, stations: [Self.station])
    senders.add(3)
    try #require(try senders.pump(timeout: 20) { senders.allAcked }, "\(running.log)")
    let backup = running.directory + "/backup.sqlite"
    _ = try running.database.run(".backup '\(backup)'")
    senders.add(3)
    try #require(try senders.pump(timeout: 20) { senders.allAcked }, "\(running.log)")
    let listener = try #require(running.pids("aprs-listener").first)
    let responder = try #require(running.pids("aprs-cloud-fcgi").first)

    // An operator puts the backup in place without stopping the server first.
    #expect(rename(backup, running.database.path) == 0)
    let replacedAt = Date()
    var healthDuring: Set<String> = []
    let noticed = waitUntil(timeout: 10, interval: 0.05) {
      let health = healthOf(running.baseURL)
      healthDuring.insert("\(health.status) \(health.error ?? "ok")")
      return running.log.contains("the database file was replaced by another file under the running listener")
    }
    #expect(noticed, "\(running.log)")
    let noticedSeconds = Date().timeIntervalSince(replacedAt)
    let restartSeconds = try waitForRestart(running, listener: listener, responder: responder)
    senders.add(3)
    #expect(try senders.pump(timeout: 30) { senders.allAcked }, "\(running.log)")
    // The backup's 3 and the 3 that came after the restart: nothing of the old file's log mixed in.
    let report = try senders.report(running.database)
    #expect(report.stored == ["1", "2", "3", "7", "8", "9"], "\(report.text)")
    #expect(report.duplicates == 0)
    #expect(
      try running.database.run("PRAGMA integrity_check;").trimmingCharacters(in: .whitespacesAndNewlines)
        == "ok")
    // What the old file held (all 6 stored before the replacement) is kept beside it.
    let folder = (running.database.path as NSString).deletingLastPathComponent
    let rescued = try FileManager.default.contentsOfDirectory(atPath: folder).filter {
      $0.hasPrefix("aprs-cloud.sqlite.rescued-")
    }
    let listing = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    try #require(rescued.count == 1, "\(listing)")
    let old = SQLiteFile(path: folder + "/" + rescued[0])
    #expect(try old.int("SELECT count(*) FROM messages WHERE station = '\(Self.station)'") == 6)
    print(
      "database replaced under running daemons: \(report.text) (4-6, ACKed after the backup was taken, are in"
        + " \(rescued[0])); noticed after \(String(format: "%.1f", noticedSeconds)) s, both back on the new file"
        + " \(String(format: "%.1f", restartSeconds)) s later; /health meanwhile: \(healthDuring.sorted())")
  }
}
