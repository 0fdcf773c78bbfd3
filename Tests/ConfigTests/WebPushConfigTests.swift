import Config
import Testing

/// `[messaging.webpush] enabled` defaults to true (issue 13: Web Push needs no account anywhere), and on without
/// `subject` is a startup error that says what to do.
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

  func noFileFailure() -> ConfigError? {
    do throws(ConfigError) {
      _ = try PushConfig(ConfigFile(environment: [:]))
      return nil
    } catch {
      return error
    }
  }

  @Test func webPushIsOnByDefault() throws {
    // A subject alone, or with the section named only by the environment: on.
    let bare = try parse("[messaging.webpush]\nsubject = mailto:ops@example.org\n")
    #expect(bare.webPush?.subject == "mailto:ops@example.org" && bare.webPushOff == nil)
    let fromEnvironment = try parse(
      "[server]\nworkers = 2\n",
      environment: [
        ConfigFile.environmentName(section: "messaging.webpush", key: "subject"): "https://example.org"
      ])
    #expect(fromEnvironment.webPush?.subject == "https://example.org")
    // No section at all: on, so the subject is missing.
    #expect(failure("[server]\nworkers = 2\n") != nil)
    #expect(failure("") != nil)
    #expect(failure("[messaging.webpush]\nenabled = true\n") != nil)
    // Other providers' keys do not change it.
    #expect(failure("[messaging.android]\nenabled = false\n") != nil)
  }

  @Test func onWithoutASubjectNamesTheFileTheKeyAndBothFixes() throws {
    let error = try #require(failure("[server]\nworkers = 2\n"))
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
    // The listener logs it as one value: nothing of it may be cut (Logger.maxValueLength).
    #expect(error.description.count <= 300 - 85 + Self.file.count)
    // `enabled = true` by hand says the same.
    #expect(failure("[messaging.webpush]\nenabled = yes\n") == error)
  }

  @Test func withoutAFileTheErrorSaysHowToGiveOne() throws {
    let error = try #require(noFileFailure())
    #expect(
      error.description
        == "(no config file): messaging.webpush.subject is not set: Web Push is on by default and needs a "
        + "contact for the push services: give a config file (--config FILE or APRS_CLOUD_CONFIG) with "
        + "`subject = mailto:you@example.org` (or https://…) in [messaging.webpush], or `enabled = false` there"
    )
    #expect(error.description.count <= 300)
    // The environment's way out works too.
    let off = try PushConfig(ConfigFile(environment: ["APRS_CLOUD_MESSAGING_WEBPUSH_ENABLED": "false"]))
    #expect(off.webPush == nil && off.webPushOff == "disabled")
  }

  @Test func enabledFalseWithoutASubjectIsFine() throws {
    let off = try parse("[aprsis]\nlogin = N0CALL\n[messaging.webpush]\nenabled = false\n")
    #expect(off.webPush == nil && off.webPushOff == "disabled")
    // The same file without the line is on, so it needs the subject.
    #expect(failure("[aprsis]\nlogin = N0CALL\n[messaging.webpush]\n") != nil)
    // Its other keys are still checked, so a typo shows before someone turns it on.
    #expect(failure("[messaging.webpush]\nenabled = false\nallowPrivateEndpoints = maybe\n") != nil)
  }
}
