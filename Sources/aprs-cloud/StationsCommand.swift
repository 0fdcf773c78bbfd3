import Config
import Platform
import Store

/// `aprs-cloud stations --db PATH [--all]`: the registered stations, one per line; with `STATION`, that
/// one station and its settings.
enum StationsCommand: Command {
  static let name = "stations"
  static let summary = "list the registered stations (live ones; --all for every one), or show one"
  static let usage = """
    usage: aprs-cloud stations --db PATH [--config FILE] [--all]
           aprs-cloud stations --top --db PATH [--config FILE]
           aprs-cloud stations STATION --db PATH [--config FILE] [--release-claim | --approve-claim]
           aprs-cloud stations STATION --export FILE --db PATH [--config FILE]

    Lists the stations registered in the database, one per line, by address:
    platform (android, ios, or - for a sync-only desktop), live or expired,
    push tokens, stored messages, when it was last heard (register or
    heartbeat) and its avatar (set, cleared or none). A station is live while
    heard within [server] stationExpiry (7d unless --config says otherwise):
    only live stations are in the listener's filter and get pushes. Without
    --all only the live ones are listed.

    With STATION (CALL or CALL-SSID): that station alone, with its claim
    (POST /v1/claim: who holds the station key, since when), its settings
    (POST /v1/settings: the ACK policy, blocked calls, mute, quiet hours and
    the calls that pass them, whether keyless devices are taken, the SSIDs
    it collects and ACKs for, retention), its subscriptions, its forward
    targets (secrets masked) and its audit trail, newest first: claims, key
    rotations, releases, lapses, settings changes and whole-station
    unregisters, each with the client address (IPv4 address or IPv6 /64) it
    came from.

    --top lists who did the most in the last hour, ten of each: stations by
    registrations, heartbeats, messages sent (/v1/send) and push tokens
    registered, and client addresses (IPv4 address or IPv6 /64) by new
    stations and by claims: where to look before `aprs-cloud ban`.

    --release-claim releases the station's claim: the holder's key stops
    working, the station and its settings stay (its forward targets, the
    owner's addresses, are deleted), and the next POST /v1/claim claims it
    anew. The release is recorded in the audit trail.

    --approve-claim proves the station's claim for its holder: a claim made
    while the station was in use is provisional (it changes nothing for the
    station's other devices) until a code pushed to one of them is entered;
    the operator's approval stands in for the code, and no device can take
    an approved claim back. The approval is recorded in the audit trail.

    --export FILE writes everything of STATION that moves with it to FILE
    (- for standard output): its stored messages, sends with their states,
    subscription entries, read markers, settings and claim, as the JSON
    document POST /v1/export answers its owner. `aprs-cloud import FILE`
    reads it into another server's database.

    Reads the database read-only (but for --release-claim and --approve-claim), so it is safe
    while the server runs.

    options:
      --db PATH       the SQLite database (default: [server] database of --config)
      --config FILE   the INI configuration, for stationExpiry and the database
      --all           list expired stations too
      --top           the busiest stations and addresses of the last hour
      --release-claim release STATION's claim (writes the database)
      --approve-claim prove STATION's claim (writes the database)
      --export FILE   write STATION's export document to FILE (- for stdout)
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    runReporting(name, usage: usage) { () throws(CommandFailure) -> ExitStatus in
      let parsed = try parseArguments(
        arguments, options: ["db", "config", "export"],
        flags: ["all", "release-claim", "approve-claim", "top"])
      guard parsed.positionals.count <= 1 else {
        throw CommandFailure("unexpected argument '\(parsed.positionals[1])'", usage: true)
      }
      if let station = parsed.positionals.first { return try showStation(station, parsed) }
      let settings = try OperatorSettings.load(parsed)
      let database = try settings.openReadOnly()
      defer { closeInspected(database) }
      let now = epochMilliseconds()
      if parsed.options["top"] != nil {
        do throws(StoreError) {
          print(render(try database.topTalkers(now: now)), terminator: "")
        } catch {
          throw CommandFailure("\(settings.database): \(error)")
        }
        return .success
      }
      let all = parsed.options["all"] != nil
      let stations: [StationSummary]
      do throws(StoreError) {
        stations = try database.stationSummaries(now: now, expiryMs: settings.stationExpiryMs)
      } catch {
        throw CommandFailure("\(settings.database): \(error)")
      }
      print(render(stations, all: all, now: now, expiryMs: settings.stationExpiryMs), terminator: "")
      return .success
    }
  }

  /// The `--top` lists, each under its heading (`none` when empty).
  static func render(_ top: TopTalkers) -> String {
    let lists: [(String, [TopTalkers.Entry])] = [
      ("stations by registrations this hour", top.registrations),
      ("stations by heartbeats this hour", top.heartbeats),
      ("stations by messages sent in the last hour", top.sends),
      ("stations by push tokens registered in the last hour", top.devices),
      ("addresses by new stations this hour", top.newStationsByAddress),
      ("addresses by claims this hour", top.claimsByAddress),
    ]
    var text = ""
    for (title, entries) in lists {
      text += title + ":\n"
      if entries.isEmpty {
        text += "  none\n"
      } else {
        text += Format.table(entries.map { ["  " + Format.printable($0.name), String($0.count)] })
      }
    }
    return text
  }

  /// The table and its summary line.
  static func render(_ stations: [StationSummary], all: Bool, now: Int64, expiryMs: Int64) -> String {
    let live = stations.filter(\.live).count
    let shown = all ? stations : stations.filter(\.live)
    var text = ""
    if !shown.isEmpty {
      var rows = [["STATION", "PLATFORM", "STATE", "DEVICES", "MESSAGES", "LAST HEARD", "AVATAR"]]
      for station in shown {
        rows.append([
          station.address, station.platform?.rawValue ?? "-", station.live ? "live" : "expired",
          String(station.devices),
          String(station.messages), Format.timeAndAge(station.heartbeatAt, now: now), station.avatar.rawValue,
        ])
      }
      text += Format.table(rows)
    }
    let expiry = ConfigFile.formatDuration(expiryMs)
    var summary = "\(stations.count) station\(stations.count == 1 ? "" : "s") registered, \(live) live"
    summary += " (heard within \(expiry))"
    if !all && stations.count > live {
      summary += "; \(stations.count - live) expired not shown (--all lists them)"
    }
    return text + summary + "\n"
  }
}

/// `aprs-cloud messages STATION --db PATH [--limit N]`: a station's stored messages.
enum MessagesCommand: Command {
  static let name = "messages"
  static let summary = "print a station's stored messages"
  static let usage = """
    usage: aprs-cloud messages STATION --db PATH [--config FILE] [--limit N]

    Prints the newest N (default 50) messages stored for STATION (CALL or
    CALL-SSID), oldest first, one per line: when the server stored it (UTC),
    `from PEER` for a received message or `to PEER` for a sent one, the
    message number in braces when it has one, for a message sent through
    /v1/send its state in brackets ([pending] while it is being
    transmitted, then [acked], [rejected] or [expired]), and the text
    (control characters shown as \\xNN, bidirectional controls such as
    U+202E as <U+202E>, so a text reads as what it holds; the stored text
    is as received). A sent message's time is that of its last state change.

    Reads the database read-only: the station's sync cursor is not moved, so
    its phone still gets these messages.

    options:
      --db PATH       the SQLite database (default: [server] database of --config)
      --config FILE   the INI configuration
      --limit N       at most N messages, 1-1000 (default 50)
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    runReporting(name, usage: usage) { () throws(CommandFailure) -> ExitStatus in
      let parsed = try parseArguments(arguments, options: ["db", "config", "limit"])
      guard parsed.positionals.count == 1 else {
        throw CommandFailure(
          parsed.positionals.isEmpty ? "STATION is missing" : "only one STATION, please", usage: true)
      }
      var limit = 50
      if let text = parsed.options["limit"] {
        guard let value = Int(text), (1...1000).contains(value) else {
          throw CommandFailure("--limit must be a number from 1 to 1000, got '\(text)'", usage: true)
        }
        limit = value
      }
      let address = parsed.positionals[0].uppercased()
      let settings = try OperatorSettings.load(parsed)
      let database = try settings.openReadOnly()
      defer { closeInspected(database) }
      let registered: Bool
      let messages: [StoredMessage]
      do throws(StoreError) {
        registered = try database.station(address) != nil
        messages = try database.recentMessages(station: address, limit: limit)
      } catch {
        throw CommandFailure("\(settings.database): \(error)")
      }
      guard registered else { throw CommandFailure("\(Format.printable(address)) is not registered") }
      print(render(messages, station: address), terminator: "")
      return .success
    }
  }

  /// One line per message, or a note that there are none.
  static func render(_ messages: [StoredMessage], station: String) -> String {
    guard !messages.isEmpty else { return "\(Format.printable(station)): no messages stored\n" }
    var text = ""
    for message in messages {
      var peer = (message.direction == .sent ? "to " : "from ") + Format.printable(message.peer)
      // An entry for another SSID of the call (setting `ssids`) names its addressee.
      if let to = message.to { peer += " to " + Format.printable(to) }
      let number = message.msgno.map { "  {" + Format.printable($0) + "}" } ?? ""
      let state = message.state.map { "  [" + $0.rawValue + "]" } ?? ""
      text +=
        Format.time(message.timestamp) + "  " + peer + number + state + "  " + Format.printable(message.text)
        + "\n"
    }
    return text
  }
}
