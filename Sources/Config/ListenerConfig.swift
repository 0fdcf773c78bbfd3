/// One APRS-IS server as the configuration names it: `HOST:PORT` (`[v6addr]:PORT` for a literal IPv6 address).
public struct APRSISServer: Sendable, Hashable, CustomStringConvertible {
  /// The host name or address, looked up again on every connect (pools like `rotate.aprs2.net` rotate).
  public var host: String
  /// The TCP port.
  public var port: Int

  public init(host: String, port: Int) {
    self.host = host
    self.port = port
  }

  /// `HOST:PORT`, or `[HOST]:PORT` when the host contains a `:`.
  public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

  /// Parses `HOST:PORT` or `[V6]:PORT`; nil when it is not one.
  public init?(parsing text: some StringProtocol) {
    let text = String(text)
    let host: Substring
    let portText: Substring
    if text.hasPrefix("[") {
      guard let close = text.firstIndex(of: "]"), text[close...].hasPrefix("]:") else { return nil }
      host = text[text.index(after: text.startIndex)..<close]
      portText = text[text.index(close, offsetBy: 2)...]
    } else {
      guard let colon = text.lastIndex(of: ":") else { return nil }
      host = text[..<colon]
      portText = text[text.index(after: colon)...]
      guard !host.contains(":") else { return nil }
    }
    guard !host.isEmpty, host.utf8.count <= 253,
      host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }),
      portText.utf8.count <= 5, portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
      let port = Int(portText), (1...65535).contains(port)
    else { return nil }
    self.host = String(host)
    self.port = port
  }
}

/// The listener's settings (`aprs-listener`), from `[aprsis]`, `[listener]` and the shared `[server]`.
///
/// ```ini
/// [aprsis]
/// servers = rotate.aprs2.net:14580            ; comma-separated HOST:PORT, tried in turn
/// login = N0CALL-10       ; the operator's service call; without login and passcode: receive-only
/// passcode = 13023
/// trackOutgoing = false   ; also store what registered stations send (b/ filter), direction "sent"
///
/// [server]
/// database = /var/lib/aprs-cloud/aprs-cloud.sqlite
/// stationExpiry = 7d
/// logLevel = info
/// ```
///
/// Tuning keys with safe defaults, mainly for tests: `[aprsis] watchdog` (60s), `reconnectDelay` (5s, the first
/// step of the refused-login backoff), `maxReconnectDelay` (5m), `connectTimeout` (10s); `[listener] queueSize` (10000 lines),
/// `queueBytes` (4 MiB: the same queue's bound in memory), `leaseTtl` (30s, renewed every third of it), `publishInterval` (10s: with the lease's renewal, one wake-up), `registrationPoll` (1s),
/// `ackInterval` (30s: APRS-IS drops an identical packet repeated within 30 s, so only tests lower it).
public struct ListenerConfig: Sendable, Equatable {
  /// The shared `[server]` settings (database, stationExpiry, logLevel, busyTimeout, ringSize).
  public var server = ServerConfig()
  /// User-filter port servers (14580), tried in turn.
  public var servers = [APRSISServer(host: "rotate.aprs2.net", port: 14580)]
  /// The login call; nil: receive-only with a generated name.
  public var login: String?
  /// The passcode of ``login``; -1 (or nil) logs in unverified.
  public var passcode: Int?
  /// Outgoing tracking: `b/` entries and messages sent by registered stations stored as "sent".
  public var trackOutgoing = false
  /// No line for this long: the link is dead, reconnect (ms).
  public var watchdogMs: Int64 = 60_000
  /// The first delay of the long backoff after a refused login; it doubles up to ``maxReconnectDelayMs`` (ms).
  /// Retries after an outage start at the smaller of 1 s and this (the listener's `OutageBackoff`).
  public var reconnectDelayMs: Int64 = 5_000
  /// The longest reconnect delay, of both backoffs (ms).
  public var maxReconnectDelayMs: Int64 = 300_000
  /// How long one TCP connect may take (ms).
  public var connectTimeoutMs: Int64 = 10_000
  /// Lines the reader may queue for the writer; beyond it lines are dropped (and counted).
  public var queueSize = 10_000
  /// The memory those queued lines may take, bytes (each line counts its length plus
  /// `LineQueue.perLineOverhead`); beyond it lines are dropped (and counted), so a burst costs at most this.
  public var queueBytes = 4 << 20
  /// How long the listener lease lasts unless renewed (ms); renewed every third of it.
  public var leaseTtlMs: Int64 = 30_000
  /// How often the listener's state is written to the database for /health (ms); status changes are published at
  /// once. 10 s, the lease's renewal cadence with the default `leaseTtl`: an idle listener wakes once for both.
  public var publishIntervalMs: Int64 = 10_000
  /// The debounce of filter changes: the least time between two looks at registrations (ms). The responder's
  /// commits wake the watcher (the first look after a quiet spell is at once); without the wake socket this is
  /// how often registrations are checked (`PRAGMA data_version`).
  public var registrationPollMs: Int64 = 1_000
  /// The least time between two ACKs of the same message (ms).
  public var ackIntervalMs: Int64 = 30_000
  /// `[replication]`: when on, Litestream owns the WAL checkpoints and the listener's maintenance
  /// leaves them alone.
  public var replication = ReplicationConfig()

  /// True when the login is receive-only by configuration (no login or no passcode, or passcode -1).
  public var isReceiveOnly: Bool { login == nil || passcode == nil || passcode == -1 }

  /// The defaults.
  public init() {}

  /// Reads and validates every setting, falling back to the defaults.
  public init(_ config: ConfigFile) throws(ConfigError) {
    let defaults = ListenerConfig()
    server = try ServerConfig(config)
    let section = "aprsis"
    if config.value(section, "servers") != nil {
      servers = try Self.serverList(config, section, "servers")
    } else if config.value(section, "server") != nil {
      servers = try Self.serverList(config, section, "server")
    }
    login = try config.string(section, "login").flatMap { $0.isEmpty ? nil : $0 }
    if let login, let value = config.value(section, "login"), !Self.isValidLogin(login) {
      throw .invalidValue(
        key: "aprsis.login", value: value.text, source: value.source.description,
        reason: "expected an APRS-IS login: 1-9 letters and digits with an optional -SSID")
    }
    if config.value(section, "passcode") != nil {
      passcode = try config.int(section, "passcode", default: -1, range: -1...32767)
    }
    if login == nil, passcode != nil, let value = config.value(section, "passcode") {
      throw .invalidValue(
        key: "aprsis.passcode", value: value.text, source: value.source.description,
        reason: "a passcode needs [aprsis] login (the operator's service call)")
    }
    if login != nil, passcode == nil, let value = config.value(section, "login") {
      throw .invalidValue(
        key: "aprsis.login", value: value.text, source: value.source.description,
        reason: "a login needs [aprsis] passcode (`aprs-cloud passcode CALL`; -1 for receive-only)")
    }
    trackOutgoing = try config.bool(section, "trackOutgoing", default: defaults.trackOutgoing)
    watchdogMs = try config.duration(
      section, "watchdog", default: defaults.watchdogMs, range: 1_000...600_000)
    reconnectDelayMs = try config.duration(
      section, "reconnectDelay", default: defaults.reconnectDelayMs, range: 50...300_000)
    maxReconnectDelayMs = try config.duration(
      section, "maxReconnectDelay", default: max(defaults.maxReconnectDelayMs, reconnectDelayMs),
      range: reconnectDelayMs...3_600_000)
    connectTimeoutMs = try config.duration(
      section, "connectTimeout", default: defaults.connectTimeoutMs, range: 100...120_000)

    let listener = "listener"
    queueSize = try config.int(listener, "queueSize", default: defaults.queueSize, range: 10...1_000_000)
    queueBytes = try config.int(
      listener, "queueBytes", default: defaults.queueBytes, range: 65_536...1_073_741_824)
    leaseTtlMs = try config.duration(listener, "leaseTtl", default: defaults.leaseTtlMs, range: 300...600_000)
    publishIntervalMs = try config.duration(
      listener, "publishInterval", default: defaults.publishIntervalMs, range: 50...300_000)
    registrationPollMs = try config.duration(
      listener, "registrationPoll", default: defaults.registrationPollMs, range: 20...60_000)
    ackIntervalMs = try config.duration(
      listener, "ackInterval", default: defaults.ackIntervalMs, range: 100...3_600_000)
    replication = try ReplicationConfig(config)
  }

  /// `[aprsis]` login rule: 1-9 letters and digits, optionally `-` and 1-2 letters or digits, 9 at most.
  static func isValidLogin(_ login: String) -> Bool {
    let parts = login.split(separator: "-", omittingEmptySubsequences: false)
    guard login.utf8.count <= 9, (1...2).contains(parts.count) else { return false }
    let alphanumeric = { (byte: UInt8) -> Bool in
      (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }
    guard !parts[0].isEmpty, parts[0].utf8.allSatisfy(alphanumeric) else { return false }
    return parts.count == 1
      || ((1...2).contains(parts[1].utf8.count) && parts[1].utf8.allSatisfy(alphanumeric))
  }

  private static func serverList(_ config: ConfigFile, _ section: String, _ key: String) throws(ConfigError)
    -> [APRSISServer]
  {
    let text = try config.string(section, key) ?? ""
    var result: [APRSISServer] = []
    for item in text.split(separator: ",") {
      let trimmed = item.trimmingSpaces
      guard let server = APRSISServer(parsing: trimmed) else {
        let value = config.value(section, key)!
        throw .invalidValue(
          key: "\(section).\(key)", value: value.text, source: value.source.description,
          reason: "expected comma-separated HOST:PORT entries (\"\(trimmed)\" is not one)")
      }
      result.append(server)
    }
    guard !result.isEmpty else {
      let value = config.value(section, key)!
      throw .invalidValue(
        key: "\(section).\(key)", value: value.text, source: value.source.description,
        reason: "expected at least one HOST:PORT")
    }
    return result
  }

  /// The keys this struct reads (besides `[server]`, which ``ServerConfig`` reads).
  public static let schema = ConfigSchema(
    sections: [
      "aprsis": [
        "servers", "server", "login", "passcode", "trackOutgoing", "watchdog", "reconnectDelay",
        "maxReconnectDelay", "connectTimeout",
      ],
      "listener": [
        "queueSize", "queueBytes", "leaseTtl", "publishInterval", "registrationPoll", "ackInterval",
      ],
    ],
    retiredKeys: [
      "aprsis": [
        "fullFeedServers":
          "the listener never takes the full feed any more: it keeps one live #filter line at any number of"
          + " stations; remove the key",
        "filterReconnectSpacing":
          "the listener never reconnects to change its filter any more (one #filter line per change);"
          + " remove the key",
      ]
    ])
}

extension Substring {
  /// Without leading and trailing spaces and tabs.
  fileprivate var trimmingSpaces: String {
    var text = self
    while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
    while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
    return String(text)
  }
}
