import Logging

/// The responder's settings (`aprs-cloud-fcgi`), from `[server]`, `[ratelimit]` and `[limits]`, and `[send]`
/// (``SendConfig``, which the listener reads from here too).
///
/// ```ini
/// [server]
/// listen = /run/aprs-cloud/fcgi.sock   ; or 127.0.0.1:9000; absent: fd 0 or CGI
/// database = /var/lib/aprs-cloud/aprs-cloud.sqlite
/// workers = 4              ; worker threads, 1–256
/// logLevel = info          ; debug, info, warn, error
/// stationExpiry = 7d       ; a station not heard from for this long stops being used
/// ringSize = 50            ; messages kept per station, 1–1000
/// maxUnpulledPerStation = 500 ; the most a station with retention untilPulled keeps, ringSize–100000
/// maxBody = 65536          ; largest request body in bytes
/// busyTimeout = 5s         ; how long a write waits for another writer's lock
/// logRequests = false      ; a log line per request at info (else at debug; CGI: always info)
/// maxParked = 10000        ; long polls (`/v1/sync` with `wait`) held at once, 0–1000000
/// maxParkedPerStation = 8  ; of them per station, 1–1000: one more and its oldest is answered
/// maxParkedPerAddress = 256 ; of them per client address (IPv6: per /64), 1–1000000: past it, 429
/// allowedOrigins =         ; other sites whose pages may POST to the API, e.g. https://app.example.org
///                          ; (comma or space separated; the server's own site always may)
///
/// [ratelimit]
/// registrationsPerHour = 60
/// heartbeatsPerHour = 60
/// avatarUploadsPerHour = 20
/// newStationsPerAddressPerHour = 30     ; per client address (IPv6: per /64)
/// newStationsPerNetworkPerHour = 100    ; per IPv4 /24 and per IPv6 /48
/// claimsPerAddressPerHour = 10          ; POST /v1/claim per client address (IPv6: per /64)
/// claimsPerNetworkPerHour = 30          ; POST /v1/claim per IPv4 /24 and per IPv6 /48
/// newStationsPerWideNetworkPerHour = 300 ; per IPv6 /32
/// avatarUploadsPerAddressPerHour = 60
///
/// [limits]
/// maxStations = 100000
/// devicesPerStation = 10                ; a new token replaces the least recently refreshed
/// keylessDevicesPerStation = 3          ; a claimed station's devices registered without its key
/// avatarBytesTotal = 268435456          ; bytes of avatar images stored, all stations together
/// ```
public struct ServerConfig: HoldsRequestLimits, Sendable, Equatable {
  /// `--listen`: a unix socket path or `HOST:PORT`; nil to use fd 0 (or CGI).
  public var listen: String?
  /// The SQLite database file.
  public var database = "./var/aprs-cloud.sqlite"
  /// Worker threads, each with its own database connection.
  public var workers = 4
  /// The least severe events logged.
  public var logLevel = LogLevel.info
  /// Messages kept per station.
  public var ringSize = 50
  /// The most messages a station with `retention` `untilPulled` keeps unpulled; its own `max` may not exceed it.
  public var maxUnpulledPerStation = 500
  /// How long a write waits for another connection's lock before answering 503 (ms).
  public var busyTimeoutMs: Int64 = 5000
  /// Whether every request gets a log line at info level. Off, FastCGI logs them at debug only:
  /// nginx's access log already has one line per request. CGI logs them at info either way.
  public var logRequests = false
  /// Origins (`https://app.example.org`) besides the server's own whose pages may POST to the API, as written;
  /// the responder checks and normalises them.
  public var allowedOrigins: [String] = []
  /// `[server] maxBody`, `stationExpiry`, `maxParked…`, `[ratelimit]` and `[limits]`: what clients may ask
  /// (``RequestLimits``), also read as `config.maxBody` and so on.
  public var limits = RequestLimits()
  /// `[send]`: `/v1/send`, its limits and the listener's schedule (``SendConfig``).
  public var send = SendConfig()

  /// The defaults.
  public init() {}

  /// Reads and validates every setting, falling back to the defaults.
  public init(_ config: ConfigFile) throws(ConfigError) {
    let defaults = ServerConfig()
    listen = try config.string("server", "listen")
    if let value = config.value("server", "listen"), value.text.isEmpty {
      throw .invalidValue(
        key: "server.listen", value: value.text, source: value.source.description,
        reason: "expected a socket path or HOST:PORT")
    }
    database = try config.path("server", "database", default: defaults.database)
    workers = try config.int("server", "workers", default: defaults.workers, range: 1...256)
    let level = try config.choice(
      "server", "logLevel", ["debug", "info", "warn", "error"], default: defaults.logLevel.name)
    logLevel = LogLevel(name: level) ?? .info
    ringSize = try config.int("server", "ringSize", default: defaults.ringSize, range: 1...1000)
    maxUnpulledPerStation = try config.int(
      "server", "maxUnpulledPerStation", default: max(defaults.maxUnpulledPerStation, ringSize),
      range: ringSize...100_000)
    busyTimeoutMs = try config.duration(
      "server", "busyTimeout", default: defaults.busyTimeoutMs, range: 0...60_000)
    logRequests = try config.bool("server", "logRequests", default: defaults.logRequests)
    limits = try RequestLimits(config)
    allowedOrigins =
      try config.string("server", "allowedOrigins").map { text in
        text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init)
      } ?? []
    send = try SendConfig(config)
  }

  /// The keys this struct reads.
  public static let schema = ConfigSchema(
    sections: RequestLimits.keys.merging(
      [
        "server": [
          "listen", "database", "workers", "logLevel", "ringSize", "maxUnpulledPerStation", "busyTimeout",
          "logRequests", "allowedOrigins",
        ]
      ], uniquingKeysWith: { $0.union($1) }))
}
