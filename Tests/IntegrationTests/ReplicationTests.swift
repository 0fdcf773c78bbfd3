import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Surviving the loss of the machine: `aprs-cloud up` runs Litestream beside the listener, the whole stack
/// is killed and its data directory deleted, `aprs-cloud restore` brings the database back from the
/// replica into a new directory and `up` carries on there.
@Suite(.serialized) struct ReplicationTests {
  /// A file replica (another disk, in production).
  @Test func aLostMachineComesBackFromAFileReplica() throws {
    let directory = try makeTemporaryDirectory("replication")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let section =
      "[replication]\nurl = file://\(directory)/replica\nlitestream = \(try TestPaths.litestream())\n"
    try LossAndRestore(directory: directory, replicationSection: section).run()
  }

  /// An S3 replica (moto's S3 server standing in for a bucket at an S3-compatible service).
  @Test func aLostMachineComesBackFromAnS3Replica() throws {
    let directory = try makeTemporaryDirectory("replication-s3")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let s3 = try FakeS3()
    defer { s3.stop() }
    let section = """
      [replication]
      url = s3://\(s3.bucket)/aprs-cloud/main
      endpoint = \(s3.endpoint)
      region = us-east-1
      accessKeyId = testing
      secretAccessKey = "not$expanded"
      litestream = \(try TestPaths.litestream())
      """
    try LossAndRestore(directory: directory, replicationSection: section).run()
    let keys = try s3.keys()
    #expect(keys.contains { $0.hasPrefix("aprs-cloud/main/") && $0.hasSuffix(".ltx") }, "\(keys)")
  }

  /// `restore` refuses to replace a database (exit 1, nothing touched) unless --force, and never while a
  /// listener holds its lease or a daemon runs on it (holds its users file); without a replica configured it says
  /// so.
  @Test func restoreTouchesNoExistingDatabase() throws {
    let directory = try makeTemporaryDirectory("restore-refused")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let config = directory + "/aprs-cloud.ini"
    try "[replication]\nurl = file://\(directory)/replica\nlitestream = \(try TestPaths.litestream())\n"
      .write(
        toFile: config, atomically: true, encoding: .utf8)
    let data = directory + "/data"
    try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
    let database = SQLiteFile(path: data + "/aprs-cloud.sqlite")
    #expect(try runCLI(["migrate", "--db", database.path]).status == 0)
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    try database.run(
      "INSERT INTO listener_lease (id, holder, acquired_at, expires_at) VALUES (1, 'here:1:a', \(now), \(now + 600_000));"
    )
    let before = try Data(contentsOf: URL(fileURLWithPath: database.path))
    let listing = try FileManager.default.contentsOfDirectory(atPath: data).sorted()

    let refused = try runCLI(["restore", "--config", config, "--data", data])
    #expect(refused.status == 1)
    #expect(refused.stderrText.contains("exists; nothing was changed"), "\(refused.stderrText)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: data).sorted() == listing)
    // With --force, not while a listener holds the lease (reading it is all that happens).
    let forcedWhileHeld = try runCLI(["restore", "--config", config, "--data", data, "--force"])
    #expect(forcedWhileHeld.status == 1)
    #expect(forcedWhileHeld.stderrText.contains("holds the lease"), "\(forcedWhileHeld.stderrText)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: database.path)) == before)
    #expect(try database.int("SELECT count(*) FROM listener_lease") == 1)
    // Nor while a daemon runs on it, even one whose lease lapsed (it holds the users file).
    try database.run("DELETE FROM listener_lease;")
    let users = data + "/aprs-cloud.sqlite.users"
    let holder = try TestStack.launch(
      "/usr/bin/env",
      [
        "python3", "-c",
        "import fcntl, sys, time\nf = open(sys.argv[1], 'a')\nfcntl.flock(f, fcntl.LOCK_SH)\nprint('held', flush=True)"
          + "\ntime.sleep(60)", users,
      ], output: directory + "/holder.out")
    defer { TestStack.terminate(holder) }
    #expect(
      waitUntil(timeout: 10) {
        ((try? String(contentsOfFile: directory + "/holder.out", encoding: .utf8)) ?? "").contains("held")
      })
    let forcedWhileRunning = try runCLI(["restore", "--config", config, "--data", data, "--force"])
    #expect(forcedWhileRunning.status == 1)
    #expect(
      forcedWhileRunning.stderrText.contains("aprs-listener or aprs-cloud-fcgi runs on"),
      "\(forcedWhileRunning.stderrText)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: database.path)).count == before.count)

    // Nothing replicated yet: Litestream finds no backup, and nothing is left behind.
    let empty = directory + "/empty"
    let noBackup = try runCLI(["restore", "--config", config, "--data", empty])
    #expect(noBackup.status == 1, "\(noBackup.stdoutText)")
    #expect(noBackup.stderrText.contains("litestream restore failed"), "\(noBackup.stderrText)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)

    let plain = directory + "/plain.ini"
    try "[server]\nlogLevel = info\n".write(toFile: plain, atomically: true, encoding: .utf8)
    let off = try runCLI(["restore", "--config", plain, "--data", directory + "/other"])
    #expect(off.status == 1)
    #expect(off.stderrText.contains("[replication] url is not set"), "\(off.stderrText)")
    #expect(!FileManager.default.fileExists(atPath: directory + "/other"))
  }

  /// `aprs-cloud replicate` (what the systemd unit runs) writes Litestream's configuration beside the database
  /// (mode 0600) and becomes Litestream, which fills the replica; SIGTERM ends it. Without a replica it says so.
  @Test func replicateBecomesLitestream() throws {
    let directory = try makeTemporaryDirectory("replicate")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let config = directory + "/aprs-cloud.ini"
    try "[replication]\nurl = file://\(directory)/replica\nlitestream = \(try TestPaths.litestream())\n"
      .write(
        toFile: config, atomically: true, encoding: .utf8)
    let database = directory + "/data/aprs-cloud.sqlite"
    try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
    #expect(try runCLI(["migrate", "--db", database]).status == 0)
    let process = try TestStack.launch(
      try TestPaths.executable("aprs-cloud"), ["replicate", "--config", config, "--db", database],
      output: directory + "/replicate.log")
    defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    let log = { (try? String(contentsOfFile: directory + "/replicate.log", encoding: .utf8)) ?? "" }
    #expect(
      waitUntil(timeout: 10) { ProcessTable.name(of: process.processIdentifier) == "litestream" }, "\(log())")
    let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/data/litestream.yml")
    #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    #expect(
      waitUntil(timeout: 15, interval: 0.1) {
        ((try? FileManager.default.subpathsOfDirectory(atPath: directory + "/replica")) ?? []).contains {
          $0.hasSuffix(".ltx")
        }
      }, "nothing replicated:\n\(log())")
    kill(process.processIdentifier, SIGTERM)
    #expect(waitUntil(timeout: 20) { !process.isRunning })
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "\(log())")

    let plain = directory + "/plain.ini"
    try "[server]\ndatabase = \(database)\n".write(toFile: plain, atomically: true, encoding: .utf8)
    let off = try runCLI(["replicate", "--config", plain])
    #expect(off.status == 1)
    #expect(off.stderrText.contains("replication is off"), "\(off.stderrText)")
  }

  /// The replication unit docs/operating.md installs: `systemd-analyze verify`, and the command it runs.
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze")))
  func theReplicationUnitVerifies() throws {
    let directory = try makeTemporaryDirectory("units")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let name = "aprs-cloud-litestream.service"
    let text = try String(contentsOfFile: TestPaths.nginxDirectory + "/systemd/" + name, encoding: .utf8)
    let command =
      "ExecStart=/usr/local/bin/aprs-cloud replicate --config /etc/aprs-cloud/aprs-cloud.ini "
      + "--db /var/lib/aprs-cloud/aprs-cloud.sqlite\n"
    #expect(text.contains(command))
    for line in [
      "User=aprs-cloud", "Group=aprs-cloud", "UMask=0007", "Restart=always",
      "ReadWritePaths=/var/lib/aprs-cloud",
      "EnvironmentFile=-/etc/aprs-cloud/replication.env",
    ] {
      #expect(text.contains("\n" + line + "\n"), "\(line)")
    }
    try text.replacingOccurrences(of: "/usr/local/bin/aprs-cloud", with: "/bin/true").write(
      toFile: directory + "/" + name, atomically: true, encoding: .utf8)
    let verify = try runProcess("/usr/bin/systemd-analyze", ["verify", "--man=no", directory + "/" + name])
    #expect(verify.status == 0, "\(verify.stdoutText)\(verify.stderrText)")
    #expect(
      verify.stderrText.isEmpty && verify.stdoutText.isEmpty, "\(verify.stdoutText)\(verify.stderrText)")
  }

  /// `up` with replication on but no Litestream where the config says: a clear error before anything runs.
  @Test func upWithoutLitestreamSaysSo() throws {
    let directory = try makeTemporaryDirectory("up-no-litestream")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let config = directory + "/aprs-cloud.ini"
    try """
    [replication]
    url = file://\(directory)/replica
    litestream = /nonexistent/litestream
    [messaging.webpush]
    enabled = false

    """.write(toFile: config, atomically: true, encoding: .utf8)
    let result = try runCLI([
      "up", "--http", "127.0.0.1:\(try freePort())", "--metrics", "127.0.0.1:\(try freePort())", "--data",
      directory + "/data", "--config", config,
      "--nginx-dir", TestPaths.nginxDirectory,
    ])
    #expect(result.status == 1)
    #expect(result.stderrText.contains("[replication] litestream: no executable at /nonexistent/litestream"))
  }
}

/// The loss-and-restore scenario against one replica (`replicationSection` is the INI's `[replication]`).
struct LossAndRestore {
  let directory: String
  let replicationSection: String
  let station = (callsign: "N0CALL", ssid: 7)
  let environment = litestreamEnvironment()

  func run() throws {
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let config = directory + "/aprs-cloud.ini"
    // The default 30 s listener lease: a restored copy that kept the lost machine's lease would keep the
    // new listener off the air that long.
    try """
    [aprsis]
    servers = 127.0.0.1:\(fake.port)
    login = N0CALL-10
    passcode = 13023
    reconnectDelay = 100ms
    maxReconnectDelay = 1s

    [listener]
    publishInterval = 200ms
    registrationPoll = 100ms
    ackInterval = 300ms

    [messaging.webpush]
    enabled = false

    \(replicationSection)
    """.write(toFile: config, atomically: true, encoding: .utf8)

    // The first machine.
    let firstData = directory + "/first"
    let first = try ReplicatedUp(
      data: firstData, config: config, logPath: directory + "/first.log", environment: environment)
    defer { first.killEverything() }
    try #require(first.waitHealthy(), "the first stack did not come up:\n\(first.log)")
    try #require(
      waitUntil(timeout: 10) { first.children(named: "litestream").count == 1 },
      "no Litestream:\n\(first.log)")
    let generated = try FileManager.default.attributesOfItem(atPath: firstData + "/litestream.yml")
    #expect((generated[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    try #require(try fake.wait("login", count: 1), "no login:\n\(first.log)")
    try first.register(station.callsign, ssid: station.ssid)
    try #require(
      waitUntil(timeout: 10) { (try? fake.currentFilter())??.contains("N0CALL-7") == true },
      "the filter never named the station:\n\(first.log)")
    let (_, startCursor) = try first.sync(station.callsign, ssid: station.ssid, since: 0)

    // Batch A flows and is ACKed.
    let batchA = try deliver(fake, prefix: "A", count: 12)
    let database = SQLiteFile(path: firstData + "/aprs-cloud.sqlite")

    // While Litestream replicates: its tables trip nothing of ours, and the hourly maintenance (here a
    // stale station to prune) leaves the checkpoints to it.
    try #require(
      try database.waitUntil {
        try $0.int("SELECT count(*) FROM sqlite_schema WHERE name = '_litestream_seq'") == 1
      },
      "Litestream never set up the database:\n\(first.log)")
    try database.run(
      """
      INSERT INTO stations (address, base, ssid, platform, ack_messages, registered_at, heartbeat_at)
      VALUES ('OLD1-1', 'OLD1', 1, NULL, 0, 1000, 1000);
      INSERT INTO messages (station, direction, peer, text, msgno, timestamp) VALUES ('OLD1-1', 'received', 'W1AW', 'stale', NULL, 1000);
      """)
    let maintenance = try runCLI(
      ["maintenance", "--config", config, "--db", database.path], environment: environment)
    #expect(maintenance.status == 0, "\(maintenance.stderrText)")
    #expect(maintenance.stdoutText.contains("stationsPruned: 1"), "\(maintenance.stdoutText)")
    #expect(maintenance.stdoutText.contains("checkpoint: replication"), "\(maintenance.stdoutText)")
    for arguments in [
      ["migrate", "--db", database.path], ["status", "--db", database.path],
      ["backup", "--db", database.path, directory + "/backup.sqlite"],
    ] {
      let result = try runCLI(arguments)
      #expect(result.status == 0, "\(arguments): \(result.stdoutText)\(result.stderrText)")
    }
    #expect(try SQLiteFile(path: directory + "/backup.sqlite").run("PRAGMA integrity_check;") == "ok\n")

    // Everything ACKed at least 3 s before the loss must survive it.
    usleep(3_500_000)
    let batchB = try deliver(fake, prefix: "B", count: 4)
    let (before, cursor) = try first.sync(station.callsign, ssid: station.ssid, since: startCursor)
    #expect(before.count == batchA.count + batchB.count, "\(before)")

    // The machine is gone.
    first.killEverything()
    try FileManager.default.removeItem(atPath: firstData)

    // A new machine: restore, then up.
    let secondData = directory + "/second"
    let restore = try runCLI(["restore", "--config", config, "--data", secondData], environment: environment)
    try #require(restore.status == 0, "restore failed: \(restore.stdoutText)\(restore.stderrText)")
    #expect(restore.stdoutText.contains("integrity_check: ok"), "\(restore.stdoutText)")
    #expect(restore.stdoutText.contains("listener lease: cleared"), "\(restore.stdoutText)")
    let restored = SQLiteFile(path: secondData + "/aprs-cloud.sqlite")
    #expect(try restored.int("SELECT count(*) FROM stations WHERE address = 'OLD1-1'") == 0)
    let restoredLast = try restored.int("SELECT max(timestamp) FROM messages")
    let kept = try restored.int("SELECT count(*) FROM messages WHERE msgno LIKE 'B%'")
    print(
      "replication test: \(kept) of \(batchB.count) messages ACKed just before the loss were in the replica")

    let loginsBefore = try fake.logins()
    let second = try ReplicatedUp(
      data: secondData, config: config, logPath: directory + "/second.log", environment: environment)
    defer { second.killEverything() }
    // On air at once: logged in well within the 30 s the old lease would have lasted.
    try #require(
      try fake.wait("login", count: loginsBefore + 1, timeout: 10),
      "the new listener is not on air:\n\(second.log)")
    try #require(second.waitHealthy(), "the second stack did not come up:\n\(second.log)")
    try #require(
      waitUntil(timeout: 10) { second.children(named: "litestream").count == 1 },
      "no Litestream:\n\(second.log)")

    let (all, _) = try second.sync(station.callsign, ssid: station.ssid, since: 0)
    let texts = Set(all.compactMap { $0.string("text") })
    for text in batchA { #expect(texts.contains(text), "\(text) was ACKed 3 s before the loss and is gone") }

    // New messages flow, and a phone that follows its cursor from before the loss skips none of them,
    // however far ahead of the restored database that cursor is.
    #expect(cursor >= Int64(restoredLast))
    let batchC = try deliver(fake, prefix: "C", count: 6)
    let (after, _) = try second.sync(station.callsign, ssid: station.ssid, since: cursor)
    #expect(Set(after.compactMap { $0.string("text") }) == Set(batchC), "\(after)")
    #expect(after.allSatisfy { ($0.int64("timestamp") ?? 0) > cursor })

    // Replication carries on from the restored database: the replica restores again, with batch C.
    usleep(2_500_000)
    let third = directory + "/third"
    let again = try runCLI(["restore", "--config", config, "--data", third], environment: environment)
    #expect(again.status == 0, "\(again.stdoutText)\(again.stderrText)")
    let thirdCopy = SQLiteFile(path: third + "/aprs-cloud.sqlite")
    #expect(try thirdCopy.int("SELECT count(*) FROM messages WHERE msgno LIKE 'C%'") == batchC.count)
    // --force replaces a database no listener holds, and Litestream's state of the file it replaces.
    let staleState = third + "/.aprs-cloud.sqlite-litestream"
    try FileManager.default.createDirectory(atPath: staleState + "/ltx/0", withIntermediateDirectories: true)
    try thirdCopy.run("DELETE FROM messages;")
    let forced = try runCLI(
      ["restore", "--config", config, "--data", third, "--force"], environment: environment)
    #expect(forced.status == 0, "\(forced.stdoutText)\(forced.stderrText)")
    #expect(try thirdCopy.int("SELECT count(*) FROM messages WHERE msgno LIKE 'C%'") == batchC.count)
    #expect(!FileManager.default.fileExists(atPath: staleState))

    #expect(second.stop() == 0, "\(second.log)")
  }

  /// Injects `count` numbered messages to the station and waits until every one was ACKed on air;
  /// returns their texts.
  private func deliver(_ fake: FakeAPRSIS, prefix: String, count: Int) throws -> [String] {
    var texts: [String] = []
    var lines: [String] = []
    for index in 1...count {
      let text = "message \(prefix)\(index)"
      texts.append(text)
      lines.append(
        messageLine(
          from: "W\(index % 3)ABC-\(index % 9 + 1)", to: "N0CALL-7", text: text, msgno: "\(prefix)\(index)"))
    }
    _ = try fake.inject(lines)
    let wanted = Set((1...count).map { "\(prefix)\($0)" })
    try #require(
      waitUntil(timeout: 15, interval: 0.05) {
        (try? ackedMessageNumbers(fake))?.isSuperset(of: wanted) == true
      },
      "batch \(prefix) was not ACKed: \((try? ackedMessageNumbers(fake)) ?? [])")
    return texts
  }
}
