import Config
import Testing

@testable import Push

@Suite struct WebPushServiceWatchTests {
  @Test("three refusals in a row, the same way, to one service make a warning; an accepted push clears it")
  func streaks() {
    var watch = WebPushServiceWatch(subject: "mailto:ops@example.org")
    watch.refused(host: "web.push.apple.com", kind: "403 BadJwtToken")
    watch.refused(host: "web.push.apple.com", kind: "403 BadJwtToken")
    #expect(watch.warning == nil)
    // Another service's refusals are their own streak.
    watch.refused(host: "fcm.googleapis.com", kind: "403")
    #expect(watch.warning == nil)
    watch.refused(host: "web.push.apple.com", kind: "403 BadJwtToken")
    #expect(
      watch.warning
        == "web.push.apple.com refuses every push with 403 BadJwtToken (3 in a row); check the VAPID contact"
        + " [messaging.webpush] subject = mailto:ops@example.org")
    watch.succeeded(host: "fcm.googleapis.com")
    #expect(watch.warning != nil)
    watch.succeeded(host: "web.push.apple.com")
    #expect(watch.warning == nil)
  }

  @Test("a different refusal starts a new streak")
  func differentKinds() {
    var watch = WebPushServiceWatch(subject: "mailto:ops@example.org")
    for kind in ["403 BadJwtToken", "400", "403 BadJwtToken", "403 BadJwtToken"] {
      watch.refused(host: "web.push.apple.com", kind: kind)
    }
    #expect(watch.warning == nil)
  }

  @Test("with a local contact the warning says it is one")
  func localContact() throws {
    var watch = WebPushServiceWatch(subject: "mailto:root@myhost")
    for _ in 0..<4 { watch.refused(host: "web.push.apple.com", kind: "403 BadJwtToken") }
    let warning = try #require(watch.warning)
    #expect(warning.contains("(4 in a row)"))
    #expect(warning.contains("subject = mailto:root@myhost (myhost is a local name"))
  }

  @Test(
    "contacts on local names, and those the push services take",
    arguments: [
      ("mailto:root@myhost", "myhost"), ("mailto:ops@localhost", "localhost"),
      ("mailto:a@LOCALHOST.", "localhost"),
      ("mailto:a@pi.local", "pi.local"), ("mailto:a@box.localdomain", "box.localdomain"),
      ("mailto:a@x.invalid", "x.invalid"), ("mailto:a@app.localhost", "app.localhost"),
      ("https://myhost/contact", "myhost"), ("https://server.local:8443/", "server.local"),
      ("mailto:ops@example.org", nil), ("https://aprs.example.org/contact", nil), ("mailto:a@b.c", nil),
      ("https://[::1]/", nil), ("mailto:no-at-sign", nil),
    ] as [(String, String?)])
  func localNames(subject: String, host: String?) {
    #expect(PushConfig.WebPush.localContactHost(subject) == host)
  }
}
