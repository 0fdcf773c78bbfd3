import Config
import Logging
import Testing

@Suite struct ServerConfigTests {
  @Test func defaults() throws {
    let config = try ServerConfig(ConfigFile())
    #expect(config == ServerConfig())
    #expect(config.listen == nil)
    #expect(config.database == "./var/aprs-cloud.sqlite")
    #expect(config.workers == 4)
    #expect(config.logLevel == .info)
    #expect(config.stationExpiryMs == 7 * 86_400_000)
    #expect(config.ringSize == 50)
    #expect(config.maxBody == 65_536)
    #expect(config.busyTimeoutMs == 5000)
    #expect(config.registrationsPerHour == 60)
    #expect(config.heartbeatsPerHour == 60)
    #expect(config.avatarUploadsPerHour == 20)
  }

  @Test func everyKeyIsRead() throws {
    let text = """
      [server]
      listen = /run/aprs/fcgi.sock
      database = "/var/lib/aprs cloud/db.sqlite"
      workers = 16
      logLevel = debug
      stationExpiry = 3d
      ringSize = 100
      maxBody = 32768
      busyTimeout = 250ms

      [ratelimit]
      registrationsPerHour = 10
      heartbeatsPerHour = 11
      avatarUploadsPerHour = 12
      """
    let file = try ConfigFile(parsing: text)
    let config = try ServerConfig(file)
    #expect(config.listen == "/run/aprs/fcgi.sock")
    #expect(config.database == "/var/lib/aprs cloud/db.sqlite")
    #expect(config.workers == 16)
    #expect(config.logLevel == .debug)
    #expect(config.stationExpiryMs == 3 * 86_400_000)
    #expect(config.ringSize == 100)
    #expect(config.maxBody == 32768)
    #expect(config.busyTimeoutMs == 250)
    #expect(config.registrationsPerHour == 10)
    #expect(config.heartbeatsPerHour == 11)
    #expect(config.avatarUploadsPerHour == 12)
    #expect(file.warnings(for: .all).isEmpty)
  }

  @Test func environmentAndOverridesApply() throws {
    var file = try ConfigFile(
      parsing: "[server]\nworkers = 2\nlogLevel = warn\n",
      environment: ["APRS_CLOUD_SERVER_WORKERS": "3", "APRS_CLOUD_RATELIMIT_HEARTBEATSPERHOUR": "7"])
    #expect(try ServerConfig(file).workers == 3)
    #expect(try ServerConfig(file).logLevel == .warn)
    #expect(try ServerConfig(file).heartbeatsPerHour == 7)
    file.override("server", "workers", "5", source: "command line --workers")
    file.override("server", "logLevel", "error", source: "command line --log-level")
    #expect(try ServerConfig(file).workers == 5)
    #expect(try ServerConfig(file).logLevel == .error)
  }

  @Test(arguments: [
    ("workers", "0", "server.workers"), ("workers", "257", "server.workers"),
    ("logLevel", "verbose", "server.logLevel"), ("stationExpiry", "soon", "server.stationExpiry"),
    ("ringSize", "1001", "server.ringSize"), ("maxBody", "10", "server.maxBody"),
    ("busyTimeout", "2m", "server.busyTimeout"), ("listen", "", "server.listen"),
    ("database", "", "server.database"),
  ])
  func invalidServerValuesNameTheKey(key: String, value: String, name: String) throws {
    let file = try ConfigFile(parsing: "[server]\n\(key) = \"\(value)\"\n")
    do {
      _ = try ServerConfig(file)
      Issue.record("\(key) = \(value) was accepted")
    } catch {
      guard case .invalidValue(let reported, let text, let source, _) = error else {
        Issue.record("unexpected \(error)")
        return
      }
      #expect(reported == name)
      #expect(text == value)
      #expect(source == "config.ini line 2")
      #expect(error.description.hasPrefix("config.ini line 2: \(name): "))
    }
  }

  @Test func invalidRateLimitNamesTheKey() throws {
    let file = ConfigFile(environment: ["APRS_CLOUD_RATELIMIT_HEARTBEATSPERHOUR": "0"])
    #expect(
      throws: ConfigError.invalidValue(
        key: "ratelimit.heartbeatsPerHour", value: "0",
        source: "environment APRS_CLOUD_RATELIMIT_HEARTBEATSPERHOUR",
        reason: "expected a whole number from 1 to 1000000")
    ) {
      try ServerConfig(file)
    }
  }

  @Test func limitKeysHaveTheirDefaultsAndAreRead() throws {
    let defaults = try ServerConfig(ConfigFile())
    #expect(defaults.newStationsPerAddressPerHour == 30)
    #expect(defaults.newStationsPerNetworkPerHour == 100)
    #expect(defaults.newStationsPerWideNetworkPerHour == 300)
    #expect(defaults.avatarUploadsPerAddressPerHour == 60)
    #expect(defaults.maxStations == 100_000)
    #expect(defaults.devicesPerStation == 10)
    #expect(defaults.avatarBytesTotal == 268_435_456)
    let text = """
      [ratelimit]
      newStationsPerAddressPerHour = 5
      newStationsPerNetworkPerHour = 50
      avatarUploadsPerAddressPerHour = 6

      [limits]
      maxStations = 1000
      devicesPerStation = 3
      avatarBytesTotal = 1048576
      """
    let file = try ConfigFile(
      parsing: text,
      environment: [
        "APRS_CLOUD_LIMITS_MAXSTATIONS": "2000",
        "APRS_CLOUD_RATELIMIT_NEWSTATIONSPERWIDENETWORKPERHOUR": "700",
      ])
    let config = try ServerConfig(file)
    #expect(config.newStationsPerAddressPerHour == 5)
    #expect(config.newStationsPerNetworkPerHour == 50)
    #expect(config.newStationsPerWideNetworkPerHour == 700)
    #expect(config.avatarUploadsPerAddressPerHour == 6)
    #expect(config.maxStations == 2000)
    #expect(config.devicesPerStation == 3)
    #expect(config.avatarBytesTotal == 1_048_576)
    #expect(file.warnings(for: .all).isEmpty)
  }

  @Test(arguments: [
    ("ratelimit", "newStationsPerAddressPerHour", "0"), ("ratelimit", "avatarUploadsPerAddressPerHour", "-1"),
    ("ratelimit", "newStationsPerNetworkPerHour", "0"),
    ("ratelimit", "newStationsPerWideNetworkPerHour", "x"),
    ("ratelimit", "newStationsPerWideNetworkPerHour", "1000001"),
    ("limits", "maxStations", "0"), ("limits", "devicesPerStation", "0"),
    ("limits", "devicesPerStation", "1001"),
    ("limits", "avatarBytesTotal", "-5"), ("limits", "avatarBytesTotal", "lots"),
  ])
  func invalidLimitsNameTheKey(section: String, key: String, value: String) throws {
    let file = try ConfigFile(parsing: "[\(section)]\n\(key) = \(value)\n")
    do {
      _ = try ServerConfig(file)
      Issue.record("\(key) = \(value) was accepted")
    } catch {
      guard case .invalidValue(let reported, _, _, _) = error else {
        Issue.record("unexpected \(error)")
        return
      }
      #expect(reported == "\(section).\(key)")
    }
  }

  @Test func logLevels() {
    #expect(LogLevel(name: "DEBUG") == .debug)
    #expect(LogLevel(name: "warning") == .warn)
    #expect(LogLevel(name: "trace") == nil)
    #expect(LogLevel.debug < .info && LogLevel.info < .warn && LogLevel.warn < .error)
    #expect(LogLevel.allCases.map(\.name) == ["debug", "info", "warn", "error"])
  }
}
