import Logging
import Store

/// The operator's status page (`GET /status` on the private loopback listener, beside `/metrics`): one HTML
/// document, no script, no outside assets, refreshing itself every ``refreshSeconds``. Pure: it renders what the
/// responder read from the database (`APIHandler.statusPage()`); every text from outside (the server's name,
/// errors, reasons) is HTML-escaped.
struct StatusPage {
  static let refreshSeconds = 10
  static let contentType = "text/html; charset=utf-8"
  /// The filter line's limit on APRS-IS, bytes (CR LF included).
  static let filterLimit = 510

  var now: Int64
  /// What `/health` says: `ok` or `degraded`, and why.
  var health: String
  var reasons: [String]
  var running: Bool
  var listener: ListenerStatus
  var stats: DatabaseStats
  var push: PushStatus
  var sends: SendStatus
  var bans: [Ban]

  /// The page.
  var html: String {
    var page = """
      <!doctype html>
      <html lang="en"><head><meta charset="utf-8">
      <meta http-equiv="refresh" content="\(Self.refreshSeconds)">
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <title>aprs-cloud status: \(Self.escape(health))</title>
      <style>
      body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fafafa}
      h1{font-size:1.3em} h2{font-size:1.05em;margin:1.2em 0 .3em}
      table{border-collapse:collapse} td,th{padding:.15em .8em .15em 0;text-align:left;vertical-align:top}
      th{font-weight:600;color:#555} .ok{color:#17692b} .bad{color:#a31515} .muted{color:#777}
      svg{background:#fff;border:1px solid #ddd} .lines{stroke:#999;color:#666} .stored{stroke:#1565c0;color:#1565c0} .acks{stroke:#2e7d32;color:#2e7d32}
      </style></head><body>

      """
    page += "<h1>aprs-cloud: <span class=\"\(health == "ok" ? "ok" : "bad")\" id=\"health\">"
    page += Self.escape(health) + "</span></h1>\n"
    if !reasons.isEmpty {
      page +=
        "<ul id=\"reasons\">" + reasons.map { "<li class=\"bad\">\(Self.escape($0))</li>" }.joined()
        + "</ul>\n"
    }
    page += section("APRS-IS", id: "aprsis", rows: aprsisRows)
    page += section("Filter", id: "filter", rows: filterRows)
    page += "<h2>The last hour</h2>\n" + chart + "\n"
    page += section("Stations and devices", id: "stations", rows: stationRows)
    page += section("Messages and sending", id: "messages", rows: messageRows)
    page += section("Push", id: "push", rows: pushRows)
    page += section("Bans", id: "bans", rows: banRows)
    page += "<p class=\"muted\">Made \(Self.time(now)); refreshes every \(Self.refreshSeconds) s."
    page += " The same numbers: <code>aprs-cloud status</code>, <a href=\"/metrics\">/metrics</a>.</p>\n"
    return page + "</body></html>\n"
  }

  private var aprsisRows: [(String, String)] {
    guard running else { return [("listener", "<span class=\"bad\">not running</span>")] }
    var rows = [
      (
        "connection",
        listener.connected
          ? "<span class=\"ok\">connected</span> to " + Self.escape(listener.server ?? "?") + " as "
            + Self.escape(listener.login ?? "?")
            + (listener.verified ? ", verified" : ", <span class=\"bad\">receive-only</span>")
          : "<span class=\"bad\">not connected</span> (" + Self.escape(listener.state ?? "unknown") + ")"
      ),
      ("last line", listener.lastLineAt.map { Self.age(now - $0) + " ago" } ?? "never"),
      ("lines per second", ListenerStatus.decimal(listener.lineRate)),
      ("reconnects", String(listener.counts[.reconnects])),
    ]
    if let started = listener.startedAt { rows.append(("running since", Self.time(started))) }
    if let error = listener.lastError {
      rows.append(("last error", "<span class=\"bad\">" + Self.escape(error) + "</span>"))
    }
    return rows
  }

  private var filterRows: [(String, String)] {
    let read = listener.counts[.linesRead]
    let overDelivered = listener.counts[.notForUs]
    let share = read > 0 ? " (\(overDelivered * 100 / read)% of lines read)" : ""
    return [
      ("size", "\(listener.filterBytes) of \(Self.filterLimit) bytes, \(listener.filterEntries) entries"),
      ("stations", "\(listener.filterSize), \(listener.filterExactStations) named exactly"),
      ("over-delivery", "\(overDelivered) lines for nobody here\(share)"),
    ]
  }

  private var stationRows: [(String, String)] {
    let devices = DevicePlatform.allCases.compactMap { platform -> (String, String)? in
      let count = stats.devices[platform]?.total ?? 0
      return count > 0 ? ("devices: \(platform.rawValue)", String(count)) : nil
    }
    return [("stations", "\(stats.stations) registered, \(stats.liveStations) live")]
      + (devices.isEmpty ? [("devices", "none")] : devices)
  }

  private var messageRows: [(String, String)] {
    [
      (
        "stored",
        "\(stats.messages[.received] ?? 0) received, \(stats.messages[.sent] ?? 0) sent"
          + (stats.lastMessageTimestamp > 0
            ? "; newest " + Self.age(now - stats.lastMessageTimestamp) + " ago" : "")
      ),
      (
        "since the listener started",
        "\(listener.counts[.messagesStored]) stored, \(listener.counts[.duplicates]) duplicates, "
          + "\(listener.counts[.acksSent]) ACKs sent, \(listener.counts[.blocked]) blocked, "
          + "\(listener.counts[.banned]) banned"
      ),
      (
        "sends",
        "\(sends.inFlight) in flight, \(sends.transmissions) copies sent, \(sends[.acked]) acked, "
          + "\(sends[.expired]) expired"
          + (running && listener.sendBudgetFull ? ", <span class=\"bad\">transmit budget spent</span>" : "")
      ),
    ]
  }

  private var pushRows: [(String, String)] {
    var rows: [(String, String)] = []
    for platform in DevicePlatform.allCases {
      let state = push.state(of: platform)
      var text =
        "<span class=\"\(state == .ok ? "ok" : (state == .off ? "muted" : "bad"))\">"
        + Self.escape(state.description) + "</span>"
      let counters = push.counters[platform]
      let sent = counters[.accepted]
      if sent > 0 || counters.tokensDeleted > 0 {
        text += ", \(sent) accepted, \(counters[.failed]) failed, \(counters.tokensDeleted) tokens deleted"
      }
      if let warning = push.warnings[platform] {
        text += " <span class=\"bad\">" + Self.escape(warning) + "</span>"
      }
      rows.append((platform.rawValue, text))
    }
    rows.append(
      (
        "outbox",
        "\(stats.outboxPending) pending, \(stats.outboxFailed) failed"
          + (stats.oldestPendingAt.map { "; oldest " + Self.age(now - $0) } ?? "")
      ))
    rows.append(("forwards", Self.escape(push.counters.forwardSummary)))
    return rows
  }

  private var banRows: [(String, String)] {
    guard !bans.isEmpty else { return [("", "none")] }
    return bans.map { ban in
      (
        ban.target.kind.rawValue,
        Self.escape(ban.target.description) + (ban.reason.isEmpty ? "" : ": " + Self.escape(ban.reason))
          + (ban.until.map { " (until " + Self.time($0) + ")" } ?? "")
      )
    }
  }

  /// Three lines over the 60 minutes (lines read, messages stored, ACKs sent), each scaled to its own peak,
  /// with the peaks in the legend.
  private var chart: String {
    let series = listener.history.series(endingAt: now)
    let width = 600
    let height = 120
    func points(_ value: (ActivityHistory.Minute) -> Int) -> (String, Int) {
      let peak = series.map(value).max() ?? 0
      let step = Double(width) / Double(max(1, series.count - 1))
      let text = series.enumerated().map { index, minute in
        let x = Double(index) * step
        let y = Double(height - 4) - Double(value(minute)) / Double(max(1, peak)) * Double(height - 8)
        return "\(Int(x)),\(Int(y))"
      }.joined(separator: " ")
      return (text, peak)
    }
    let (lines, linesPeak) = points(\.lines)
    let (stored, storedPeak) = points(\.stored)
    let (acks, acksPeak) = points(\.acks)
    return """
      <svg id="chart" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)" role="img" \
      aria-label="activity per minute over the last hour">
      <polyline class="lines" fill="none" points="\(lines)"/>
      <polyline class="stored" fill="none" stroke-width="2" points="\(stored)"/>
      <polyline class="acks" fill="none" stroke-width="2" points="\(acks)"/>
      </svg>
      <p class="muted">Per minute: <span class="lines">lines read</span> (peak \(linesPeak)), \
      <span class="stored">messages stored</span> (peak \(storedPeak)), \
      <span class="acks">ACKs sent</span> (peak \(acksPeak)).</p>
      """
  }

  private func section(_ title: String, id: String, rows: [(String, String)]) -> String {
    var text = "<h2>\(title)</h2>\n<table id=\"\(id)\">"
    for (label, value) in rows { text += "<tr><th>\(Self.escape(label))</th><td>\(value)</td></tr>" }
    return text + "</table>\n"
  }

  /// `text` safe inside HTML text and attribute values; control characters become U+FFFD.
  static func escape(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&#39;"
      default:
        if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
          || (0x202A...0x202E).contains(scalar.value)
          || (0x2066...0x2069).contains(scalar.value)
        {
          out += "\u{FFFD}"
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    return out
  }

  /// `12 s`, `5 min`, `3 h`, `2 d`.
  static func age(_ ms: Int64) -> String {
    let seconds = max(0, ms / 1000)
    if seconds < 120 { return "\(seconds) s" }
    if seconds < 7200 { return "\(seconds / 60) min" }
    if seconds < 172_800 { return "\(seconds / 3600) h" }
    return "\(seconds / 86_400) d"
  }

  /// UTC `2026-11-29 14:00:00Z`.
  static func time(_ ms: Int64) -> String {
    let stamp = Logger.timestamp(epochMs: ms)  // 2026-11-29T14:00:00.123Z
    return String(stamp.prefix { $0 != "." }.map { $0 == "T" ? " " : $0 }) + "Z"
  }
}
