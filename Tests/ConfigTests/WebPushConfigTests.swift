import Config
import Testing

/// `[messaging.webpush] enabled` defaults to true (Web Push needs no account anywhere); without `subject` it starts
/// off with a warning that says what to do, and `enabled = true` by hand without it is a startup error.
@Suite struct WebPushConfigTests {
  static let file = "/etc/aprs-cloud/aprs-cloud.ini"

  func parse(_ text: String, environment: [String: String] = [:]) throws(ConfigError) -> PushConfig {
    try PushConfig(
      try ConfigFile(parsing: text, name: Self.file, directory: "/etc/aprs-cloud", environment: environment))
  }

  func failure(_ text: String, environment: [String: String] = [:]) -> ConfigError? {
    do throws(ConfigError) {
      _ = try parse(text, environment: environment)
      return nil
    } catch {
      return error
    }
  }

  @Test func webPushIsOnByDefault() throws {
    // A subject alone, or with the section named only by the environment: on.
    let bare = try parse("[messaging.webpush]\nsubject = mailto:ops@example.org\n")
    #expect(bare.webPush?.subject == "mailto:ops@example.org" && bare.webPushOff == nil)
    #expect(bare.warnings.isEmpty)
    let fromEnvironment = try parse(
      "[server]\nworkers = 2\n",
      environment: [
        ConfigFile.environmentName(section: "messaging.webpush", key: "subject"): "https://example.org"
      ])
    #expect(fromEnvironment.webPush?.subject == "https://example.org")
  }

  /// An upgrade never turns the service off: without `subject` (and without `enabled`) Web Push starts off with
  /// a warning, whatever else the file says.
  @Test(arguments: [
    "[server]\nworkers = 2\n", "", "[aprsis]\nlogin = N0CALL\n[messaging.webpush]\n",
    "[messaging.android]\nenabled = false\n",
  ])
  func withoutASubjectWebPushIsOffAndWarned(text: String) throws {
    let config = try parse(text)
    #expect(config.webPush == nil)
    #expect(config.webPushOff == PushConfig.noSubjectOff)
    #expect(config.warnings == [config.webPushWarning!])
  }

  @Test func theWarningNamesTheFileTheKeyAndBothFixes() throws {
    let warning = try #require(try parse("[server]\nworkers = 2\n").webPushWarning)
    #expect(
      warning
        == "/etc/aprs-cloud/aprs-cloud.ini: Web Push and UnifiedPush are off: messaging.webpush.subject is not set. "
        + "To turn them on, set `subject = mailto:you@example.org` (or https://…) in [messaging.webpush]; "
        + "`enabled = false` there silences this")
    // The listener logs it as one value: nothing of it may be cut (Logger.maxValueLength).
    #expect(warning.count <= 300 - 85 + Self.file.count)
    let noFile = try #require(try PushConfig(ConfigFile(environment: [:])).webPushWarning)
    #expect(noFile.hasPrefix("(no config file): "), "\(noFile)")
    #expect(noFile.contains("give a config file with `subject = "), "\(noFile)")
    #expect(noFile.count <= 300)
  }

  @Test func enabledTrueByHandWithoutASubjectNamesTheFileTheKeyAndBothFixes() throws {
    let error = try #require(failure("[messaging.webpush]\nenabled = yes\n"))
    guard case .missingValue(let key, let source, _) = error else {
      Issue.record("expected missingValue, got \(error)")
      return
    }
    #expect(key == "messaging.webpush.subject")
    #expect(source == Self.file)
    #expect(
      error.description
        == "/etc/aprs-cloud/aprs-cloud.ini: messaging.webpush.subject is not set: Web Push is on by default and "
        + "needs a contact for the push services: set `subject = mailto:you@example.org` (or https://…) in "
        + "[messaging.webpush], or `enabled = false` there")
    #expect(error.description.count <= 300 - 85 + Self.file.count)
    #expect(failure("[messaging.webpush]\nenabled = true\n") == error)
    // From the environment alike.
    #expect(
      failure("", environment: ["APRS_CLOUD_MESSAGING_WEBPUSH_ENABLED": "true"])?.description.contains(
        "messaging.webpush.subject is not set") == true)
  }

  @Test func enabledFalseWithoutASubjectIsFineAndQuiet() throws {
    let off = try parse("[aprsis]\nlogin = N0CALL\n[messaging.webpush]\nenabled = false\n")
    #expect(off.webPush == nil && off.webPushOff == "disabled" && off.warnings.isEmpty)
    let fromEnvironment = try PushConfig(
      ConfigFile(environment: ["APRS_CLOUD_MESSAGING_WEBPUSH_ENABLED": "false"]))
    #expect(fromEnvironment.webPush == nil && fromEnvironment.webPushOff == "disabled")
    // Its other keys are still checked, so a typo shows before someone turns it on.
    #expect(failure("[messaging.webpush]\nenabled = false\nallowPrivateEndpoints = maybe\n") != nil)
  }
}
