import Config
import Foundation
import Store
import Testing

/// A database for the operator commands, filled through the store the way the responder and the
/// listener fill it. Times are real (the commands read the clock).
final class OpsDatabase {
  let directory: String
  let path: String
  let database: Database
  let now = Int64(Date().timeIntervalSince1970 * 1000)

  init(schema: Int? = nil) throws {
    var template = Array("/tmp/ac-ops-XXXXXX".utf8CString)
    directory = String(cString: mkdtemp(&template)!)
    path = directory + "/aprs-cloud.sqlite"
    database = try Database(path: path)
    if let schema {
      try database.migrate(upTo: schema)
    } else {
      try database.migrate()
    }
  }

  deinit {
    database.close()
    try? FileManager.default.removeItem(atPath: directory)
  }

  func register(_ address: String, platform: DevicePlatform? = .android, token: String? = nil, at time: Int64)
    throws
  {
    let parts = address.split(separator: "-")
    _ = try database.upsertStation(
      StationUpsert(
        address: address, base: String(parts[0]), ssid: parts.count > 1 ? Int(parts[1])! : 0,
        platform: platform,
        pushToken: token, ackMessages: false, isRegistration: true), now: time)
  }

  func deliver(_ station: String, from peer: String, _ text: String, msgno: String? = nil) throws {
    _ = try database.storeMessages(
      [
        IncomingMessage(
          station: station, peer: peer, text: text, msgno: msgno, dedupKey: "\(peer)>\(station):\(text)",
          dedupWindowMs: 3_600_000)
      ], now: now)
  }

  /// Three stations (one expired), messages, an avatar, a running listener and push states.
  func fill() throws {
    try register("N0CALL-7", token: "fcm-token-1", at: now - 60_000)
    try register("KJ7ABC", platform: .ios, token: "abcdef0123", at: now - 3_600_000)
    try register("OLD1", token: "old-token", at: now - 9 * 86_400_000)
    try database.setAvatar("N0CALL-7", icon: "dog", image: nil, hash: "icon:dog", now: now)
    try deliver("N0CALL-7", from: "KJ7ABC", "Testing, 1 2 3", msgno: "42")
    try deliver("N0CALL-7", from: "W1AW", "second")
    try deliver("KJ7ABC", from: "N0CALL-7", "hello")
    #expect(try database.acquireLease(holder: "vps:4242", now: now - 120_000, ttlMs: 600_000))
    var counts = ListenerCounts()
    counts[.linesRead] = 1234
    counts[.messagesStored] = 3
    counts[.reconnects] = 1
    try database.publishListenerStatus(
      ListenerStatus(
        state: "connected", connected: true, verified: true, receiveOnly: false,
        server: "rotate.aprs2.net:14580", login: "N0CALL-10", filterSize: 60, filterBytes: 498,
        filterEntries: 41, filterExactStations: 20, lastLineAt: now - 3_000, lineRate: 12.5, counts: counts))
    try database.publishPushState(.ok, for: .android)
    try database.publishPushState(.off, for: .ios)
  }
}

@Suite struct OpsTests {
  @Test func everyOperatorCommandHasHelpAndRefusesWrongUsageWith2() throws {
    let top = try runCLI(["--help"])
    for command in ["status", "stations", "messages", "backup", "import-config"] {
      #expect(top.stdout.contains("  " + command), "\(command) is listed")
      let help = try runCLI([command, "--help"])
      #expect(help.status == 0, "\(command)")
      #expect(help.stdout.hasPrefix("usage: aprs-cloud \(command)"), "\(command)")
    }
    for arguments in [
      ["status", "extra"], ["stations", "--nope"], ["stations", "--db", "x", "one", "extra"],
      ["messages", "--db", "x"],
      ["messages", "A", "B", "--db", "x"], ["messages", "N0CALL", "--db", "x", "--limit", "0"],
      ["messages", "N0CALL", "--db", "x", "--limit", "many"], ["backup", "--db", "x"],
      ["backup", "--db", "x", "a", "b"], ["import-config"], ["import-config", "a", "b"],
      ["stations", "--all=yes"],
    ] {
      let result = try runCLI(arguments)
      #expect(result.status == 2, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains("usage: aprs-cloud"), "\(arguments)")
    }
  }

  /// Without `--db` or a `[server] database`, the inspection commands look where the daemons and `make run`
  /// keep the database (`./var/aprs-cloud.sqlite`), and say that default when nothing is there.
  @Test func withoutADatabaseNamedTheDaemonsDefaultIsUsedAndNamedWhenMissing() throws {
    let fixture = try OpsDatabase()
    try fixture.fill()
    let checkout = fixture.directory + "/checkout"
    let empty = fixture.directory + "/empty"
    try FileManager.default.createDirectory(atPath: checkout, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: checkout + "/var", withDestinationPath: fixture.directory)
    let found = try runCLI(["status"], directory: checkout)
    #expect(found.status == 0, "\(found.stderr)")
    #expect(found.stdout.contains("database   ./var/aprs-cloud.sqlite: schema "), "\(found.stdout)")
    let missing = try runCLI(["stations"], directory: empty)
    #expect(missing.status == 1)
    #expect(
      missing.stderr.contains("no database at ./var/aprs-cloud.sqlite (the default)")
        && missing.stderr.contains("--db PATH"), "\(missing.stderr)")
  }

  @Test func statusSaysWhatHealthAndTheKeyMetricsSay() throws {
    let fixture = try OpsDatabase()
    try fixture.fill()
    let result = try runCLI(["status", "--db", fixture.path])
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(lines.first == "health     ok", "\(result.stdout)")
    for expected in [
      "database   \(fixture.path): schema \(Database.latestSchemaVersion), ",
      "listener   running as vps:4242 since ",
      "(2m ago); connected to rotate.aprs2.net:14580 as N0CALL-10, verified",
      "s ago; 12.50 lines/s over the last minute",
      "filter: 60 stations, 498 bytes, 41 entries, 20 stations exact",
      "since start: 1234 lines, 3 messages stored, 0 duplicates, 0 ACKs sent, 1 reconnects",
      "push       android ok; ios off", "forwards   none yet\n",
      "outbox     3 pending, 0 failed; oldest queued ",
      "stations   2 live of 3 registered (live: heard within 7d)",
      "devices    android 2 (1 live), ios 1 (1 live)", "messages   3 stored (3 received, 0 sent); newest ",
    ] {
      #expect(result.stdout.contains(expected), "missing \(expected) in\n\(result.stdout)")
    }

    // Degraded: copies of sent messages waiting for the transmit budget.
    var full = try fixture.database.listenerStatus()
    full.sendBudgetFull = true
    try fixture.database.publishListenerStatus(full)
    let budget = try runCLI(["status", "--db", fixture.path])
    #expect(
      budget.stdout.hasPrefix(
        "health     degraded: transmit budget spent (copies of sent messages wait their turn)\n"),
      "\(budget.stdout)")
    full.sendBudgetFull = false
    try fixture.database.publishListenerStatus(full)
    // Degraded: a provider sending despite a wrong setting, a push provider stopped, then the listener gone.
    try fixture.database.publishPushState(.ok, for: .ios)
    try fixture.database.publishPushWarning("production = true, but sandbox accepts every device", for: .ios)
    let warned = try runCLI(["status", "--db", fixture.path])
    #expect(
      warned.stdout.hasPrefix(
        "health     degraded: ios push: production = true, but sandbox accepts every device\n"),
      "\(warned.stdout)")
    try fixture.database.publishPushState(.stopped(reason: "APNs refused the key"), for: .ios)
    let stopped = try runCLI(["status", "--db", fixture.path])
    #expect(stopped.status == 0)
    #expect(stopped.stdout.hasPrefix("health     degraded: ios push stopped: APNs refused the key\n"))
    // Not connected: the listener's last error is a line of its own.
    try fixture.database.publishListenerStatus(
      ListenerStatus(
        state: "backingOff", receiveOnly: false, login: "N0CALL-10",
        lastError: "cannot connect to rotate.aprs2.net:14580: Name or service not known"))
    let offline = try runCLI(["status", "--db", fixture.path])
    #expect(
      offline.stdout.contains(
        "not connected to APRS-IS (state backingOff)\n"
          + "           last error: cannot connect to rotate.aprs2.net:14580: Name or service not known\n"),
      "\(offline.stdout)")
    try fixture.database.releaseLease(holder: "vps:4242")
    let gone = try runCLI(["status", "--db", fixture.path])
    #expect(gone.stdout.hasPrefix("health     degraded: listener not running; ios push stopped"))
    #expect(gone.stdout.contains("listener   not running (no listener has run on this database)"))
  }

  @Test func statusTakesTheDatabaseAndExpiryFromTheConfigFile() throws {
    let fixture = try OpsDatabase()
    try fixture.fill()
    let config = fixture.directory + "/aprs-cloud.ini"
    try "[server]\ndatabase = aprs-cloud.sqlite\nstationExpiry = 30d\n".write(
      toFile: config, atomically: true, encoding: .utf8)
    let result = try runCLI(["status", "--config", config])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("stations   3 live of 3 registered (live: heard within 30d)"))
  }

  @Test func stationsListsTheLiveOnesOrAllOfThem() throws {
    let fixture = try OpsDatabase()
    try fixture.fill()
    try fixture.register("DESK1", platform: nil, at: fixture.now)
    try fixture.database.setAvatar("DESK1", icon: nil, image: nil, hash: "", now: fixture.now)
    let live = try runCLI(["stations", "--db", fixture.path])
    #expect(live.status == 0, "\(live.stderr)")
    let rows = live.stdout.split(separator: "\n").map {
      $0.split(separator: " ", omittingEmptySubsequences: true)
    }
    #expect(
      rows.first?.map(String.init) == [
        "STATION", "PLATFORM", "STATE", "DEVICES", "MESSAGES", "LAST", "HEARD", "AVATAR",
      ])
    #expect(rows.count == 5)
    #expect(
      rows[1].first == "DESK1" && rows[1][1] == "-" && rows[1][2] == "live" && rows[1].last == "cleared")
    #expect(rows[2].first == "KJ7ABC" && rows[2][1] == "ios" && rows[2][3] == "1" && rows[2][4] == "1")
    #expect(rows[3].first == "N0CALL-7" && rows[3][3] == "1" && rows[3][4] == "2" && rows[3].last == "set")
    #expect(rows[3].contains("ago)"))
    #expect(
      live.stdout.hasSuffix(
        "4 stations registered, 3 live (heard within 7d); 1 expired not shown (--all lists them)\n"))

    let all = try runCLI(["stations", "--db", fixture.path, "--all"])
    #expect(all.status == 0)
    #expect(all.stdout.contains("OLD1  ") && all.stdout.contains("expired"))
    #expect(all.stdout.hasSuffix("4 stations registered, 3 live (heard within 7d)\n"))

    let empty = try OpsDatabase()
    let none = try runCLI(["stations", "--db", empty.path])
    #expect(none.status == 0)
    #expect(none.stdout == "0 stations registered, 0 live (heard within 7d)\n")
  }

  @Test func messagesPrintsTheNewestOldestFirstAndLeavesTheCursorAlone() throws {
    let fixture = try OpsDatabase()
    try fixture.fill()
    try fixture.deliver("N0CALL-7", from: "EVIL", "red \u{1B}[31m text\u{7}")
    let cursor = try fixture.database.station("N0CALL-7")?.lastSyncCursor

    let result = try runCLI(["messages", "n0call-7", "--db", fixture.path])
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 3)
    #expect(lines[0].hasSuffix("Z  from KJ7ABC  {42}  Testing, 1 2 3"))
    #expect(lines[1].hasSuffix("Z  from W1AW  second"))
    #expect(
      lines[2].hasSuffix(#"Z  from EVIL  red \x1B[31m text\x07"#), "control characters are shown, not sent")
    #expect(lines[0].count > 21 && lines[0].dropFirst(4).hasPrefix("-"))

    let limited = try runCLI(["messages", "N0CALL-7", "--db", fixture.path, "--limit", "1"])
    #expect(limited.stdout.split(separator: "\n").count == 1)
    #expect(limited.stdout.contains("EVIL"))
    #expect(try fixture.database.station("N0CALL-7")?.lastSyncCursor == cursor)

    let quiet = try runCLI(["messages", "OLD1", "--db", fixture.path])
    #expect(quiet.status == 0)
    #expect(quiet.stdout == "OLD1: no messages stored\n")
    let unknown = try runCLI(["messages", "NOBODY", "--db", fixture.path])
    #expect(unknown.status == 1)
    #expect(unknown.stderr.contains("NOBODY is not registered"))
  }

  @Test func inspectionNeverCreatesOrUpgradesADatabase() throws {
    let fixture = try OpsDatabase()
    let missing = fixture.directory + "/typo.sqlite"
    for command in [
      ["status"], ["stations"], ["messages", "N0CALL"], ["backup", fixture.directory + "/out.sqlite"],
    ] {
      let result = try runCLI(command + ["--db", missing])
      #expect(result.status == 1, "\(command)")
      #expect(result.stderr.contains("no database at \(missing)"), "\(command): \(result.stderr)")
      #expect(!FileManager.default.fileExists(atPath: missing))
    }
    #expect(!FileManager.default.fileExists(atPath: fixture.directory + "/out.sqlite"))

    let old = try OpsDatabase(schema: 1)
    let result = try runCLI(["status", "--db", old.path])
    #expect(result.status == 1)
    #expect(result.stderr.contains("aprs-cloud migrate"), "\(result.stderr)")
    #expect(try old.database.schemaVersion() == 1)
  }

  @Test func backupWritesACheckedCopyAndReplacesAnOlderOne() throws {
    let fixture = try OpsDatabase()
    try fixture.fill()
    let output = fixture.directory + "/backups/aprs-cloud.sqlite"
    try FileManager.default.createDirectory(
      atPath: fixture.directory + "/backups", withIntermediateDirectories: true)
    let first = try runCLI(["backup", "--db", fixture.path, output])
    #expect(first.status == 0, "\(first.stderr)")
    let lines = first.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 4)
    #expect(lines[0] == "backup: \(output)")
    #expect(lines[1].hasPrefix("size: ") && lines[1].contains(" KiB (") && lines[1].contains(" pages) in "))
    #expect(lines[2] == "holds: schema \(Database.latestSchemaVersion), 3 stations, 3 devices, 3 messages")
    #expect(lines[3] == "integrity_check: ok")

    // A second backup replaces the first; nothing is left beside it.
    try fixture.deliver("KJ7ABC", from: "W1AW", "after the first backup")
    let second = try runCLI(["backup", "--db", fixture.path, output])
    #expect(second.status == 0)
    #expect(second.stdout.contains("4 messages"))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: fixture.directory + "/backups") == [
        "aprs-cloud.sqlite"
      ])
    let copy = try Database(path: output, options: StoreOptions(readOnly: true))
    defer { copy.close() }
    #expect(try copy.integrityCheck() == "ok")
    #expect(
      try copy.recentMessages(station: "KJ7ABC", limit: 10).map(\.text) == [
        "hello", "after the first backup",
      ])

    let intoDirectory = try runCLI(["backup", "--db", fixture.path, fixture.directory + "/backups"])
    #expect(intoDirectory.status == 1)
    #expect(intoDirectory.stderr.contains("is a directory"))
    let ontoItself = try runCLI(["backup", "--db", fixture.path, fixture.path])
    #expect(ontoItself.status == 1)
    #expect(ontoItself.stderr.contains("is the database itself"))
    let nowhere = try runCLI(["backup", "--db", fixture.path, "/nonexistent/dir/backup.sqlite"])
    #expect(nowhere.status == 1)
    #expect(nowhere.stderr.contains("backup of \(fixture.path) failed"))
  }

  @Test func importConfigCarriesOverThePushSettingsAndExplainsTheRest() throws {
    let fixture = try OpsDatabase()
    let keys = fixture.directory + "/data"
    try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: keys + "/AuthKey_ABC123DEFG.p8", contents: Data("key".utf8))
    _ = FileManager.default.createFile(atPath: keys + "/firebase.json", contents: Data("{}".utf8))
    let original = fixture.directory + "/config.ini"
    try """
    ; HTCloudServer configuration
    [server]
    port = 3000
    database = data/htcloud.db

    [aprsis]
    server = rotate.aprs2.net
    port = 14580
    callsign = N0CALL-10
    passcode = 13023

    [messaging.android]
    enabled = true
    serviceAccount = data/firebase.json
    projectId = htcommander-12345

    [messaging.ios]
    enabled = true

    [messaging.ios.apns]
    keyFile = "\(keys)/AuthKey_ABC123DEFG.p8"
    keyId = ABC123DEFG
    teamId = DEF123GHIJ   ; the team
    bundleId = com.meshcentral.htcommander
    production = true

    [admin]
    password = hunter2
    """.write(toFile: original, atomically: true, encoding: .utf8)

    let result = try runCLI(["import-config", original])
    #expect(result.status == 0, "\(result.stderr)\n\(result.stdout)")
    let converted = try ConfigFile(parsing: result.stdout, name: "imported")
    #expect(converted.value("aprsis", "servers")?.text == "rotate.aprs2.net:14580")
    #expect(converted.value("aprsis", "login")?.text == "N0CALL-10")
    #expect(converted.value("aprsis", "passcode")?.text == "13023")
    #expect(converted.value("messaging.android", "serviceAccountFile")?.text == keys + "/firebase.json")
    #expect(converted.value("messaging.ios.apns", "teamId")?.text == "DEF123GHIJ")
    let push = try PushConfig(converted)
    #expect(push.android?.serviceAccountFile == keys + "/firebase.json")
    #expect(push.ios?.keyFile == keys + "/AuthKey_ABC123DEFG.p8")
    #expect(push.ios?.bundleId == "com.meshcentral.htcommander")
    #expect(push.ios?.production == true)
    #expect(try ListenerConfig(converted).passcode == 13023)
    #expect(converted.value("server", "database") == nil, "the old data file is not ours")
    for comment in [
      "; line 3: [server] port = 3000: nginx listens now",
      "; line 4: [server] database = data/htcloud.db: aprs-cloud keeps its own database",
      "; line 15: [messaging.android] projectId = htcommander-12345: aprs-cloud reads the project id",
      "; line 28: [admin] password = <not shown>: no equivalent in aprs-cloud",
      "; was data/firebase.json (relative) at line 14; resolved against \(fixture.directory)",
    ] {
      #expect(result.stdout.contains(comment), "missing \(comment) in\n\(result.stdout)")
    }
    #expect(!result.stdout.contains("hunter2"))
  }

  /// Web Push is on by default and needs a contact the original server never had: the result keeps it off and
  /// says how to turn it on, so that it starts as it is; a contact the file gives is kept, and Web Push on.
  @Test func importConfigTurnsWebPushOffUnlessTheFileGivesItsContact() throws {
    let fixture = try OpsDatabase()
    let original = fixture.directory + "/config.ini"
    try "[aprsis]\nlogin = N0CALL-10\npasscode = 13023\n".write(
      toFile: original, atomically: true, encoding: .utf8)
    let off = try runCLI(["import-config", original])
    #expect(off.status == 0, "\(off.stderr)")
    #expect(
      off.stdout.contains(
        "\n[messaging.webpush]\n; Web Push and UnifiedPush (new): set subject = mailto:you@example.org here and "
          + "delete this line\nenabled = false\n"), "\(off.stdout)")
    #expect(off.stderr.contains("Web Push is off in the result"), "\(off.stderr)")
    let offPush = try PushConfig(try ConfigFile(parsing: off.stdout, name: "imported"))
    #expect(offPush.webPush == nil && offPush.webPushOff == "disabled")

    try "[messaging.webpush]\nsubject = mailto:ops@example.org\n".write(
      toFile: original, atomically: true, encoding: .utf8)
    let on = try runCLI(["import-config", original])
    #expect(on.status == 0, "\(on.stderr)")
    let push = try PushConfig(try ConfigFile(parsing: on.stdout, name: "imported"))
    #expect(push.webPush?.subject == "mailto:ops@example.org")
    #expect(!on.stdout.contains("enabled = false") && !on.stderr.contains("Web Push is off"))
  }

  @Test func importConfigSaysWhenTheResultWouldNotStart() throws {
    let fixture = try OpsDatabase()
    let original = fixture.directory + "/config.ini"
    try "[messaging.ios]\nenabled = true\n[messaging.ios.apns]\nkeyFile = /nowhere/AuthKey.p8\n".write(
      toFile: original, atomically: true, encoding: .utf8)
    let result = try runCLI(["import-config", original])
    #expect(result.status == 1)
    #expect(result.stdout.contains("[messaging.ios.apns]\nkeyFile = /nowhere/AuthKey.p8\n"), "printed anyway")
    #expect(result.stderr.contains("does not validate"))
    #expect(result.stderr.contains("keyId"))
    #expect(result.stderr.contains("not readable here"))

    let missing = try runCLI(["import-config", fixture.directory + "/missing.ini"])
    #expect(missing.status == 1)
    #expect(missing.stderr.contains("cannot read"))
  }
}
