import Foundation
import Testing

@testable import API
@testable import Store

@Suite struct StatusPageTests {
  @Test func thePageShowsTheStateAndEscapesWhatComesFromOutside() {
    var listener = ListenerStatus(
      state: "online", connected: true, verified: true, receiveOnly: false, server: "<b>evil</b>:14580",
      login: "N0CALL-10", filterSize: 3, filterBytes: 120, filterEntries: 4, filterExactStations: 3,
      lastLineAt: 1_800_000_000_000, updatedAt: 1_800_000_000_000,
      lastError: "bad \"quote\" & \u{202E}bidi\u{1B}[31m")
    listener.counts[.linesRead] = 200
    listener.counts[.notForUs] = 50
    listener.history.add(lines: 20, stored: 2, acks: 2, at: 1_799_999_990_000)
    var stats = DatabaseStats()
    stats.stations = 3
    stats.liveStations = 2
    var push = PushStatus()
    push.counters[forward: .webhook, .delivered] = 12
    push.counters[forward: .webhook, .privateAddress] = 1
    push.counters[forward: .email, .confirmation] = 3
    let page = StatusPage(
      now: 1_800_000_010_000, health: "degraded", reasons: ["<script>alert(1)</script>"], running: true,
      listener: listener, stats: stats, push: push, sends: SendStatus(),
      bans: [Ban(target: .call("KJ7ABC"), reason: "<i>spam</i>", createdAt: 0)]
    ).html
    #expect(page.hasPrefix("<!doctype html>") && page.contains("http-equiv=\"refresh\" content=\"10\""))
    #expect(!page.contains("<script>") && page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
    #expect(page.contains("connected</span> to &lt;b&gt;evil&lt;/b&gt;:14580 as N0CALL-10, verified"))
    #expect(page.contains("bad &quot;quote&quot; &amp; \u{FFFD}bidi\u{FFFD}[31m"))
    #expect(
      page.contains("120 of 510 bytes, 4 entries")
        && page.contains("50 lines for nobody here (25% of lines read)"))
    #expect(page.contains("3 registered, 2 live") && page.contains("KJ7ABC: &lt;i&gt;spam&lt;/i&gt;"))
    #expect(page.contains("<th>devices</th><td>none</td>"), "no device yet: said, not left out")
    #expect(page.components(separatedBy: "<polyline").count == 4 && page.contains("(peak 20)"))
    #expect(
      page.contains("forwards</th><td>email 3 confirmation; webhook 12 delivered, 1 private address"),
      "\(page)")
  }

  @Test func onlyThePrivateListenerGetsThePage() throws {
    let fixture = try APIFixture()
    let hidden = fixture.handler.handle(
      APIRequest(method: "GET", path: "/status", contentType: nil, body: []))
    #expect(hidden.status == 404)
    let shown = fixture.handler.handle(
      APIRequest(method: "GET", path: "/status", contentType: nil, body: [], viaMetricsListener: true))
    #expect(shown.status == 200 && shown.contentType == "text/html; charset=utf-8")
    #expect(
      shown.headers.contains {
        $0.name == "Content-Security-Policy" && $0.value.hasPrefix("default-src 'none'")
      })
    #expect(
      String(decoding: shown.body, as: UTF8.self).contains(
        "<h1>aprs-cloud: <span class=\"ok\" id=\"health\">ok"))
  }
}
