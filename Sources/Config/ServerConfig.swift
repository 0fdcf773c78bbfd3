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
public struct ServerConfig: Sendable, Equatable {
  /// `--listen`: a unix socket path or `HOST:PORT`; nil to use fd 0 (or CGI).
  public var listen: String?
  /// The SQLite database file.
  public var database = "./var/aprs-cloud.sqlite"
  /// Worker threads, each with its own database connection.
  public var workers = 4
  /// The least severe events logged.
  public var logLevel = LogLevel.info
  /// A station not heard from within this window stops being used (ms).
  public var stationExpiryMs: Int64 = 7 * 86_400_000
  /// Messages kept per station.
  public var ringSize = 50
  /// The most messages a station with `retention` `untilPulled` keeps unpulled; its own `max` may not exceed it.
  public var maxUnpulledPerStation = 500
  /// Largest request body, in bytes.
  public var maxBody = 65_536
  /// How long a write waits for another connection's lock before answering 503 (ms).
  public var busyTimeoutMs: Int64 = 5000
  /// Whether every request gets a log line at info level. Off, FastCGI logs them at debug only:
  /// nginx's access log already has one line per request. CGI logs them at info either way.
  public var logRequests = false
  /// Long polls held at once (FastCGI); past it a `wait` is answered at once. 0 turns parking off.
  public var maxParked = 10_000
  /// Long polls held at once for one station: one more is held and the station's oldest is answered
  /// (`messages:[]`) to make room, so the newest win (a phone, a tablet, a few browser tabs fit).
  public var maxParkedPerStation = 8
  /// Long polls held at once for one client address (IPv4 address, IPv6 /64, as the per-address
  /// rate limits count them): one more is not held but answered 429 with `Retry-After`, so one
  /// address cannot take the shared `maxParked`.
  public var maxParkedPerAddress = 256
  /// Registrations per station per hour.
  public var registrationsPerHour = 60
  /// Heartbeats per station per hour.
  public var heartbeatsPerHour = 60
  /// Avatar uploads per station per hour.
  public var avatarUploadsPerHour = 20
  /// New stations one client address (IPv6: one /64) may create per hour.
  public var newStationsPerAddressPerHour = 30
  /// New stations one IPv4 /24 or one IPv6 /48 may create per hour (all its addresses together).
  public var newStationsPerNetworkPerHour = 100
  /// Claims (`POST /v1/claim`) one client address (IPv6: one /64) may make per hour.
  public var claimsPerAddressPerHour = 10
  /// Claims one IPv4 /24 or IPv6 /48 may make per hour, all its addresses together.
  public var claimsPerNetworkPerHour = 30
  /// New stations one IPv6 /32 may create per hour (all its addresses together; IPv4 has no such width).
  public var newStationsPerWideNetworkPerHour = 300
  /// Avatar uploads per client address (IPv6: one /64) per hour.
  public var avatarUploadsPerAddressPerHour = 60
  /// Stations the database holds at most.
  public var maxStations = 100_000
  /// Push tokens kept per station (on a claimed station: the owner's, registered with the key).
  public var devicesPerStation = 10
  /// Push tokens registered without the station key that a claimed station keeps beside its owner's.
  public var keylessDevicesPerStation = 3
  /// Origins (`https://app.example.org`) besides the server's own whose pages may POST to the API, as written;
  /// the responder checks and normalises them.
  public var allowedOrigins: [String] = []
  /// Bytes of avatar images stored at most, all stations together.
  public var avatarBytesTotal = 268_435_456
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
    stationExpiryMs = try config.duration(
      "server", "stationExpiry", default: defaults.stationExpiryMs, range: 60_000...3650 * 86_400_000)
    ringSize = try config.int("server", "ringSize", default: defaults.ringSize, range: 1...1000)
    maxUnpulledPerStation = try config.int(
      "server", "maxUnpulledPerStation", default: max(defaults.maxUnpulledPerStation, ringSize),
      range: ringSize...100_000)
    maxBody = try config.int("server", "maxBody", default: defaults.maxBody, range: 1024...16_777_216)
    busyTimeoutMs = try config.duration(
      "server", "busyTimeout", default: defaults.busyTimeoutMs, range: 0...60_000)
    logRequests = try config.bool("server", "logRequests", default: defaults.logRequests)
    maxParked = try config.int("server", "maxParked", default: defaults.maxParked, range: 0...1_000_000)
    maxParkedPerStation = try config.int(
      "server", "maxParkedPerStation", default: defaults.maxParkedPerStation, range: 1...1000)
    maxParkedPerAddress = try config.int(
      "server", "maxParkedPerAddress", default: defaults.maxParkedPerAddress, range: 1...1_000_000)
    let perHour = 1...1_000_000
    registrationsPerHour = try config.int(
      "ratelimit", "registrationsPerHour", default: defaults.registrationsPerHour, range: perHour)
    heartbeatsPerHour = try config.int(
      "ratelimit", "heartbeatsPerHour", default: defaults.heartbeatsPerHour, range: perHour)
    avatarUploadsPerHour = try config.int(
      "ratelimit", "avatarUploadsPerHour", default: defaults.avatarUploadsPerHour, range: perHour)
    newStationsPerAddressPerHour = try config.int(
      "ratelimit", "newStationsPerAddressPerHour", default: defaults.newStationsPerAddressPerHour,
      range: perHour)
    claimsPerAddressPerHour = try config.int(
      "ratelimit", "claimsPerAddressPerHour", default: defaults.claimsPerAddressPerHour, range: perHour)
    claimsPerNetworkPerHour = try config.int(
      "ratelimit", "claimsPerNetworkPerHour", default: defaults.claimsPerNetworkPerHour, range: perHour)
    newStationsPerNetworkPerHour = try config.int(
      "ratelimit", "newStationsPerNetworkPerHour", default: defaults.newStationsPerNetworkPerHour,
      range: perHour)
    newStationsPerWideNetworkPerHour = try config.int(
      "ratelimit", "newStationsPerWideNetworkPerHour", default: defaults.newStationsPerWideNetworkPerHour,
      range: perHour)
    avatarUploadsPerAddressPerHour = try config.int(
      "ratelimit", "avatarUploadsPerAddressPerHour", default: defaults.avatarUploadsPerAddressPerHour,
      range: perHour)
    maxStations = try config.int(
      "limits", "maxStations", default: defaults.maxStations, range: 1...100_000_000)
    devicesPerStation = try config.int(
      "limits", "devicesPerStation", default: defaults.devicesPerStation, range: 1...1000)
    keylessDevicesPerStation = try config.int(
      "limits", "keylessDevicesPerStation", default: defaults.keylessDevicesPerStation, range: 1...1000)
    allowedOrigins =
      try config.string("server", "allowedOrigins").map { text in
        text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init)
      } ?? []
    avatarBytesTotal = try config.int(
      "limits", "avatarBytesTotal", default: defaults.avatarBytesTotal, range: 0...1 << 40)
    send = try SendConfig(config)
  }

  /// The keys this struct reads.
  public static let schema = ConfigSchema(sections: [
    "server": [
      "listen", "database", "workers", "logLevel", "stationExpiry", "ringSize", "maxUnpulledPerStation",
      "maxBody", "busyTimeout",
      "logRequests", "maxParked", "maxParkedPerStation", "maxParkedPerAddress", "allowedOrigins",
    ],
    "ratelimit": [
      "registrationsPerHour", "heartbeatsPerHour", "avatarUploadsPerHour", "newStationsPerAddressPerHour",
      "newStationsPerNetworkPerHour", "newStationsPerWideNetworkPerHour", "avatarUploadsPerAddressPerHour",
      "claimsPerAddressPerHour", "claimsPerNetworkPerHour",
    ],
    "limits": ["maxStations", "devicesPerStation", "keylessDevicesPerStation", "avatarBytesTotal"],
  ])
}
