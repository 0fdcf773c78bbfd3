/// The limits and windows the API enforces. Defaults suit a public server.
public struct APIConfig: Sendable {
  /// Largest accepted request body (docs/protocol.md: 64 KiB).
  public var maxBodyBytes = 65_536
  /// A station is live (in the filter, its devices used) while heard within this window.
  public var stationExpiryMs: Int64 = 7 * 24 * 3_600_000
  /// Registrations per station per hour.
  public var registrationsPerHour = 60
  /// Heartbeats per station per hour (the app sends one per 6 h, and one per avatar change).
  public var heartbeatsPerHour = 60
  /// Avatar uploads per station per hour.
  public var avatarUploadsPerHour = 20
  /// New stations (addresses not stored yet) one client address may create per hour (`ClientAddress`
  /// says what one address is); past it, 429.
  public var newStationsPerAddressPerHour = 30
  /// New stations one IPv4 /24 or IPv6 /48 (`ClientAddress.network`) may create per hour, all its
  /// addresses together; past it, 429.
  public var newStationsPerNetworkPerHour = 100
  /// Claims (`POST /v1/claim`, rotations included) one client address may make per hour; past it, 429.
  public var claimsPerAddressPerHour = 10
  /// Claims one IPv4 /24 or IPv6 /48 may make per hour, all its addresses together; past it, 429.
  public var claimsPerNetworkPerHour = 30
  /// New stations one IPv6 /32 (`ClientAddress.wideNetwork`) may create per hour, all its addresses
  /// together; past it, 429. IPv4 has no such width.
  public var newStationsPerWideNetworkPerHour = 300
  /// Avatar uploads (sets and clears) per client address per hour; past it, the avatar is refused.
  public var avatarUploadsPerAddressPerHour = 60
  /// Stations the database holds at most; a request that would create another gets a 503.
  public var maxStations = 100_000
  /// Push tokens kept per station; a new one replaces the least recently refreshed (at least 1). On a claimed
  /// station this is the owner's devices (registered with the station key).
  public var devicesPerStation = 10
  /// Push tokens registered without the key that a claimed station keeps beside its owner's: the least recently
  /// refreshed goes first, and they never push out the owner's (`[limits] keylessDevicesPerStation`).
  public var keylessDevicesPerStation = 3
  /// Origins besides the server's own whose pages may POST to the API (`[server] allowedOrigins`), each normalised
  /// by `CrossSiteCheck.normalise` (`https://app.example.org`).
  public var allowedOrigins: Set<String> = []

  /// `origin` (`https://App.example.org:443/`) in the form ``allowedOrigins`` holds (`https://app.example.org`),
  /// or nil when it is not an `http://` or `https://` origin (scheme, host, optional port, nothing else).
  public static func normalisedOrigin(_ origin: String) -> String? { CrossSiteCheck.normalise(origin) }
  /// Bytes of avatar images (base64 text) stored at most over all stations; an upload past it is
  /// refused like any bad avatar.
  public var avatarBytesTotal: Int64 = 268_435_456
  /// Largest `/v1/avatars` answer in bytes: images past it are left out (`"truncated":true`).
  public var maxAvatarsAnswerBytes = 262_144
  /// Whether `/v1/sync` may report outgoing (`"sent"`) messages.
  public var includeSent = true
  /// Whether `POST /v1/send` is on (`[send] enabled`); `/v1/info` lists `send` in `features` when it is.
  /// Sending also needs the listener's verified login: without it `/v1/send` answers 503.
  public var send = true
  /// Sends accepted per station per minute (`[send] perMinute`); past it, 429.
  public var sendsPerMinute = 10
  /// Sends of one station waiting for an answer at once (`[send] inFlight`); past it, 429.
  public var sendsInFlight = 20
  /// Sends accepted per client address (`ClientAddress`) per minute (`[send] sendsPerAddressPerMinute`); past
  /// it, 429.
  public var sendsPerAddressPerMinute = 20
  /// Sends accepted per minute from every station and address together (`[send] sendsPerMinuteGlobal`); past
  /// it, 429.
  public var sendsPerMinuteGlobal = 30
  /// The listener's APRS-IS login (`[aprsis] login`, e.g. `N0CALL-10`), refused as a `/v1/send` addressee; nil
  /// when not configured (the login the listener published is refused all the same).
  public var listenerLogin: String?
  /// Whether this responder holds a `/v1/sync` `wait` without a thread of its own (FastCGI:
  /// `aprs-cloud-fcgi` sets it). `/v1/info` lists `longpoll` in `features` when set. Plain CGI still
  /// honours `wait` (by polling the database, a process per request) but does not advertise it.
  public var longPoll = false
  /// The caps on held long polls the shell enforces (`[server] maxParked`, `maxParkedPerStation`,
  /// `maxParkedPerAddress`; `ParkLimit`), as `/metrics` shows them.
  public var maxParked = 10_000
  public var maxParkedPerStation = 8
  public var maxParkedPerAddress = 256
  /// What `GET /v1/info` tells clients: version, features, the VAPID public key.
  public var info = ServerInfo()
  /// Whether Web Push / UnifiedPush endpoints on loopback or private addresses are accepted
  /// (`[messaging.webpush] allowPrivateEndpoints`; tests only).
  public var allowPrivatePushEndpoints = false
  /// Whether forwarding is on (`[forward] enabled`): `forward` targets may be saved.
  public var forward = true
  /// Whether email targets may be saved: the listener has an SMTP server (`[forward.email] url`).
  public var forwardEmail = false
  /// Whether ntfy and webhook targets on loopback or private addresses are accepted (`[forward]
  /// allowPrivateEndpoints`; tests only).
  public var allowPrivateForwardEndpoints = false

  public init() {}
}
