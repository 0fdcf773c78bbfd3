import Config
import Testing

/// `[server] maxParkedPerStation` and `maxParkedPerAddress`: their defaults, read from the file and
/// the environment, and a clear error naming the key for a value out of range.
@Suite struct ParkCapsConfigTests {
  @Test func defaultsFitAStationsDevicesAndOneBusyAddress() throws {
    let config = try ServerConfig(ConfigFile())
    #expect(config.maxParkedPerStation == 8)
    #expect(config.maxParkedPerAddress == 256)
    #expect(config.maxParked == 10_000)
  }

  @Test func bothAreReadFromTheFileAndTheEnvironment() throws {
    let file = try ConfigFile(
      parsing: "[server]\nmaxParkedPerStation = 3\nmaxParkedPerAddress = 40\n",
      environment: ["APRS_CLOUD_SERVER_MAXPARKEDPERADDRESS": "50"])
    let config = try ServerConfig(file)
    #expect(config.maxParkedPerStation == 3)
    #expect(config.maxParkedPerAddress == 50)
    #expect(file.warnings(for: .all).isEmpty)
  }

  @Test(arguments: [
    ("maxParkedPerStation", "0", "1 to 1000"), ("maxParkedPerStation", "1001", "1 to 1000"),
    ("maxParkedPerStation", "few", "1 to 1000"), ("maxParkedPerAddress", "0", "1 to 1000000"),
    ("maxParkedPerAddress", "1000001", "1 to 1000000"),
  ])
  func aValueOutOfRangeNamesTheKey(key: String, value: String, range: String) throws {
    let file = try ConfigFile(parsing: "[server]\n\(key) = \(value)\n")
    #expect(
      throws: ConfigError.invalidValue(
        key: "server.\(key)", value: value, source: "config.ini line 2",
        reason: "expected a whole number from \(range)")
    ) {
      try ServerConfig(file)
    }
  }
}
