#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The push sender's settings, from `[messaging]`, `[messaging.android]`, `[messaging.ios]` and
/// `[messaging.ios.apns]` (the section and key names the original server's operators use).
///
/// ```ini
/// [messaging]
/// coalesceWindow = 2s      ; one station's burst within this window is one push (0 = at once)
/// preview = true           ; false: no message text in notifications (content-free)
/// maxAge = 1h              ; a push not sent by then is dropped instead of sent late
///
/// [messaging.android]
/// enabled = true
/// serviceAccountFile = firebase-service-account.json
/// ;endpoint = https://fcm.googleapis.com
/// ;caFile = /etc/ssl/certs/ca-certificates.crt
///
/// [messaging.ios]
/// enabled = true
///
/// [messaging.ios.apns]
/// keyFile = AuthKey_ABC123DEFG.p8
/// keyId = ABC123DEFG
/// teamId = DEF123GHIJ
/// bundleId = org.example.htcommander
/// production = true         ; the environment a new device is tried in first
/// ;productionEndpoint = https://api.push.apple.com
/// ;sandboxEndpoint = https://api.sandbox.push.apple.com
/// ;endpoint = ...           ; both environments' base URL, unless the two above are set
/// ;caFile = ...
/// ```
///
/// FCM and APNs are on when enabled and configured: `enabled` defaults to true when any of its
/// credential keys is set and false otherwise; an enabled provider needs all of its credential
/// keys. Web Push needs no credentials and is on unless `enabled = false` (PushConfig+WebPush.swift).
/// Only values are validated here (each error names its key); whether the key files can be read and
/// parsed is decided when the sender starts, where a bad file stops that provider alone.
public struct PushConfig: Sendable, Equatable {
  /// FCM HTTP v1 (Android) settings.
  public struct Android: Sendable, Equatable {
    /// The Firebase service-account JSON file (its `token_uri` is where access tokens come from).
    public var serviceAccountFile: String
    /// The FCM base URL, without a trailing slash (default `https://fcm.googleapis.com`).
    public var endpoint: String
    /// A PEM bundle of CA certificates to trust instead of the system's (tests, proxies).
    public var caFile: String?

    public init(serviceAccountFile: String, endpoint: String = PushConfig.fcmEndpoint, caFile: String? = nil)
    {
      self.serviceAccountFile = serviceAccountFile
      self.endpoint = endpoint
      self.caFile = caFile
    }
  }

  /// APNs (iOS) token-based settings.
  public struct IOS: Sendable, Equatable {
    /// The `.p8` auth key (PEM PKCS#8, EC P-256) from the Apple developer account.
    public var keyFile: String
    /// The key's 10-character id.
    public var keyId: String
    /// The developer team id (the JWT's `iss`).
    public var teamId: String
    /// The app's bundle id (`apns-topic`).
    public var bundleId: String
    /// Which environment a device's token is tried in first while none accepted it yet: production
    /// (`api.push.apple.com`, store and TestFlight builds) or sandbox (`api.sandbox.push.apple.com`,
    /// development builds). A token the first one refuses as `BadDeviceToken` is tried in the other.
    public var production: Bool
    /// The APNs production base URL, without a trailing slash (`productionEndpoint`, else `endpoint`, else
    /// Apple's).
    public var productionEndpoint: String
    /// The APNs sandbox base URL, without a trailing slash (`sandboxEndpoint`, else `endpoint`, else Apple's).
    public var sandboxEndpoint: String
    /// A PEM bundle of CA certificates to trust instead of the system's.
    public var caFile: String?

    /// `endpoint` overrides both environments' base URLs unless `productionEndpoint` or `sandboxEndpoint`
    /// gives that one.
    public init(
      keyFile: String, keyId: String, teamId: String, bundleId: String, production: Bool = true,
      endpoint: String? = nil, productionEndpoint: String? = nil, sandboxEndpoint: String? = nil,
      caFile: String? = nil
    ) {
      self.keyFile = keyFile
      self.keyId = keyId
      self.teamId = teamId
      self.bundleId = bundleId
      self.production = production
      self.productionEndpoint = productionEndpoint ?? endpoint ?? PushConfig.apnsProduction
      self.sandboxEndpoint = sandboxEndpoint ?? endpoint ?? PushConfig.apnsSandbox
      self.caFile = caFile
    }

    /// The base URL of one environment: production when `production` is true, else sandbox.
    public func endpoint(production: Bool) -> String { production ? productionEndpoint : sandboxEndpoint }

    /// The base URL of the environment `production` picks (where a new device is tried first).
    public var endpoint: String { endpoint(production: production) }
  }

  /// FCM's base URL.
  public static let fcmEndpoint = "https://fcm.googleapis.com"
  /// APNs production.
  public static let apnsProduction = "https://api.push.apple.com"
  /// APNs sandbox (development builds of the app).
  public static let apnsSandbox = "https://api.sandbox.push.apple.com"

  /// How long one station's burst is gathered into one push (ms); 0 sends each message at once.
  public var coalesceWindowMs: Int64 = 2000
  /// Whether notifications show the message text.
  public var preview = true
  /// A push older than this (ms since its message was stored) is dropped, not sent late.
  public var maxAgeMs: Int64 = 3_600_000
  /// FCM settings, nil when Android push is off (see `androidOff`).
  public var android: Android?
  /// APNs settings, nil when iOS push is off (see `iosOff`).
  public var ios: IOS?
  /// Why Android push is off (`"not configured"`, `"disabled"`), nil when it is on.
  public var androidOff: String? = "not configured"
  /// Why iOS push is off, nil when it is on.
  public var iosOff: String? = "not configured"
  /// Web Push / UnifiedPush settings, nil when off (see `webPushOff`).
  public var webPush: WebPush?
  /// Why Web Push and UnifiedPush are off, nil when they are on: `disabled` from a configuration
  /// (`enabled = false`), ``PushConfig/noSubjectOff`` when on by default without `subject`, `not configured`
  /// only for `init()` (no configuration read at all).
  public var webPushOff: String? = "not configured"
  /// Why Web Push and UnifiedPush are off though the configuration did not turn them off (a setting they need
  /// is missing: ``PushConfig/missingSubjectWarning(_:)``): logged at start and published for `/health`.
  public var webPushWarning: String?
  /// Forwarding (`[forward]`, `[forward.email]`), nil when `[forward] enabled = false`.
  public var forward: Forward? = Forward()

  /// Every warning about these settings (to log, and for `aprs-cloud check-config`).
  public var warnings: [String] { [webPushWarning].compactMap { $0 } }

  /// Everything off, default timings.
  public init() {}

  /// Reads and validates every push setting; each error names its key.
  public init(_ config: ConfigFile) throws(ConfigError) {
    let defaults = PushConfig()
    coalesceWindowMs = try config.duration(
      "messaging", "coalesceWindow", default: defaults.coalesceWindowMs, range: 0...60_000)
    preview = try config.bool("messaging", "preview", default: defaults.preview)
    maxAgeMs = try config.duration(
      "messaging", "maxAge", default: defaults.maxAgeMs, range: 1000...28 * 86_400_000)

    // Android.
    let androidSection = "messaging.android"
    let accountFile = try PushConfig.nonEmptyPath(config, androidSection, "serviceAccountFile")
    let androidEnabled = try config.bool(androidSection, "enabled", default: accountFile != nil)
    if androidEnabled {
      guard let accountFile else {
        throw PushConfig.missing(config, androidSection, "serviceAccountFile", because: androidSection)
      }
      android = Android(
        serviceAccountFile: accountFile,
        endpoint: try PushConfig.url(config, androidSection, "endpoint") ?? PushConfig.fcmEndpoint,
        caFile: try PushConfig.readableFile(config, androidSection, "caFile"))
      androidOff = nil
    } else {
      androidOff =
        accountFile == nil && config.value(androidSection, "enabled") == nil ? "not configured" : "disabled"
    }

    // iOS.
    let iosSection = "messaging.ios"
    let apns = "messaging.ios.apns"
    let keyFile = try PushConfig.nonEmptyPath(config, apns, "keyFile")
    let keyId = try PushConfig.identifier(config, apns, "keyId")
    let teamId = try PushConfig.identifier(config, apns, "teamId")
    let bundleId = try PushConfig.bundleIdentifier(config, apns, "bundleId")
    let anySet = keyFile != nil || keyId != nil || teamId != nil || bundleId != nil
    let iosEnabled = try config.bool(iosSection, "enabled", default: anySet)
    let production = try config.bool(apns, "production", default: true)
    let endpoint = try PushConfig.url(config, apns, "endpoint")
    let productionEndpoint = try PushConfig.url(config, apns, "productionEndpoint")
    let sandboxEndpoint = try PushConfig.url(config, apns, "sandboxEndpoint")
    let caFile = try PushConfig.readableFile(config, apns, "caFile")
    if iosEnabled {
      let because = iosSection + ".enabled"
      guard let keyFile else { throw PushConfig.missing(config, apns, "keyFile", because: because) }
      guard let keyId else { throw PushConfig.missing(config, apns, "keyId", because: because) }
      guard let teamId else { throw PushConfig.missing(config, apns, "teamId", because: because) }
      guard let bundleId else { throw PushConfig.missing(config, apns, "bundleId", because: because) }
      ios = IOS(
        keyFile: keyFile, keyId: keyId, teamId: teamId, bundleId: bundleId, production: production,
        endpoint: endpoint, productionEndpoint: productionEndpoint, sandboxEndpoint: sandboxEndpoint,
        caFile: caFile)
      iosOff = nil
    } else {
      iosOff = !anySet && config.value(iosSection, "enabled") == nil ? "not configured" : "disabled"
    }

    // Web Push and UnifiedPush (PushConfig+WebPush.swift).
    (webPush, webPushOff, webPushWarning) = try PushConfig.webPush(config)
    forward = try PushConfig.forward(config)
  }

  /// The keys this struct reads.
  public static let schema = ConfigSchema(
    sections: [
      "messaging": ["coalesceWindow", "preview", "maxAge"],
      "messaging.android": ["enabled", "serviceAccountFile", "endpoint", "caFile"],
      "messaging.ios": ["enabled"],
      "messaging.ios.apns": [
        "keyFile", "keyId", "teamId", "bundleId", "production", "endpoint", "productionEndpoint",
        "sandboxEndpoint",
        "caFile",
      ],
      PushConfig.webPushSection: PushConfig.webPushKeys,
    ].merging(PushConfig.forwardKeys) { current, _ in current })

  // MARK: Validation helpers

  static func invalid(_ config: ConfigFile, _ section: String, _ key: String, _ reason: String)
    -> ConfigError
  {
    let value = config.value(section, key)
    return .invalidValue(
      key: "\(section).\(key)", value: value?.text ?? "", source: value?.source.description ?? config.name,
      reason: reason)
  }

  static func missing(_ config: ConfigFile, _ section: String, _ key: String, because: String)
    -> ConfigError
  {
    .invalidValue(
      key: "\(section).\(key)", value: "", source: config.name,
      reason: "required when \(because) is on (set it, or set enabled = false)")
  }

  static func nonEmptyPath(_ config: ConfigFile, _ section: String, _ key: String) throws(ConfigError)
    -> String?
  {
    guard let path = try config.path(section, key) else { return nil }
    guard !path.isEmpty else { throw invalid(config, section, key, "expected a file path") }
    return path
  }

  /// A CA bundle path that must exist and be readable now (a typo here would only show later as
  /// TLS failures).
  static func readableFile(_ config: ConfigFile, _ section: String, _ key: String) throws(ConfigError)
    -> String?
  {
    guard let path = try nonEmptyPath(config, section, key) else { return nil }
    guard access(path, R_OK) == 0 else {
      throw invalid(config, section, key, "cannot read the file: \(String(cString: strerror(errno)))")
    }
    return path
  }

  /// An `https://host[:port][/path]` base URL, without its trailing slash.
  static func url(_ config: ConfigFile, _ section: String, _ key: String) throws(ConfigError)
    -> String?
  {
    guard var text = try config.string(section, key) else { return nil }
    while text.hasSuffix("/") { text.removeLast() }
    let rest = text.hasPrefix("https://") ? text.dropFirst(8) : ""
    let host = rest.prefix { $0 != "/" && $0 != ":" }
    guard !host.isEmpty, !text.contains(" "), !text.contains("?"), !text.contains("#") else {
      throw invalid(config, section, key, "expected an https:// base URL such as https://host:port")
    }
    return text
  }

  /// A key or team id: letters and digits.
  static func identifier(_ config: ConfigFile, _ section: String, _ key: String) throws(ConfigError)
    -> String?
  {
    guard let text = try config.string(section, key) else { return nil }
    guard (1...64).contains(text.utf8.count), text.utf8.allSatisfy({ isAlphanumeric($0) }) else {
      throw invalid(config, section, key, "expected letters and digits (Apple's 10-character id)")
    }
    return text
  }

  /// A bundle id: letters, digits, `.`, `-` and `_`.
  static func bundleIdentifier(_ config: ConfigFile, _ section: String, _ key: String)
    throws(ConfigError) -> String?
  {
    guard let text = try config.string(section, key) else { return nil }
    let valid =
      (1...155).contains(text.utf8.count)
      && text.utf8.allSatisfy {
        isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
      }
    guard valid else {
      throw invalid(config, section, key, "expected a bundle id such as org.example.app")
    }
    return text
  }

  private static func isAlphanumeric(_ byte: UInt8) -> Bool {
    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
  }
}
