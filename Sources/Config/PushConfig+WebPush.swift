#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `[messaging.webpush]`: Web Push and UnifiedPush (RFC 8030 with RFC 8291 encryption and RFC 8292 VAPID), the
/// Google-free push paths. They need no account anywhere, only a contact for the push services:
///
/// ```ini
/// [messaging.webpush]
/// subject = mailto:operator@example.org   ; or https://… : the VAPID `sub`, required when on
/// ;enabled = true                         ; the default; false turns Web Push and UnifiedPush off
/// ;vapidKeyFile = /var/lib/aprs-cloud/vapid.pem   ; default: vapid.pem beside the database
/// ;caFile = ...                           ; a CA bundle for push services (tests, private services)
/// ;allowPrivateEndpoints = false          ; true: endpoints on loopback/private addresses (tests)
/// ```
///
/// Unlike FCM and APNs, which need credentials from an account, `enabled` defaults to true ("it needs no account
/// anywhere"). The rule for a missing `subject` keeps an upgrade from turning the service off: a config written
/// before Web Push existed has no `[messaging.webpush]`, and the release that reads it must start.
/// - `enabled` not set (the default, on) and no `subject`: Web Push and UnifiedPush start **off**, with a
///   warning (``missingSubjectWarning(_:)``) that names the file, the key and both fixes: set `subject`, or
///   `enabled = false` to silence it. The listener logs it and publishes it for `/health` and `aprs-cloud
///   status`; `aprs-cloud check-config` prints it; the responder leaves Web Push out of `/v1/info`.
/// - `enabled = true` written by hand without `subject`: a startup error (`ConfigError.missingValue`,
///   ``missingSubject(_:)``) with the same fixes: someone asked for Web Push on this release and it cannot be.
/// Everything that reads the listener's push settings applies the rule alike (the listener, `push-test`,
/// `push-worker`, `up`, `import-config`'s check, the responder). One switch covers both `webpush` and
/// `unifiedpush` devices: the same sender and key.
extension PushConfig {
  /// Web Push / UnifiedPush settings.
  public struct WebPush: Sendable, Equatable {
    /// The VAPID contact (`sub`): a `mailto:` address or an `https://` URL.
    public var subject: String
    /// The VAPID private key (PEM, P-256); nil for `vapid.pem` beside the database (`keyFile(database:)`).
    /// The listener makes it on first start (mode 0600) and writes the public key beside it
    /// (`VAPIDPublicKeyFile.path(forKeyFile:)`) for the responder, which never reads the private key.
    public var vapidKeyFile: String?
    /// A PEM bundle of CA certificates for the push services (tests, private services).
    public var caFile: String?
    /// Whether endpoints on loopback or private addresses are accepted (tests; never on a public server). Off,
    /// the responder refuses `localhost` and reserved address literals at registration, and the listener
    /// refuses to connect to any address in a reserved block (`IPAddress.reservedRange`) whatever name resolved
    /// to it, deleting that subscription.
    public var allowPrivateEndpoints: Bool

    public init(
      subject: String, vapidKeyFile: String? = nil, caFile: String? = nil, allowPrivateEndpoints: Bool = false
    ) {
      self.subject = subject
      self.vapidKeyFile = vapidKeyFile
      self.caFile = caFile
      self.allowPrivateEndpoints = allowPrivateEndpoints
    }

    /// The VAPID private key's path for the database at `database`: `vapidKeyFile`, else `vapid.pem` in the
    /// database's folder (the data directory both processes share).
    public func keyFile(database: String) -> String {
      vapidKeyFile ?? PushConfig.defaultVAPIDKeyFile(database: database)
    }
  }

  /// The section's name.
  public static let webPushSection = "messaging.webpush"
  /// The keys `[messaging.webpush]` knows.
  public static let webPushKeys: Set<String> = [
    "enabled", "subject", "vapidKeyFile", "caFile", "allowPrivateEndpoints",
  ]

  /// `vapid.pem` in the folder that holds `database`.
  public static func defaultVAPIDKeyFile(database: String) -> String {
    guard let slash = database.lastIndex(of: "/") else { return "vapid.pem" }
    return slash == database.startIndex ? "/vapid.pem" : String(database[..<slash]) + "/vapid.pem"
  }

  /// Why Web Push is off when it is on by default but has no `subject` (``webPush(_:)``'s `off`).
  public static let noSubjectOff = "not configured: [messaging.webpush] subject is not set"

  /// Reads `[messaging.webpush]`: the settings when on, else why it is off (`disabled`: `enabled = false`;
  /// ``noSubjectOff`` with a `warning` when on by default without `subject`). Throws when a value is invalid
  /// (each error names its key), or when `enabled = true` is set without `subject` (``missingSubject(_:)``).
  public static func webPush(_ config: ConfigFile) throws(ConfigError) -> (
    settings: WebPush?, off: String?, warning: String?
  ) {
    let section = webPushSection
    let subject = try config.string(section, "subject")
    let keyFile = try config.path(section, "vapidKeyFile")
    let caFile = try config.path(section, "caFile")
    let allowPrivate = try config.bool(section, "allowPrivateEndpoints", default: false)
    let enabledByHand = config.value(section, "enabled") != nil
    guard try config.bool(section, "enabled", default: true) else { return (nil, "disabled", nil) }
    guard let subject else {
      if enabledByHand { throw missingSubject(config) }
      return (nil, noSubjectOff, missingSubjectWarning(config))
    }
    guard isContact(subject) else {
      let value = config.value(section, "subject")
      throw .invalidValue(
        key: "\(section).subject", value: subject, source: value?.source.description ?? config.name,
        reason: "expected mailto:address or an https:// URL (the VAPID contact, RFC 8292)")
    }
    if let caFile, access(caFile, R_OK) != 0 {
      let value = config.value(section, "caFile")
      throw .invalidValue(
        key: "\(section).caFile", value: value?.text ?? caFile,
        source: value?.source.description ?? config.name,
        reason: "cannot read the file: \(String(cString: strerror(errno)))")
    }
    return (
      WebPush(subject: subject, vapidKeyFile: keyFile, caFile: caFile, allowPrivateEndpoints: allowPrivate),
      nil, nil
    )
  }

  /// The warning of Web Push left off because `subject` is missing (and `enabled` is not set): names the file,
  /// the key, and both fixes. Short enough for one log value (`Logger.maxValueLength`, 300 characters) with a
  /// file path of up to 85 characters.
  public static func missingSubjectWarning(_ config: ConfigFile) -> String {
    let section = webPushSection
    let settings = "`subject = mailto:you@example.org` (or https://…) in [\(section)]"
    let fix = config.hasFile ? "set " + settings : "give a config file with " + settings
    return
      "\(config.name): Web Push and UnifiedPush are off: \(section).subject is not set. To turn them on, "
      + fix + "; `enabled = false` there silences this"
  }

  /// The error of Web Push on (the default) without a contact: names the file, the key, and both fixes (without
  /// a file, the ways to give one). Short enough for one log value (`Logger.maxValueLength`, 300 characters)
  /// with a file path of up to 85 characters.
  public static func missingSubject(_ config: ConfigFile) -> ConfigError {
    let section = webPushSection
    let settings =
      "`subject = mailto:you@example.org` (or https://…) in [\(section)], or `enabled = false` there"
    let fix =
      config.hasFile
      ? "set " + settings
      : "give a config file (--config FILE or \(ConfigFile.configPathVariable)) with " + settings
    return .missingValue(
      key: "\(section).subject", source: config.name,
      reason: "Web Push is on by default and needs a contact for the push services: " + fix)
  }

  /// `mailto:` with an address (`user@host`), or `https://` with a host; printable ASCII without spaces.
  static func isContact(_ text: String) -> Bool {
    let utf8 = text.utf8
    guard utf8.count <= 256, utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != 0x22 && $0 != 0x5C })
    else { return false }
    let lower = text.lowercased()
    if lower.hasPrefix("mailto:") {
      let address = lower.dropFirst(7)
      guard let at = address.firstIndex(of: "@") else { return false }
      return at > address.startIndex && address.index(after: at) < address.endIndex
    }
    if lower.hasPrefix("https://") {
      return lower.dropFirst(8).first.map { $0 != "/" } ?? false
    }
    return false
  }
}
