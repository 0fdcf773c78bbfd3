import Foundation
import TestSupport
import Testing

@testable import Store

/// One fenced `sh` block of the guides and the marker above it.
struct DocumentedBlock {
  /// `run by test: NAME` gives the name; nil for `not run by tests: …`.
  var testName: String?
  var text: String
  /// The guide it is in, relative to the package root (`docs/operating.md`).
  var file: String
  var line: Int
}

/// The operator guide's shell blocks, each with the HTML comment that says which test runs it.
enum OperatingGuide {
  static let packageRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
  }()

  /// The operator's guide, where the blocks tests run live.
  static let path = packageRoot + "/docs/operating.md"
  /// Every guide whose shell blocks must say which test runs them (relative to the package root).
  static let guides = [
    "README.md", "docs/operating.md", "docs/api.md", "docs/web-client.md", "docs/architecture.md",
    "docs/configuration.md",
  ]

  /// Every block name some test runs: these (CLITests.DocsOpsTests) and
  /// IntegrationTests.OpsDocsTests (health, metrics, logs).
  static let testedHere: Set<String> = ["inspect", "backup", "restore", "upgrade", "import-config", "ban"]
  static let testedByIntegrationTests: Set<String> = ["health", "metrics", "logs"]

  /// The blocks of every guide, or a failure naming an untagged one.
  static func blocks() throws -> [DocumentedBlock] {
    try guides.flatMap { try blocks(in: $0) }
  }

  /// The blocks of one guide (`file` relative to the package root), or a failure naming an untagged one.
  static func blocks(in file: String) throws -> [DocumentedBlock] {
    let lines = try String(contentsOfFile: packageRoot + "/" + file, encoding: .utf8).components(
      separatedBy: "\n")
    var blocks: [DocumentedBlock] = []
    var index = 0
    while index < lines.count {
      let line = lines[index]
      if line.hasPrefix("```sh") {
        let marker = index > 0 ? lines[index - 1] : ""
        var testName: String?
        if marker.hasPrefix("<!-- run by test: ") {
          let rest = marker.dropFirst("<!-- run by test: ".count)
          testName = rest.split(separator: " ").first.map(String.init)
        } else if !marker.hasPrefix("<!-- not run by tests: ") {
          throw TestFailure(
            "\(file) line \(index + 1): a shell block without a `run by test` marker")
        }
        var text = ""
        index += 1
        while index < lines.count, !lines[index].hasPrefix("```") {
          text += lines[index] + "\n"
          index += 1
        }
        blocks.append(DocumentedBlock(testName: testName, text: text, file: file, line: index + 1))
      }
      index += 1
    }
    return blocks
  }

  /// The block named `name`.
  static func block(_ name: String) throws -> String {
    let found = try blocks().filter { $0.testName == name }
    try #require(found.count == 1, "the guides have \(found.count) blocks named \(name)")
    return found[0].text
  }
}

/// Runs documented shell blocks with the production paths pointed into a temporary folder, the
/// built binaries first on PATH, and the commands that need a real system (systemctl, chown,
/// chgrp) replaced by functions that log their arguments (systemctl starting the responder runs
/// it once, as CGI, so its migrations happen as they would at a real start).
final class GuideSandbox {
  let root: String
  var lib: String { root + "/lib" }
  var database: String { lib + "/aprs-cloud.sqlite" }
  var log: String { root + "/system.log" }
  let buildDirectory: String

  init() throws {
    var template = Array("/tmp/ac-guide-XXXXXX".utf8CString)
    root = String(cString: mkdtemp(&template)!)
    for folder in ["lib", "backups", "etc", "bin", "old"] {
      try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
    }
    buildDirectory =
      URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
      .path
  }

  deinit { try? FileManager.default.removeItem(atPath: root) }

  /// The block with its production paths replaced.
  func localized(_ text: String) -> String {
    var text = text
    for (production, local) in [
      ("/var/lib/aprs-cloud", lib), ("/var/backups/aprs-cloud", root + "/backups"),
      ("/etc/aprs-cloud", root + "/etc"),
      ("/opt/htcloudserver", root + "/old"), ("/usr/local/bin/", root + "/bin/"),
      (".build/release/", buildDirectory + "/"),
    ] {
      text = text.replacingOccurrences(of: production, with: local)
    }
    return text
  }

  /// Runs a documented block; (exit status, stdout, stderr).
  func run(_ block: String) throws -> (status: Int32, stdout: String, stderr: String) {
    let script = """
      set -euo pipefail
      systemctl() {
        echo "systemctl $*" >> "$OPS_LOG"
        case "$1" in
          start|restart)
            if [[ " $* " == *" aprs-cloud-fcgi"* ]]; then
              GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=GET REQUEST_URI=/health aprs-cloud-fcgi --db "$OPS_DB" > /dev/null
            fi;;
        esac
      }
      chown() { echo "chown $*" >> "$OPS_LOG"; }
      chgrp() { echo "chgrp $*" >> "$OPS_LOG"; }

      """ + localized(block)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = ["-c", script]
    var environment = ProcessInfo.processInfo.environment
    environment["PATH"] = root + "/bin:" + buildDirectory + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
    environment["OPS_LOG"] = log
    environment["OPS_DB"] = database
    environment["APRS_CLOUD_CONFIG"] = nil
    process.environment = environment
    process.currentDirectoryURL = URL(fileURLWithPath: root)
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    nonisolated(unsafe) var errorBytes = Data()
    let reader = Thread { errorBytes = errors.fileHandleForReading.readDataToEndOfFile() }
    reader.start()
    let outBytes = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while !reader.isFinished { usleep(1000) }
    return (
      process.terminationStatus, String(decoding: outBytes, as: UTF8.self),
      String(decoding: errorBytes, as: UTF8.self)
    )
  }

  /// What the stand-ins for systemctl, chown and chgrp were asked to do.
  var systemLog: [String] {
    ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
  }

  /// A database at `schema` (the latest by default) with two stations and three messages.
  func makeDatabase(schema: Int? = nil) throws -> Database {
    let database = try Database(path: database)
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    if let schema {
      // An old schema: rows written as that version's columns allow.
      try database.migrate(upTo: schema)
      try database.execute(
        """
        INSERT INTO stations (address, base, ssid, platform, ack_messages, registered_at, heartbeat_at)
        VALUES ('N0CALL-7', 'N0CALL', 7, 'android', 1, \(now), \(now)), ('KJ7ABC', 'KJ7ABC', 0, 'android', 1, \(now), \(now));
        INSERT INTO devices (token, station, platform, registered_at, refreshed_at)
        VALUES ('fcm-one', 'N0CALL-7', 'android', \(now), \(now)), ('fcm-two', 'KJ7ABC', 'android', \(now), \(now));
        INSERT INTO messages (station, direction, peer, text, msgno, timestamp)
        VALUES ('N0CALL-7', 'received', 'KJ7ABC', 'first', '1', \(now));
        """)
      return database
    }
    try database.migrate()
    for (address, token) in [("N0CALL-7", "fcm-one"), ("KJ7ABC", "fcm-two")] {
      let parts = address.split(separator: "-")
      _ = try database.upsertStation(
        StationUpsert(
          address: address, base: String(parts[0]), ssid: parts.count > 1 ? Int(parts[1])! : 0,
          platform: .android,
          pushToken: token, ackMessages: true, isRegistration: true), now: now)
    }
    for (index, text) in ["first", "second", "third"].enumerated() {
      _ = try database.storeMessages(
        [
          IncomingMessage(
            station: "N0CALL-7", peer: "KJ7ABC", text: text, msgno: String(index + 1), dedupKey: text,
            dedupWindowMs: 3_600_000)
        ], now: now)
    }
    return database
  }
}

/// The shell blocks of the guides (docs/operating.md), run as written (paths moved into a temporary folder).
@Suite struct DocsOpsTests {
  @Test func everyShellBlockSaysWhichTestRunsIt() throws {
    let blocks = try OperatingGuide.blocks()
    #expect(blocks.count >= 10)
    let named = blocks.compactMap(\.testName)
    #expect(Set(named).count == named.count, "block names are unique: \(named)")
    #expect(Set(named) == OperatingGuide.testedHere.union(OperatingGuide.testedByIntegrationTests))
    // The commands of the operator's tool named anywhere in the guide are ones that exist.
    let guide = try String(contentsOfFile: OperatingGuide.path, encoding: .utf8)
    for command in ["status", "stations", "messages", "backup", "import-config", "migrate"] {
      #expect(guide.contains("aprs-cloud \(command)"))
      #expect(try runCLI([command, "--help"]).status == 0)
    }
  }

  @Test func theInspectionCommandsRunAsDocumented() throws {
    let sandbox = try GuideSandbox()
    let database = try sandbox.makeDatabase()
    defer { database.close() }
    let result = try sandbox.run(try OperatingGuide.block("inspect"))
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.hasPrefix("health     degraded: listener not running\n"))
    #expect(result.stdout.contains("stations   2 live of 2 registered"))
    #expect(result.stdout.contains("STATION   PLATFORM  STATE"))
    #expect(result.stdout.contains("2 stations registered, 2 live"))
    #expect(result.stdout.contains("Z  from KJ7ABC  {1}  first\n"))
    #expect(result.stdout.hasSuffix("Z  from KJ7ABC  {3}  third\n"))
  }

  @Test func theBanCommandsRunAsDocumented() throws {
    let sandbox = try GuideSandbox()
    let database = try sandbox.makeDatabase()
    defer { database.close() }
    let result = try sandbox.run(try OperatingGuide.block("ban"))
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(
      lines.first?.hasPrefix("banned call KJ7ABC until ") == true
        && lines.first?.hasSuffix(": flooding") == true)
    #expect(lines.contains("banned address 2001:db8:1:2::/64 until unbanned"), "\(lines)")
    #expect(
      lines.contains { $0.hasPrefix("KIND") } && lines.contains { $0.hasPrefix("address  2001:db8:1:2::/64") }
    )
    #expect(lines.last == "unbanned call KJ7ABC")
  }

  @Test func aBackupRestoresAsDocumented() throws {
    let sandbox = try GuideSandbox()
    let database = try sandbox.makeDatabase()
    let backup = try sandbox.run(try OperatingGuide.block("backup"))
    #expect(backup.status == 0, "\(backup.stderr)")
    #expect(backup.stdout.contains("integrity_check: ok"))
    #expect(
      backup.stdout.contains(
        "holds: schema \(Database.latestSchemaVersion), 2 stations, 2 devices, 3 messages"))

    // Life goes on after the backup: a message arrives, a station leaves.
    _ = try database.storeMessages(
      [
        IncomingMessage(
          station: "N0CALL-7", peer: "W1AW", text: "after the backup", msgno: nil, dedupKey: "late",
          dedupWindowMs: 1000)
      ], now: Int64(Date().timeIntervalSince1970 * 1000))
    try database.deleteStation("KJ7ABC")
    database.close()  // the services are stopped before a restore

    let restore = try sandbox.run(try OperatingGuide.block("restore"))
    #expect(restore.status == 0, "\(restore.stderr)")
    #expect(restore.stdout.contains("stations   2 live of 2 registered"), "\(restore.stdout)")
    let log = sandbox.systemLog
    #expect(
      log.first?.hasPrefix("systemctl stop aprs-listener.service aprs-cloud-fcgi.socket") == true, "\(log)")
    #expect(log.last?.hasPrefix("systemctl start aprs-cloud-fcgi.socket aprs-listener.service") == true)
    #expect(log.contains { $0.hasPrefix("chown aprs-cloud:aprs-cloud \(sandbox.database)") })

    let restored = try Database(path: sandbox.database)
    defer { restored.close() }
    #expect(try restored.integrityCheck() == "ok")
    #expect(try restored.station("KJ7ABC") != nil)
    #expect(
      try restored.recentMessages(station: "N0CALL-7", limit: 10).map(\.text) == ["first", "second", "third"])
    #expect(try restored.connectionSettings().journalMode == "wal", "the restored copy is back in WAL mode")
  }

  @Test func anUpgradeMigratesWhenTheResponderStarts() throws {
    let sandbox = try GuideSandbox()
    let database = try sandbox.makeDatabase(schema: 1)
    database.close()
    let result = try sandbox.run(try OperatingGuide.block("upgrade"))
    #expect(result.status == 0, "\(result.stderr)\n\(result.stdout)")
    #expect(result.stdout.contains("holds: schema 1, 2 stations"))
    #expect(result.stdout.contains("database   \(sandbox.database): schema \(Database.latestSchemaVersion)"))
    for binary in ["aprs-cloud", "aprs-cloud-fcgi", "aprs-listener"] {
      #expect(FileManager.default.isExecutableFile(atPath: sandbox.root + "/bin/" + binary))
    }
    let before = try Database(path: sandbox.root + "/backups/before-upgrade.sqlite")
    defer { before.close() }
    #expect(try before.schemaVersion() == 1, "the backup is the database as it was")
    #expect(sandbox.systemLog == ["systemctl restart aprs-cloud-fcgi.service aprs-listener.service"])
  }

  @Test func importingTheOriginalConfigurationWorksAsDocumented() throws {
    let sandbox = try GuideSandbox()
    _ = FileManager.default.createFile(
      atPath: sandbox.root + "/old/AuthKey_ABC123DEFG.p8", contents: Data("k".utf8))
    _ = FileManager.default.createFile(
      atPath: sandbox.root + "/old/service-account.json", contents: Data("{}".utf8))
    try """
    [messaging.android]
    enabled = true
    serviceAccountFile = service-account.json

    [messaging.ios]
    enabled = true

    [messaging.ios.apns]
    keyFile = AuthKey_ABC123DEFG.p8
    keyId = ABC123DEFG
    teamId = DEF123GHIJ
    bundleId = com.meshcentral.htcommander
    production = false

    """.write(toFile: sandbox.root + "/old/config.ini", atomically: true, encoding: .utf8)
    let result = try sandbox.run(try OperatingGuide.block("import-config"))
    #expect(result.status == 0, "\(result.stderr)")
    let written = try String(contentsOfFile: sandbox.root + "/etc/aprs-cloud.ini", encoding: .utf8)
    #expect(written.contains("[messaging.ios.apns]\n"))
    #expect(written.contains("keyFile = \(sandbox.root)/old/AuthKey_ABC123DEFG.p8\n"))
    #expect(written.contains("production = false\n"))
    #expect(written.contains("[messaging.android]\nenabled = true\n"))
    #expect(written.contains("serviceAccountFile = \(sandbox.root)/old/service-account.json\n"))
    let attributes = try FileManager.default.attributesOfItem(atPath: sandbox.root + "/etc/aprs-cloud.ini")
    #expect((attributes[.posixPermissions] as? Int) == 0o640)
    #expect(sandbox.systemLog == ["chgrp aprs-cloud \(sandbox.root)/etc/aprs-cloud.ini"])
  }
}
