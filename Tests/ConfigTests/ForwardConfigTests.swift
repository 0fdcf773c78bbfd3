import Config
import Testing

/// `[forward]` and `[forward.email]`: on by default (ntfy and webhooks need nothing), email only with an SMTP
/// server; every bad value an error naming its key.
@Suite struct ForwardConfigTests {
  func parse(_ text: String) throws(ConfigError) -> PushConfig {
    try PushConfig(
      try ConfigFile(parsing: text, name: "/etc/aprs-cloud/aprs-cloud.ini", directory: "/etc/aprs-cloud"))
  }

  func failure(_ text: String) -> String? {
    do throws(ConfigError) {
      _ = try parse(text)
      return nil
    } catch {
      return error.description
    }
  }

  @Test func forwardingIsOnByDefaultWithoutEmail() throws {
    let bare = try parse("[messaging.webpush]\nenabled = false\n")
    #expect(bare.forward == PushConfig.Forward())
    #expect(bare.forward?.email == nil && bare.forward?.allowPrivateEndpoints == false)
    #expect(bare.forward?.perMinute == 600)
    #expect(try parse("[forward]\nenabled = false\n").forward == nil)
  }

  @Test func emailNeedsItsServerAndSender() throws {
    let config = try parse(
      """
      [forward]
      perMinute = 60
      allowPrivateEndpoints = true
      [forward.email]
      url = smtps://smtp.example.org:465
      from = aprs@example.org
      username = aprs@example.org
      password = secret

      """)
    #expect(config.forward?.perMinute == 60 && config.forward?.allowPrivateEndpoints == true)
    #expect(
      config.forward?.email
        == PushConfig.Email(
          url: "smtps://smtp.example.org:465", from: "aprs@example.org", username: "aprs@example.org",
          password: "secret"))
    #expect(
      try parse("[forward.email]\nurl = smtp://mail.example.org:587\nfrom = a@example.org\n").forward?.email
        != nil)
  }

  @Test(arguments: [
    ("[forward.email]\nfrom = a@example.org\n", "forward.email.url"),
    ("[forward.email]\nurl = smtps://smtp.example.org\n", "forward.email.from"),
    ("[forward.email]\nurl = https://smtp.example.org\nfrom = a@example.org\n", "forward.email.url"),
    ("[forward.email]\nurl = smtps://u@smtp.example.org/x\nfrom = a@example.org\n", "forward.email.url"),
    ("[forward.email]\nurl = smtps://smtp.example.org\nfrom = not an address\n", "forward.email.from"),
    ("[forward]\nperMinute = 0\n", "forward.perMinute"),
    ("[forward]\nallowPrivateEndpoints = maybe\n", "forward.allowPrivateEndpoints"),
    ("[forward]\ncaFile = /nonexistent/ca.pem\n", "forward.caFile"),
  ])
  func badValuesNameTheirKey(text: String, key: String) {
    let error = failure(text)
    #expect(error?.contains(key) == true, "\(error ?? "no error")")
  }

  @Test func theKeysAreKnown() {
    for key in ["enabled", "perMinute", "caFile", "allowPrivateEndpoints"] {
      #expect(ConfigSchema.all.knows(section: "forward", key: key))
    }
    for key in ["url", "from", "username", "password"] {
      #expect(ConfigSchema.all.knows(section: "forward.email", key: key))
    }
  }
}
