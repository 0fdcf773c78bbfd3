/// The limits on what clients may ask of the responder, declared once with their defaults and ranges: read from
/// `[server]`, `[ratelimit]` and `[limits]` (``ServerConfig`` holds them) and enforced by the API (`APIConfig`
/// holds the same value). docs/configuration.md lists each key; docs/protocol.md "Limits" says what a client meets.
///
/// Rates are per hour and per station unless named per address (one IPv4 address, one IPv6 /64), per network (an
/// IPv4 /24, an IPv6 /48) or per wide network (an IPv6 /32). Past a rate the API answers 429 with `Retry-After`.
public struct RequestLimits: Sendable, Equatable {
  /// Largest request body, in bytes (`[server] maxBody`, 1024–16777216); past it, 413.
  public var maxBody = 65_536
  /// A station not heard from within this window stops being used: left out of the filter, its devices no longer
  /// pushed (ms, `[server] stationExpiry`, 1 min–3650 d).
  public var stationExpiryMs: Int64 = 7 * 86_400_000
  /// Long polls (`/v1/sync` with `wait`) held at once (FastCGI); past it a `wait` is answered at once. 0 turns
  /// parking off (`[server] maxParked`, 0–1000000).
  public var maxParked = 10_000
  /// Long polls held at once for one station: one more is held and the station's oldest is answered
  /// (`messages:[]`) to make room, so the newest win (`[server] maxParkedPerStation`, 1–1000).
  public var maxParkedPerStation = 8
  /// Long polls held at once for one client address: one more is not held but answered 429 with `Retry-After`,
  /// so one address cannot take the shared `maxParked` (`[server] maxParkedPerAddress`, 1–1000000).
  public var maxParkedPerAddress = 256
  /// Registrations per station per hour (`[ratelimit] registrationsPerHour`).
  public var registrationsPerHour = 60
  /// Heartbeats per station per hour; the app sends one per 6 h and one per avatar change
  /// (`[ratelimit] heartbeatsPerHour`).
  public var heartbeatsPerHour = 60
  /// Avatar uploads per station per hour (`[ratelimit] avatarUploadsPerHour`).
  public var avatarUploadsPerHour = 20
  /// New stations (addresses not stored yet) one client address may create per hour
  /// (`[ratelimit] newStationsPerAddressPerHour`).
  public var newStationsPerAddressPerHour = 30
  /// New stations one network may create per hour, all its addresses together
  /// (`[ratelimit] newStationsPerNetworkPerHour`).
  public var newStationsPerNetworkPerHour = 100
  /// New stations one IPv6 /32 may create per hour; IPv4 has no such width
  /// (`[ratelimit] newStationsPerWideNetworkPerHour`).
  public var newStationsPerWideNetworkPerHour = 300
  /// Claims (`POST /v1/claim`, rotations included) one client address may make per hour
  /// (`[ratelimit] claimsPerAddressPerHour`).
  public var claimsPerAddressPerHour = 10
  /// Claims one network may make per hour, all its addresses together (`[ratelimit] claimsPerNetworkPerHour`).
  public var claimsPerNetworkPerHour = 30
  /// Avatar uploads (sets and clears) per client address per hour; past it the avatar is refused
  /// (`[ratelimit] avatarUploadsPerAddressPerHour`).
  public var avatarUploadsPerAddressPerHour = 60
  /// Stations the database holds at most; a request that would create another gets a 503
  /// (`[limits] maxStations`, 1–100000000).
  public var maxStations = 100_000
  /// Push tokens kept per station; a new one replaces the least recently refreshed. On a claimed station this is
  /// the owner's devices, registered with the station key (`[limits] devicesPerStation`, 1–1000).
  public var devicesPerStation = 10
  /// Push tokens registered without the key that a claimed station keeps beside its owner's: the least recently
  /// refreshed goes first, and they never push out the owner's (`[limits] keylessDevicesPerStation`, 1–1000).
  public var keylessDevicesPerStation = 3
  /// Bytes of avatar images (base64 text) stored at most, all stations together; an upload past it is refused like
  /// any bad avatar (`[limits] avatarBytesTotal`, 0–2⁴⁰).
  public var avatarBytesTotal: Int64 = 268_435_456

  /// The defaults, which suit a public server.
  public init() {}

  /// Reads and validates every limit of `config`, falling back to the defaults.
  public init(_ config: ConfigFile) throws(ConfigError) {
    let defaults = RequestLimits()
    maxBody = try config.int("server", "maxBody", default: defaults.maxBody, range: 1024...16_777_216)
    stationExpiryMs = try config.duration(
      "server", "stationExpiry", default: defaults.stationExpiryMs, range: 60_000...3650 * 86_400_000)
    maxParked = try config.int("server", "maxParked", default: defaults.maxParked, range: 0...1_000_000)
    maxParkedPerStation = try config.int(
      "server", "maxParkedPerStation", default: defaults.maxParkedPerStation, range: 1...1000)
    maxParkedPerAddress = try config.int(
      "server", "maxParkedPerAddress", default: defaults.maxParkedPerAddress, range: 1...1_000_000)
    func perHour(_ key: String, _ defaultValue: Int) throws(ConfigError) -> Int {
      try config.int("ratelimit", key, default: defaultValue, range: 1...1_000_000)
    }
    registrationsPerHour = try perHour("registrationsPerHour", defaults.registrationsPerHour)
    heartbeatsPerHour = try perHour("heartbeatsPerHour", defaults.heartbeatsPerHour)
    avatarUploadsPerHour = try perHour("avatarUploadsPerHour", defaults.avatarUploadsPerHour)
    newStationsPerAddressPerHour = try perHour(
      "newStationsPerAddressPerHour", defaults.newStationsPerAddressPerHour)
    newStationsPerNetworkPerHour = try perHour(
      "newStationsPerNetworkPerHour", defaults.newStationsPerNetworkPerHour)
    newStationsPerWideNetworkPerHour = try perHour(
      "newStationsPerWideNetworkPerHour", defaults.newStationsPerWideNetworkPerHour)
    claimsPerAddressPerHour = try perHour("claimsPerAddressPerHour", defaults.claimsPerAddressPerHour)
    claimsPerNetworkPerHour = try perHour("claimsPerNetworkPerHour", defaults.claimsPerNetworkPerHour)
    avatarUploadsPerAddressPerHour = try perHour(
      "avatarUploadsPerAddressPerHour", defaults.avatarUploadsPerAddressPerHour)
    maxStations = try config.int(
      "limits", "maxStations", default: defaults.maxStations, range: 1...100_000_000)
    devicesPerStation = try config.int(
      "limits", "devicesPerStation", default: defaults.devicesPerStation, range: 1...1000)
    keylessDevicesPerStation = try config.int(
      "limits", "keylessDevicesPerStation", default: defaults.keylessDevicesPerStation, range: 1...1000)
    avatarBytesTotal = Int64(
      try config.int(
        "limits", "avatarBytesTotal", default: Int(defaults.avatarBytesTotal), range: 0...1 << 40))
  }

  /// The keys this struct reads, by section.
  public static let keys: [String: Set<String>] = [
    "server": ["maxBody", "stationExpiry", "maxParked", "maxParkedPerStation", "maxParkedPerAddress"],
    "ratelimit": [
      "registrationsPerHour", "heartbeatsPerHour", "avatarUploadsPerHour", "newStationsPerAddressPerHour",
      "newStationsPerNetworkPerHour", "newStationsPerWideNetworkPerHour", "avatarUploadsPerAddressPerHour",
      "claimsPerAddressPerHour", "claimsPerNetworkPerHour",
    ],
    "limits": ["maxStations", "devicesPerStation", "keylessDevicesPerStation", "avatarBytesTotal"],
  ]
}
