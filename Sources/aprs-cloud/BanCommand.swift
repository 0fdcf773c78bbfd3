import Config
import Platform
import Store

/// `aprs-cloud ban TARGET [--for DURATION] [--reason TEXT]`, `aprs-cloud ban --list`: the operator's
/// server-wide bans (`sql/014_bans.sql`).
enum BanCommand: Command {
  static let name = "ban"
  static let summary = "ban an APRS call or a client address server-wide (--list shows the bans)"
  static let usage = """
    usage: aprs-cloud ban CALL|ADDRESS --db PATH [--config FILE] [--for DURATION] [--reason TEXT]
           aprs-cloud ban --list --db PATH [--config FILE]

    Bans, on the whole server, one abusive sender or client:
      CALL      an APRS call (KJ7ABC bans every SSID of it, KJ7ABC-7 only that
                one): the listener drops its messages to every station (never
                stored, pushed, forwarded or ACKed, counted as
                aprs_cloud_listener_messages_total{outcome="banned"}), and every
                /v1 call for a station of that call gets 403.
      ADDRESS   a client address or block (203.0.113.7, 203.0.113.0/24,
                2001:db8:1:2::1, 2001:db8:1::/48; an IPv6 address alone is its
                /64): every /v1 call from it but /v1/info gets 403.
    Banning the same target again replaces its end and reason. The ban takes
    effect with the next batch the listener stores and the next request the
    responder answers; nothing needs a restart. `aprs-cloud unban` lifts it;
    `aprs-cloud status` and /metrics (aprs_cloud_bans) show the bans in force.

    options:
      --db PATH        the SQLite database (default: [server] database of --config)
      --config FILE    the INI configuration, for the database
      --for DURATION   the ban ends after this long (30m, 12h, 7d, 90s); default:
                       until unbanned
      --reason TEXT    why (shown by --list and status)
      --list           list the bans in force and change nothing
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    runReporting(name, usage: usage) { () throws(CommandFailure) -> ExitStatus in
      let parsed = try parseArguments(arguments, options: ["db", "config", "for", "reason"], flags: ["list"])
      let settings = try OperatorSettings.load(parsed)
      let now = epochMilliseconds()
      if parsed.options["list"] != nil {
        guard parsed.positionals.isEmpty else { throw CommandFailure("--list takes no target", usage: true) }
        let database = try settings.openReadOnly()
        defer { closeInspected(database) }
        do throws(StoreError) {
          print(render(try database.bans(now: now), now: now), terminator: "")
        } catch {
          throw CommandFailure("\(settings.database): \(error)")
        }
        return .success
      }
      let target = try Self.target(parsed.positionals)
      if let refusal = BannedBlock.refusal(parsed.positionals[0]) { throw CommandFailure(refusal) }
      var until: Int64?
      if let text = parsed.options["for"] {
        guard let duration = ConfigFile.parseDuration(text), duration > 0 else {
          throw CommandFailure("--for '\(text)' is not a duration such as 30m, 12h or 7d", usage: true)
        }
        until = now + duration
      }
      let reason = Format.printable(parsed.options["reason"] ?? "")
      guard reason.utf8.count <= 200 else { throw CommandFailure("--reason is longer than 200 bytes") }
      let database = try settings.openForWriting()
      defer { database.close() }
      do throws(StoreError) {
        try database.ban(Ban(target: target, reason: reason, createdAt: now, until: until))
      } catch {
        throw CommandFailure("\(settings.database): \(error)")
      }
      let end = until.map { "until " + Format.time($0) } ?? "until unbanned"
      print("banned \(target.kind.rawValue) \(target) \(end)" + (reason.isEmpty ? "" : ": \(reason)"))
      return .success
    }
  }

  /// The one positional argument as a call or an address block.
  static func target(_ positionals: [String]) throws(CommandFailure) -> BanTarget {
    guard positionals.count == 1 else {
      throw CommandFailure(
        positionals.isEmpty ? "name a CALL or an ADDRESS" : "one target at a time", usage: true)
    }
    guard let target = BanTarget(parsing: positionals[0]) else {
      if let refusal = BannedBlock.refusal(positionals[0]) { throw CommandFailure(refusal) }
      throw CommandFailure(
        "'\(Format.printable(positionals[0]))' is neither a call (KJ7ABC, KJ7ABC-7) nor an address"
          + " (203.0.113.7, 2001:db8::/48)")
    }
    return target
  }

  /// The bans as a table, or a line saying there are none.
  static func render(_ bans: [Ban], now: Int64) -> String {
    guard !bans.isEmpty else { return "no bans in force\n" }
    var rows = [["KIND", "TARGET", "SINCE", "UNTIL", "REASON"]]
    for ban in bans {
      rows.append([
        ban.target.kind.rawValue, ban.target.description, Format.time(ban.createdAt),
        ban.until.map(Format.time) ?? "permanent", ban.reason.isEmpty ? "-" : ban.reason,
      ])
    }
    return Format.table(rows)
  }
}

/// `aprs-cloud unban CALL|ADDRESS`: lifts a ban.
enum UnbanCommand: Command {
  static let name = "unban"
  static let summary = "lift a ban made with `aprs-cloud ban`"
  static let usage = """
    usage: aprs-cloud unban CALL|ADDRESS --db PATH [--config FILE]

    Lifts the ban on CALL or ADDRESS, written exactly as it was banned (an IPv6
    address alone stands for its /64, as in `ban`). Exits 1 when there was none.

    options:
      --db PATH       the SQLite database (default: [server] database of --config)
      --config FILE   the INI configuration, for the database
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    runReporting(name, usage: usage) { () throws(CommandFailure) -> ExitStatus in
      let parsed = try parseArguments(arguments, options: ["db", "config"])
      let target = try BanCommand.target(parsed.positionals)
      let settings = try OperatorSettings.load(parsed)
      let database = try settings.openForWriting()
      defer { database.close() }
      let lifted: Bool
      do throws(StoreError) {
        lifted = try database.unban(target)
      } catch {
        throw CommandFailure("\(settings.database): \(error)")
      }
      guard lifted else { throw CommandFailure("no ban on \(target.kind.rawValue) \(target)") }
      print("unbanned \(target.kind.rawValue) \(target)")
      return .success
    }
  }
}
