import Config

/// What the API enforces and offers. Defaults suit a public server.
///
/// The limits are ``RequestLimits`` and the sending rules ``SendConfig``, the very values the configuration file
/// gives (`ServerConfig.limits`, `ServerConfig.send`): each limit is declared once, in Config. A limit reads as if it
/// were this struct's own (`config.maxBody`, `config.devicesPerStation`).
public struct APIConfig: HoldsRequestLimits, Sendable {
  /// `[server] maxBody`, `stationExpiry`, `maxParked…`, `[ratelimit]` and `[limits]`.
  public var limits = RequestLimits()
  /// `[send]`: whether `POST /v1/send` is on (`enabled`; `/v1/info` lists `send` in `features` when it is, and
  /// sending also needs the listener's verified login, else 503) and its limits (`perMinute` and `inFlight` per
  /// station, `sendsPerAddressPerMinute`, `sendsPerMinuteGlobal`); past one, 429.
  public var send = SendConfig()
  /// Origins besides the server's own whose pages may POST to the API (`[server] allowedOrigins`), each normalised
  /// by `CrossSiteCheck.normalise` (`https://app.example.org`).
  public var allowedOrigins: Set<String> = []

  /// `origin` (`https://App.example.org:443/`) in the form ``allowedOrigins`` holds (`https://app.example.org`),
  /// or nil when it is not an `http://` or `https://` origin (scheme, host, optional port, nothing else).
  public static func normalisedOrigin(_ origin: String) -> String? { CrossSiteCheck.normalise(origin) }
  /// Largest `/v1/avatars` answer in bytes: images past it are left out (`"truncated":true`).
  public var maxAvatarsAnswerBytes = 262_144
  /// Whether `/v1/sync` may report outgoing (`"sent"`) messages.
  public var includeSent = true
  /// The listener's APRS-IS login (`[aprsis] login`, e.g. `N0CALL-10`), refused as a `/v1/send` addressee; nil
  /// when not configured (the login the listener published is refused all the same).
  public var listenerLogin: String?
  /// Whether this responder holds a `/v1/sync` `wait` without a thread of its own (FastCGI:
  /// `aprs-cloud-fcgi` sets it). `/v1/info` lists `longpoll` in `features` when set. Plain CGI still
  /// honours `wait` (by polling the database, a process per request) but does not advertise it.
  public var longPoll = false
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
