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

  /// `/health` is public: what a push service (any host a subscriber names) answers must never reach it. The
  /// warning names the status and the host, and an Apple reason only when it is one Apple documents.
  @Test(
    "a hostile push service's answer never reaches the warning",
    arguments: [
      #"{"reason":"<script>alert(document.cookie)</script>"}"#,
      #"{"reason":"BadJwtToken<img src=x onerror=alert(1)>"}"#,
      "{\"reason\":\"" + String(repeating: "A", count: 5000) + "\"}",
      "<html><body><script>alert(1)</script>" + String(repeating: "B", count: 5000) + "</body></html>",
    ])
  func hostileAnswers(body: String) throws {
    var watch = WebPushServiceWatch(subject: "mailto:ops@example.org")
    let response = ProviderResponse(status: 403, body: Array(body.utf8))
    for _ in 0..<3 {
      watch.refused(host: "push.evil.example", kind: RetryPolicy.failureKind(response, platform: .webpush))
    }
    let warning = try #require(watch.warning)
    #expect(
      warning
        == "push.evil.example refuses every push with 403 (3 in a row); check the VAPID contact"
        + " [messaging.webpush] subject = mailto:ops@example.org")
    for fragment in ["<", ">", "script", "AAAA", "BBBB", "onerror"] { #expect(!warning.contains(fragment)) }
  }

  @Test("Apple's documented reasons are kept in the warning")
  func documentedReasons() throws {
    for reason in ["BadJwtToken", "Forbidden", "BadDeviceToken"] {
      var watch = WebPushServiceWatch(subject: "mailto:ops@example.org")
      let response = ProviderResponse(status: 403, body: Array(#"{"reason":"\#(reason)"}"#.utf8))
      for _ in 0..<3 {
        watch.refused(host: "web.push.apple.com", kind: RetryPolicy.failureKind(response, platform: .webpush))
      }
      #expect(try #require(watch.warning).contains("with 403 \(reason) (3 in a row)"))
    }
  }

  /// Many hosts (a subscriber can name any) cannot make the warning long: three are named, the rest counted.
  @Test("at most three services are named")
  func manyServices() throws {
    var watch = WebPushServiceWatch(subject: "mailto:ops@example.org")
    for index in 0..<50 {
      for _ in 0..<3 { watch.refused(host: "push\(index).example", kind: "400") }
    }
    let warning = try #require(watch.warning)
    #expect(warning.contains("push0.example refuses every push with 400 (3 in a row)"))
    #expect(warning.contains("and 47 more push services refuse every push"), "\(warning)")
    #expect(!warning.contains("push3.example"))
    #expect(warning.utf8.count < 600)
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
