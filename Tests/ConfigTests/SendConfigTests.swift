import Config
import Testing

@Suite struct SendConfigTests {
  @Test func defaultsAreTheDecayingHalfHourAndTheProtocolsLimits() throws {
    let config = try SendConfig(ConfigFile())
    #expect(config == SendConfig())
    #expect(config.enabled && config.perMinute == 10 && config.inFlight == 20)
    #expect(config.scheduleMs == [0, 31, 62, 124, 248, 496, 992, 1984].map { $0 * 1000 })
    #expect(config.ackWaitMs == 60_000 && config.pollMs == 250)
    #expect(config.sendsPerAddressPerMinute == 20 && config.sendsPerMinuteGlobal == 30)
    #expect(config.transmitBudgetPerMinute == 60)
    #expect(try ServerConfig(ConfigFile()).send == config, "both programs read [send] through ServerConfig")
  }

  @Test func everyKeyIsReadAndKnown() throws {
    let file = try ConfigFile(
      parsing: """
        [send]
        enabled = false
        perMinute = 3
        inFlight = 5
        sendsPerAddressPerMinute = 7
        sendsPerMinuteGlobal = 11
        transmitBudgetPerMinute = 13
        schedule = 0, 31s, 2m,  10m
        ackWait = 2m
        poll = 100ms
        """)
    let config = try SendConfig(file)
    #expect(!config.enabled && config.perMinute == 3 && config.inFlight == 5)
    #expect(config.scheduleMs == [0, 31_000, 120_000, 600_000])
    #expect(config.ackWaitMs == 120_000 && config.pollMs == 100)
    #expect(config.sendsPerAddressPerMinute == 7 && config.sendsPerMinuteGlobal == 11)
    #expect(config.transmitBudgetPerMinute == 13)
    #expect(file.warnings(for: .all).isEmpty)
    let environment = try SendConfig(ConfigFile(environment: ["APRS_CLOUD_SEND_SCHEDULE": "5,40"]))
    #expect(environment.scheduleMs == [5_000, 40_000])
  }

  @Test(
    "a schedule whose copies are closer than 31 s, or that is malformed, is refused",
    arguments: ["0, 30", "0, 31, 61", "0,30500ms", "", "0,,31", "x", "31, 0", "0, 2d", "0, -31"])
  func badSchedules(text: String) throws {
    let file = try ConfigFile(parsing: "[send]\nschedule = \(text)\n")
    #expect(throws: ConfigError.self) { try SendConfig(file) }
  }

  @Test(
    "the limits and the budget must be positive numbers",
    arguments: [
      "sendsPerAddressPerMinute = 0", "sendsPerMinuteGlobal = -1", "transmitBudgetPerMinute = 0",
      "transmitBudgetPerMinute = many",
    ])
  func badLimits(line: String) throws {
    let file = try ConfigFile(parsing: "[send]\n\(line)\n")
    #expect(throws: ConfigError.self) { try SendConfig(file) }
  }

  @Test func theSpacingRuleIsExplainedInTheError() throws {
    let file = try ConfigFile(parsing: "[send]\nschedule = 0, 30\n")
    do {
      _ = try SendConfig(file)
      Issue.record("accepted")
    } catch {
      #expect(error.description.contains("send.schedule") && error.description.contains("31 s apart"))
    }
  }

  @Test func aSingleCopyAndTheMostCopiesAreFine() throws {
    #expect(try SendConfig(ConfigFile(parsing: "[send]\nschedule = 0\n")).scheduleMs == [0])
    let twenty = (0..<20).map { String($0 * 31) }.joined(separator: ",")
    #expect(try SendConfig(ConfigFile(parsing: "[send]\nschedule = \(twenty)\n")).scheduleMs.count == 20)
    let many = (0..<21).map { String($0 * 31) }.joined(separator: ",")
    #expect(throws: ConfigError.self) { try SendConfig(ConfigFile(parsing: "[send]\nschedule = \(many)\n")) }
  }
}
