import Config
import Platform
import Store

/// `aprs-cloud status --db PATH`: what `/health` and the key metrics say, for a terminal.
enum StatusCommand: Command {
  static let name = "status"
  static let summary = "the server's health and key numbers, readable in a terminal"
  static let usage = """
    usage: aprs-cloud status --db PATH [--config FILE]

    Prints what /health and /metrics say, from the database both processes
    share: whether the listener runs (its lease) and since when, its APRS-IS
    connection (server, login verified or receive-only, last line, line
    rate), its filter (stations, bytes, entries) and counters, each push provider's
    state, the outbox depth, stations live and registered, devices by
    platform, and messages stored. The first line, health, says ok, or
    degraded: and what needs attention (listener not running or not
    connected, a receive-only login, a spent transmit budget for sent
    messages, a stopped push provider, a push
    provider's warning such as an APNs production setting the devices
    contradict).

    Reads the database read-only, so it is safe while the server runs. Exit
    status 0 when the report was made (whatever it says), 1 when the database
    cannot be read.

    options:
      --db PATH       the SQLite database (default: [server] database of --config)
      --config FILE   the INI configuration, for stationExpiry and the database
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    runReporting(name, usage: usage) { () throws(CommandFailure) -> ExitStatus in
      let parsed = try parseArguments(arguments, options: ["db", "config"])
      guard parsed.positionals.isEmpty else {
        throw CommandFailure("unexpected argument '\(parsed.positionals[0])'", usage: true)
      }
      let settings = try OperatorSettings.load(parsed)
      let database = try settings.openReadOnly()
      defer { closeInspected(database) }
      let now = epochMilliseconds()
      let report: Report
      do throws(StoreError) {
        report = Report(
          database: settings.database, now: now, expiryMs: settings.stationExpiryMs,
          stats: try database.stats(now: now, expiryMs: settings.stationExpiryMs),
          listener: try database.listenerStatus(), push: try database.pushStatus(),
          walBytes: database.walFileBytes(), bans: try database.bans(now: now))
      } catch {
        throw CommandFailure("\(settings.database): \(error)")
      }
      print(report.text, terminator: "")
      return .success
    }
  }

  /// Everything `status` prints, from values read beforehand (so tests can build one).
  struct Report {
    var database: String
    var now: Int64
    var expiryMs: Int64
    var stats: DatabaseStats
    /// What the listener last published.
    var listener: ListenerStatus
    /// What the push sender last published.
    var push: PushStatus
    var walBytes: Int64
    /// The operator's bans in force (`aprs-cloud ban`).
    var bans: [Ban] = []

    var running: Bool { stats.lease.map { $0.expiresAt > now } ?? false }
    var connected: Bool { running && listener.connected }

    /// What needs attention; empty when all is well.
    var problems: [String] {
      var problems: [String] = []
      if !running {
        problems.append("listener not running")
      } else if !connected {
        problems.append("listener not connected to APRS-IS")
      } else if listener.receiveOnly {
        problems.append("receive-only APRS-IS login (no ACKs are sent)")
      }
      if running && listener.sendBudgetFull {
        problems.append("transmit budget spent (copies of sent messages wait their turn)")
      }
      for provider in DevicePlatform.allCases {
        if case .stopped = push.state(of: provider) {
          problems.append(
            "\(provider.rawValue) push \(Format.printable(push.state(of: provider).description))")
        } else if let warning = push.warnings[provider] {
          problems.append("\(provider.rawValue) push: \(Format.printable(warning))")
        }
      }
      return problems
    }

    var text: String {
      var lines: [(String, String)] = []
      let problems = problems
      lines.append(("health", problems.isEmpty ? "ok" : "degraded: " + problems.joined(separator: "; ")))
      lines.append(
        (
          "database",
          "\(database): schema \(stats.schemaVersion), \(Format.bytes(stats.databaseBytes)), WAL "
            + Format.bytes(walBytes)
        ))
      lines.append(
        contentsOf: listenerLines.enumerated().map { ($0.offset == 0 ? "listener" : "", $0.element) })
      lines.append(("push", pushLine))
      lines.append(("forwards", push.counters.forwardSummary))
      var outbox = "\(stats.outboxPending) pending, \(stats.outboxFailed) failed"
      if let oldest = stats.oldestPendingAt { outbox += "; oldest queued " + Format.age(now - oldest) }
      lines.append(("outbox", outbox))
      lines.append(
        (
          "stations",
          "\(stats.liveStations) live of \(stats.stations) registered "
            + "(live: heard within \(ConfigFile.formatDuration(expiryMs)))"
        ))
      lines.append(
        (
          "devices",
          DevicePlatform.allCases.map { platform in
            let count = stats.devices[platform] ?? DeviceCount(total: 0, live: 0)
            return "\(platform.rawValue) \(count.total) (\(count.live) live)"
          }.joined(separator: ", ")
        ))
      var messages =
        "\(stats.totalMessages) stored (\(stats.messages[.received] ?? 0) received, "
        + "\(stats.messages[.sent] ?? 0) sent)"
      if stats.lastMessageTimestamp > 0 {
        messages += "; newest " + Format.timeAndAge(stats.lastMessageTimestamp, now: now)
      }
      lines.append(("messages", messages))
      if !bans.isEmpty {
        let shown = bans.prefix(5).map { "\($0.target.kind.rawValue) \($0.target)" }.joined(separator: ", ")
        lines.append(
          ("bans", "\(bans.count) in force: \(shown)\(bans.count > 5 ? ", …" : "") (aprs-cloud ban --list)"))
      }
      return lines.map { label, value in
        label.isEmpty
          ? String(repeating: " ", count: 11) + value
          : label + String(repeating: " ", count: 11 - label.count) + value
      }.joined(separator: "\n") + "\n"
    }

    /// `text` made safe for a terminal, nil when absent or empty.
    private func printable(_ text: String?) -> String? {
      text.flatMap { $0.isEmpty ? nil : Format.printable($0) }
    }

    private var listenerLines: [String] {
      var lines: [String] = []
      guard let lease = stats.lease else {
        return ["not running (no listener has run on this database)"]
      }
      guard running else {
        return ["not running (its lease lapsed " + Format.timeAndAge(lease.expiresAt, now: now) + ")"]
      }
      var first =
        "running as \(Format.printable(lease.holder)) since " + Format.timeAndAge(lease.acquiredAt, now: now)
      if connected {
        first += "; connected to \(printable(listener.server) ?? "?")"
        if let login = printable(listener.login) { first += " as \(login)" }
        first += listener.receiveOnly ? ", receive-only (no ACKs)" : ", verified"
      } else {
        first += "; not connected to APRS-IS (state \(printable(listener.state) ?? "unknown"))"
      }
      lines.append(first)
      if !connected, let error = printable(listener.lastError) { lines.append("last error: \(error)") }
      var traffic = "last line "
      if let last = listener.lastLineAt {
        traffic += Format.age(now - last)
      } else {
        traffic += "never"
      }
      traffic += "; \(ListenerStatus.decimal(listener.lineRate)) lines/s over the last minute"
      lines.append(traffic)
      lines.append(
        "filter: \(listener.filterSize) stations, \(listener.filterBytes) bytes, "
          + "\(listener.filterEntries) entries, \(listener.filterExactStations) stations exact")
      let counters: [(ListenerCounter, String)] = [
        (.linesRead, "lines"), (.messagesStored, "messages stored"), (.duplicates, "duplicates"),
        (.acksSent, "ACKs sent"), (.reconnects, "reconnects"), (.drops, "lines dropped"),
        (.invalidLines, "invalid lines"),
      ]
      lines.append(
        "since start: "
          + counters.map { counter, label in "\(listener.counts[counter]) \(label)" }.joined(separator: ", "))
      return lines
    }

    private var pushLine: String {
      DevicePlatform.allCases.map { provider in
        "\(provider.rawValue) " + Format.printable(push.state(of: provider).description)
      }.joined(separator: "; ")
    }
  }
}
