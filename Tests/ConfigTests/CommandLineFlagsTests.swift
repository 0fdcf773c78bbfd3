import Config
import Testing

@Suite struct CommandLineFlagsTests {
  @Test func valuesSwitchesAndHelp() throws {
    let flags = try CommandLineFlags(
      ["--db", "a.sqlite", "--log-level=debug", "--standby", "-h"], valued: ["--db", "--log-level"],
      switches: ["--standby"])
    #expect(flags.values == ["--db": "a.sqlite", "--log-level": "debug"])
    #expect(flags.switches == ["--standby"])
    #expect(flags.help)
  }

  @Test(arguments: [
    (["db"], "unexpected argument 'db'"),
    (["--nope", "x"], "unknown option '--nope'"),
    (["--db"], "--db needs a value"),
    (["--standby=yes"], "--standby takes no value"),
  ])
  func mistakesSayWhatIsWrong(arguments: [String], message: String) {
    #expect(throws: UsageError(message)) {
      try CommandLineFlags(arguments, valued: ["--db"], switches: ["--standby"])
    }
  }
}
