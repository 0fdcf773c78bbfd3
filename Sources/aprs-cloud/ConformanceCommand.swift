import APRS
import Config
import Push

/// `aprs-cloud conformance URL [--callsign CALL-SSID] [--ca-file FILE] [--json]`: the `/v1` protocol checked black-box against
/// any server, as a public client.
enum ConformanceCommand: Command {
  static let name = "conformance"
  static let summary = "check a server's /v1 against docs/protocol.md, as a public client"
  static let usage = """
    usage: aprs-cloud conformance URL [--callsign CALL-SSID] [--ca-file FILE] [--json]

    Runs the /v1 protocol (docs/protocol.md) against the server at URL
    (http:// or https://, with any path prefix the API sits under) as a public
    client would: HTTP requests only, no database, no operator access. Each
    check is named after the section it checks and printed PASS, FAIL or SKIP
    with the reason:

      info, health, transport, passcode, identity, error-bodies, register,
      sync, sync-cursor, heartbeat, opt-ins-off, avatars, long-poll,
      limits-retry-after, unregister, unregister-empty-token

    A check is SKIPped when the server does not offer what it needs (no
    longpoll in /v1/info's features) or when running it would change a
    station the run did not create.

    The run registers CALL-SSID and another SSID of the same call (the SSID
    below it) as sync-only and android devices with made-up tokens (nothing is
    pushed: no message is addressed to them), and unregisters every device it
    registered. A station that was not registered before the run is
    unregistered whole at the end; one that was (/v1/settings tells, without
    changing anything) keeps everything but the run's device, and the checks
    that would change it are skipped. The rate-limit probe sends at most 64
    heartbeats of the run's own device. A run creates up to two stations,
    counted by the server's limit on new stations per client address (30 an
    hour by default), and uploads two avatar icons.

    options:
      --callsign CALL-SSID   the station to register (default CONFRM-15: a call
                             without a digit, which no licensed amateur has);
                             the passcode is computed from its base call
      --ca-file FILE         trust this CA bundle (PEM) for https:// instead of
                             the system's (a test site, a private CA)
      --json                 print one JSON document instead of lines:
                             {"server","station","checks":[{"name","section",
                             "status","reason"}],"notes","passed","failed",
                             "skipped"}

    Exit status: 0 when no check FAILed (SKIPs allowed), 1 when one did, 2 for
    wrong usage or a server that does not answer at all.
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    let parsed: Arguments
    let station: StationAddress
    let base: String
    do {
      parsed = try Arguments(arguments, options: ["callsign", "ca-file"], flags: ["json"])
      guard parsed.positionals.count == 1 else {
        throw UsageError(parsed.positionals.isEmpty ? "URL is missing" : "only one URL, please")
      }
      base = try baseURL(parsed.positionals[0])
      do throws(CallsignError) {
        station = try StationAddress(parsing: parsed.options["callsign"] ?? ConformanceRun.defaultStation)
      } catch {
        throw UsageError("--callsign: \(error)")
      }
    } catch {
      printError("aprs-cloud conformance: \(error)\n\n\(usage)")
      return .usage
    }
    PushService.globalInit()
    let run = ConformanceRun(
      transport: ConformanceHTTP(base: base, caFile: parsed.options["ca-file"]), station: station,
      runID: randomRunID())
    let results: [CheckResult]
    do throws(ConformanceTransportError) {
      results = try run.run()
    } catch {
      printError("aprs-cloud conformance: \(base) does not answer: \(error)")
      return .usage
    }
    if parsed.options["json"] != nil {
      print(
        ConformanceReport.json(results, notes: run.notes, server: base, station: station.description),
        terminator: "")
    } else {
      print(ConformanceReport.lines(results, notes: run.notes), terminator: "")
    }
    return ConformanceReport.exitStatus(results)
  }

  /// `url` without a trailing `/`, when it is `http://` or `https://` with a host and no query or fragment.
  static func baseURL(_ url: String) throws(UsageError) -> String {
    let lower = url.lowercased()
    guard let scheme = ["http://", "https://"].first(where: { lower.hasPrefix($0) }) else {
      throw UsageError("URL must start with http:// or https:// (\(url))")
    }
    guard url.count > scheme.count, !url.contains("?"), !url.contains("#"), !url.contains(" ") else {
      throw UsageError("URL needs a host and no query, fragment or space (\(url))")
    }
    var base = url
    while base.hasSuffix("/") { base.removeLast() }
    return base
  }

  /// Eight hex digits for the run's push tokens.
  static func randomRunID() -> String {
    let value = UInt32.random(in: .min ... .max)
    let hex = String(value, radix: 16)
    return String(repeating: "0", count: 8 - hex.count) + hex
  }
}
