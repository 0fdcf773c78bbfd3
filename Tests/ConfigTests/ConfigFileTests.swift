import Config
import Testing

@Suite struct ConfigFileTests {
  @Test func parsesSectionsKeysCommentsAndQuotes() throws {
    let text = """
      ; a comment
      # another comment

      [server]
        database =  /var/lib/aprs.sqlite
      workers=8
      empty =
      quoted = "  spaced value  "
      hash = a # not a comment
      semicolon = "x ; y"

      [messaging.ios.apns]
      keyFile = "AuthKey_ABC.p8"
      bundleId = com.example.app
      """
    let config = try ConfigFile(parsing: text)
    #expect(try config.string("server", "database") == "/var/lib/aprs.sqlite")
    #expect(try config.string("server", "workers") == "8")
    #expect(try config.string("server", "empty") == "")
    #expect(try config.string("server", "quoted") == "  spaced value  ")
    #expect(try config.string("server", "hash") == "a # not a comment")
    #expect(try config.string("server", "semicolon") == "x ; y")
    #expect(try config.string("messaging.ios.apns", "keyFile") == "AuthKey_ABC.p8")
    #expect(try config.string("messaging.ios.apns", "bundleId") == "com.example.app")
    #expect(try config.string("server", "missing") == nil)
    #expect(config.hasSection("messaging.ios.apns"))
    #expect(!config.hasSection("messaging.ios"))
  }

  @Test func keysAreCaseSensitive() throws {
    let config = try ConfigFile(parsing: "[messaging.ios.apns]\nkeyFile = a.p8\n")
    #expect(try config.string("messaging.ios.apns", "keyFile") == "a.p8")
    #expect(try config.string("messaging.ios.apns", "keyfile") == nil)
    #expect(try config.string("messaging.ios.apns", "KEYFILE") == nil)
  }

  @Test func toleratesCRLFAndByteOrderMarkAndTabs() throws {
    let config = try ConfigFile(parsing: "\u{FEFF}[server]\r\n\tworkers\t=\t3\r\n")
    #expect(try config.int("server", "workers", default: 4, range: 1...256) == 3)
  }

  @Test func laterValueWinsAndIsReported() throws {
    let config = try ConfigFile(parsing: "[server]\nworkers = 2\nworkers = 5\n")
    #expect(try config.int("server", "workers", default: 4, range: 1...256) == 5)
    let warnings = config.warnings(for: .all)
    #expect(warnings == ["config.ini line 3: server.workers is set again; the value from line 2 is ignored"])
  }

  @Test func repeatedSectionHeadersMerge() throws {
    let config = try ConfigFile(
      parsing: "[server]\nworkers = 2\n[ratelimit]\nheartbeatsPerHour = 9\n[server]\nringSize = 7\n")
    #expect(try config.string("server", "workers") == "2")
    #expect(try config.string("server", "ringSize") == "7")
    #expect(config.warnings(for: .all).isEmpty)
  }

  @Test(arguments: [
    ("[server]\nworkers 4\n", 2, "expected key = value"),
    ("[server]\n= 4\n", 2, "expected key = value (the key is missing)"),
    ("workers = 4\n", 1, "workers is outside any section; put a [section] line above it"),
    ("\n\n[server\n", 3, "expected ']' at the end of the section header"),
    ("[]\n", 1, "invalid section name \"\" (letters, digits, '_' and '-', parts separated by '.')"),
    ("[a..b]\n", 1, "invalid section name \"a..b\" (letters, digits, '_' and '-', parts separated by '.')"),
    ("[a b]\n", 1, "invalid section name \"a b\" (letters, digits, '_' and '-', parts separated by '.')"),
    ("[server]\nwork ers = 4\n", 2, "invalid key \"work ers\" (letters, digits, '_' and '-')"),
    ("[server]\nx.y = 4\n", 2, "invalid key \"x.y\" (letters, digits, '_' and '-')"),
    ("[server]\n; ok\ndatabase = \"a.sqlite\n", 3, "the quoted value of database has no closing '\"'"),
    ("[server]\ndatabase = \"\n", 2, "the quoted value of database has no closing '\"'"),
  ])
  func syntaxErrorsNameTheLine(text: String, line: Int, reason: String) {
    #expect(throws: ConfigError.syntax(file: "config.ini", line: line, reason: reason)) {
      try ConfigFile(parsing: text)
    }
  }

  @Test func syntaxErrorDescriptionNamesFileAndLine() {
    var caught: ConfigError?
    do {
      _ = try ConfigFile(parsing: "[server]\n\n\n\n\n\n\n\n\n\n\nnonsense\n", name: "config.ini")
    } catch {
      caught = error
    }
    #expect(caught?.description == "config.ini line 12: expected key = value")
  }

  @Test func environmentNames() {
    #expect(ConfigFile.environmentName(section: "server", key: "database") == "APRS_CLOUD_SERVER_DATABASE")
    #expect(
      ConfigFile.environmentName(section: "messaging.ios.apns", key: "keyFile")
        == "APRS_CLOUD_MESSAGING_IOS_APNS_KEYFILE")
    #expect(ConfigFile.environmentName(section: "a-b", key: "c") == "APRS_CLOUD_A_B_C")
  }

  @Test func environmentOverridesTheFileAndOverridesWinOverBoth() throws {
    let environment = [
      "APRS_CLOUD_SERVER_WORKERS": "6",
      "APRS_CLOUD_MESSAGING_IOS_APNS_KEYFILE": "/env/key.p8",
      "APRS_CLOUD_SERVER_RINGSIZE": "9",
    ]
    var config = try ConfigFile(
      parsing: "[server]\nworkers = 2\nringSize = 3\n[messaging.ios.apns]\nkeyFile = file.p8\n",
      environment: environment)
    #expect(try config.int("server", "workers", default: 4, range: 1...256) == 6)
    #expect(try config.string("messaging.ios.apns", "keyFile") == "/env/key.p8")
    #expect(config.value("server", "workers")?.source == .environment("APRS_CLOUD_SERVER_WORKERS"))
    config.override("server", "workers", "12", source: "command line --workers")
    #expect(try config.int("server", "workers", default: 4, range: 1...256) == 12)
    #expect(config.value("server", "workers")?.source == .override("command line --workers"))
    #expect(try config.int("server", "ringSize", default: 50, range: 1...1000) == 9)
  }

  @Test func environmentAloneWorksWithoutAFile() throws {
    let config = ConfigFile(environment: ["APRS_CLOUD_SERVER_DATABASE": "/tmp/x.sqlite"])
    #expect(try config.path("server", "database", default: "./var/a.sqlite") == "/tmp/x.sqlite")
    #expect(try config.path("server", "other", default: "./var/a.sqlite") == "./var/a.sqlite")
  }

  @Test(arguments: [
    ("true", true), ("TRUE", true), ("yes", true), ("on", true), ("1", true), ("On", true),
    ("false", false), ("no", false), ("off", false), ("0", false), ("False", false),
  ])
  func booleans(text: String, expected: Bool) throws {
    let config = try ConfigFile(parsing: "[messaging.ios]\nenabled = \(text)\n")
    #expect(try config.bool("messaging.ios", "enabled", default: !expected) == expected)
  }

  @Test func badValuesNameTheKeyAndTheSource() throws {
    let config = try ConfigFile(
      parsing: "[messaging.ios]\nenabled = maybe\n[server]\nworkers = 0\nringSize = many\n",
      environment: ["APRS_CLOUD_SERVER_MAXBODY": "-5"])
    #expect(throws: ConfigError.self) { try config.bool("messaging.ios", "enabled", default: false) }
    func message(_ body: () throws(ConfigError) -> Void) -> String {
      do {
        try body()
        return "no error"
      } catch {
        return error.description
      }
    }
    #expect(
      message { () throws(ConfigError) in _ = try config.bool("messaging.ios", "enabled", default: false) }
        == #"config.ini line 2: messaging.ios.enabled: expected true or false (or yes/no, on/off, 1/0), got "maybe""#
    )
    #expect(
      message { () throws(ConfigError) in _ = try config.int("server", "workers", default: 4, range: 1...256)
      }
        == #"config.ini line 4: server.workers: expected a whole number from 1 to 256, got "0""#)
    #expect(
      message { () throws(ConfigError) in
        _ = try config.int("server", "ringSize", default: 50, range: 1...1000)
      }
        == #"config.ini line 5: server.ringSize: expected a whole number from 1 to 1000, got "many""#)
    #expect(
      message { () throws(ConfigError) in
        _ = try config.int("server", "maxBody", default: 65536, range: 1024...16_777_216)
      }
        == #"environment APRS_CLOUD_SERVER_MAXBODY: server.maxBody: expected a whole number from 1024 to 16777216, got "-5""#
    )
  }

  @Test(arguments: ["", " 4", "4 ", "4.0", "0x10", "1e3", "99999999999999999999999", "+", "--1"])
  func integersRejectGarbage(text: String) throws {
    let config = try ConfigFile(parsing: "[server]\nworkers = \"\(text)\"\n")
    #expect(throws: ConfigError.self) { try config.int("server", "workers", default: 4, range: 1...256) }
  }

  @Test func integersAcceptSignsWithinRange() throws {
    let config = try ConfigFile(parsing: "[a]\nx = -3\ny = +7\n")
    #expect(try config.int("a", "x", default: 0, range: -5...5) == -3)
    #expect(try config.int("a", "y", default: 0, range: 0...10) == 7)
  }

  @Test(arguments: [
    ("250ms", Int64(250)), ("30s", 30_000), ("5m", 300_000), ("2h", 7_200_000), ("7d", 604_800_000),
    ("45", 45_000), ("0", 0), ("7D", 604_800_000), ("1500MS", 1500),
  ])
  func durations(text: String, milliseconds: Int64) throws {
    #expect(ConfigFile.parseDuration(text) == milliseconds)
    let config = try ConfigFile(parsing: "[server]\nstationExpiry = \(text)\n")
    #expect(try config.duration("server", "stationExpiry", default: 1, range: 0...Int64.max) == milliseconds)
  }

  @Test(arguments: [
    "", "s", "5 m", "-5s", "5w", "1h30m", "1.5h", "ms", "99999999999999999999d", "9999999999999999d",
  ])
  func durationsRejectGarbage(text: String) {
    #expect(ConfigFile.parseDuration(text) == nil)
  }

  @Test func durationRangeErrorsUseUnits() throws {
    let config = try ConfigFile(parsing: "[server]\nstationExpiry = 10s\n")
    #expect(
      throws: ConfigError.invalidValue(
        key: "server.stationExpiry", value: "10s", source: "config.ini line 2",
        reason: "expected a duration from 1m to 3650d")
    ) {
      try config.duration("server", "stationExpiry", default: 1, range: 60_000...3650 * 86_400_000)
    }
    #expect(ConfigFile.formatDuration(90 * 60_000) == "90m")
    #expect(ConfigFile.formatDuration(1500) == "1500ms")
    #expect(ConfigFile.formatDuration(0) == "0ms")
  }

  @Test func pathsResolveAgainstTheFilesDirectory() throws {
    let config = try ConfigFile(
      parsing:
        "[messaging.ios.apns]\nkeyFile = AuthKey.p8\nother = ./sub/x.p8\nabs = /etc/x\nhome = ~/k.p8\n",
      name: "/etc/aprs-cloud/aprs-cloud.ini", directory: "/etc/aprs-cloud",
      environment: ["HOME": "/home/op", "APRS_CLOUD_MESSAGING_IOS_APNS_ENVPATH": "rel/env.p8"])
    #expect(try config.path("messaging.ios.apns", "keyFile") == "/etc/aprs-cloud/AuthKey.p8")
    #expect(try config.path("messaging.ios.apns", "other") == "/etc/aprs-cloud/sub/x.p8")
    #expect(try config.path("messaging.ios.apns", "abs") == "/etc/x")
    #expect(try config.path("messaging.ios.apns", "home") == "/home/op/k.p8")
    #expect(try config.path("messaging.ios.apns", "envPath") == "rel/env.p8")
    #expect(try config.path("messaging.ios.apns", "none") == nil)
  }

  @Test func pathsRejectEmptyAndControlCharacters() throws {
    let config = try ConfigFile(
      parsing: "[server]\ndatabase =\n", environment: ["APRS_CLOUD_SERVER_LISTEN": "a\u{1}b"])
    #expect(throws: ConfigError.self) { try config.path("server", "database") }
    #expect(throws: ConfigError.self) { try config.path("server", "listen") }
    #expect(throws: ConfigError.self) { try config.string("server", "listen") }
  }

  @Test func unknownSectionsKeysAndVariablesAreWarnings() throws {
    let text = """
      [server]
      wrokers = 4
      workers = 4
      [ratelimt]
      syncsPerHour = 1
      [messaging.ios.apns]
      keyFile = x.p8
      [aprsis]
      server = rotate.aprs2.net:14580
      """
    let config = try ConfigFile(
      parsing: text,
      environment: [
        "APRS_CLOUD_SERVER_WORKERS": "3", "APRS_CLOUD_SERVER_DATABSE": "x", "APRS_CLOUD_CONFIG": "/etc/a.ini",
        "APRS_CLOUD_MESSAGING_ANDROID_ENABLED": "1", "PATH": "/bin",
      ])
    #expect(
      config.warnings(for: .all) == [
        "config.ini line 2: unknown key wrokers in [server] is ignored",
        "config.ini line 4: unknown section [ratelimt] is ignored",
        "environment APRS_CLOUD_SERVER_DATABSE is not a known setting and is ignored",
      ])
    let narrow = ServerConfig.schema
    #expect(
      config.warnings(for: narrow).contains(
        "config.ini line 6: unknown section [messaging.ios.apns] is ignored"))
  }

  @Test func schemasMerge() {
    let merged = ServerConfig.schema.merging(
      ConfigSchema(sections: ["server": ["extra"], "aprsis": ["server"]], uncheckedSections: ["x"]))
    #expect(merged.knows(section: "server", key: "workers"))
    #expect(merged.knows(section: "server", key: "extra"))
    #expect(merged.knows(section: "aprsis", key: "server"))
    #expect(!merged.knows(section: "aprsis", key: "other"))
    #expect(merged.knows(section: "x.y", key: "anything"))
    #expect(!merged.knowsSection("xy"))
  }

  @Test func loadsAFileAndReportsAMissingOne() throws {
    let directory = "/tmp/aprs-cloud-config-test-\(getpid())"
    let path = directory + "/aprs.ini"
    _ = mkdir(directory, 0o700)
    defer {
      unlink(path)
      rmdir(directory)
    }
    let text = "[server]\ndatabase = data/a.sqlite\nworkers = 2\n"
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    #expect(fd >= 0)
    _ = text.withCString { write(fd, $0, strlen($0)) }
    close(fd)
    let config = try ConfigFile.load(path: path, environment: [:])
    #expect(try config.path("server", "database") == directory + "/data/a.sqlite")
    #expect(config.value("server", "workers")?.source == .file(name: path, line: 3))
    #expect(
      throws: ConfigError.unreadable(path: directory + "/nope.ini", reason: "No such file or directory")
    ) {
      try ConfigFile.load(path: directory + "/nope.ini", environment: [:])
    }
  }

  @Test func processEnvironmentIsRead() {
    setenv("APRS_CLOUD_TEST_PROBE", "a=b c", 1)
    defer { unsetenv("APRS_CLOUD_TEST_PROBE") }
    #expect(ConfigFile.processEnvironment()["APRS_CLOUD_TEST_PROBE"] == "a=b c")
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif
