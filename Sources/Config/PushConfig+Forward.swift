#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `[forward]` and `[forward.email]`: forwarding a station's messages to its owner's email, ntfy topics and signed
/// webhooks (docs/api.md "Forwarding"). ntfy and webhooks need nothing from the operator; email needs the operator's
/// SMTP server:
///
/// ```ini
/// [forward]
/// ;enabled = true                 ; false: nothing is forwarded (the targets stay stored)
/// ;perMinute = 600                ; forwards started per minute at most, every station together
/// ;caFile = ...                   ; a CA bundle for HTTPS and SMTPS targets (tests, private services)
/// ;allowPrivateEndpoints = false  ; true: targets on loopback/private addresses (tests only)
///
/// [forward.email]
/// url = smtps://smtp.example.org:465   ; or smtp://host:587 (STARTTLS is required then)
/// from = aprs@example.org
/// username = aprs@example.org
/// password = …
/// ```
extension PushConfig {
  /// Forwarding settings (`[forward]`).
  public struct Forward: Sendable, Equatable {
    /// Forwards started per minute at most, every station together.
    public var perMinute: Int
    /// A PEM bundle of CA certificates for HTTPS and SMTPS targets.
    public var caFile: String?
    /// Whether targets on loopback or private addresses are accepted (tests; never on a public server). Off, the
    /// responder refuses `localhost` and reserved address literals at save and the sender refuses to connect to
    /// any address in a reserved block whatever name resolved to it, disabling that target.
    public var allowPrivateEndpoints: Bool
    /// The SMTP server, nil when email forwarding is off.
    public var email: Email?

    public init(
      perMinute: Int = 600, caFile: String? = nil, allowPrivateEndpoints: Bool = false, email: Email? = nil
    ) {
      self.perMinute = perMinute
      self.caFile = caFile
      self.allowPrivateEndpoints = allowPrivateEndpoints
      self.email = email
    }
  }

  /// `[forward.email]`: the operator's SMTP server.
  public struct Email: Sendable, Equatable {
    /// `smtps://host[:port]` (TLS from the start, 465 by default) or `smtp://host[:port]` (STARTTLS required).
    public var url: String
    /// The envelope and header sender.
    public var from: String
    /// The SMTP login, nil for none.
    public var username: String?
    /// Its password.
    public var password: String?

    public init(url: String, from: String, username: String? = nil, password: String? = nil) {
      self.url = url
      self.from = from
      self.username = username
      self.password = password
    }
  }

  /// The section names.
  public static let forwardSection = "forward"
  public static let forwardEmailSection = "forward.email"

  /// Reads `[forward]` and `[forward.email]`: nil when `enabled = false`. Throws when a value is invalid (each
  /// error names its key); `[forward.email]` with some keys but no `url` or `from` is an error.
  public static func forward(_ config: ConfigFile) throws(ConfigError) -> Forward? {
    let section = forwardSection
    guard try config.bool(section, "enabled", default: true) else { return nil }
    var forward = Forward(
      perMinute: try config.int(section, "perMinute", default: 600, range: 1...100_000),
      caFile: try config.path(section, "caFile"),
      allowPrivateEndpoints: try config.bool(section, "allowPrivateEndpoints", default: false))
    if let caFile = forward.caFile, access(caFile, R_OK) != 0 {
      throw forwardInvalid(
        config, section, "caFile", "cannot read the file: \(String(cString: strerror(errno)))")
    }
    let email = forwardEmailSection
    let url = try config.string(email, "url")
    let from = try config.string(email, "from")
    let username = try config.string(email, "username")
    let password = try config.string(email, "password")
    if url != nil || from != nil || username != nil || password != nil {
      guard let url else {
        throw .invalidValue(
          key: "\(email).url", value: "", source: config.name,
          reason: "required for email forwarding: smtps://host:465 or smtp://host:587")
      }
      guard isMailServerURL(url) else {
        throw forwardInvalid(config, email, "url", "expected smtps://host[:port] or smtp://host[:port]")
      }
      guard let from else {
        throw .invalidValue(
          key: "\(email).from", value: "", source: config.name, reason: "required for email forwarding")
      }
      guard isMailAddress(from) else {
        throw forwardInvalid(config, email, "from", "expected a mail address such as aprs@example.org")
      }
      forward.email = Email(url: url, from: from, username: username, password: password)
    }
    return forward
  }

  /// `smtps://host[:port]` or `smtp://host[:port]`, nothing after the authority but an optional `/`.
  static func isMailServerURL(_ url: String) -> Bool {
    let rest: Substring
    if url.hasPrefix("smtps://") {
      rest = url.dropFirst(8)
    } else if url.hasPrefix("smtp://") {
      rest = url.dropFirst(7)
    } else {
      return false
    }
    let authority = rest.hasSuffix("/") ? rest.dropLast() : rest
    guard !authority.isEmpty, !authority.contains("/"), !authority.contains("@") else { return false }
    return authority.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "?") }
  }

  /// A plain `local@domain` address: printable ASCII without spaces, angle brackets, quotes or commas.
  public static func isMailAddress(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    guard (3...254).contains(bytes.count), let at = bytes.lastIndex(of: UInt8(ascii: "@")),
      at > 0, at < bytes.count - 1, bytes.count - at - 1 <= 253, at <= 64
    else { return false }
    let forbidden = Set("<>()[]\\,;:\"@ ".utf8)
    let local = bytes[..<at]
    let domain = bytes[(at + 1)...]
    guard local.allSatisfy({ (0x21...0x7E).contains($0) && !forbidden.contains($0) }) else { return false }
    guard domain.first != UInt8(ascii: "."), domain.last != UInt8(ascii: "."),
      domain.contains(UInt8(ascii: "."))
    else { return false }
    return domain.allSatisfy {
      (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
        || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
    }
  }

  private static func forwardInvalid(_ config: ConfigFile, _ section: String, _ key: String, _ reason: String)
    -> ConfigError
  {
    let value = config.value(section, key)
    return .invalidValue(
      key: "\(section).\(key)", value: value?.text ?? "", source: value?.source.description ?? config.name,
      reason: reason)
  }

  /// The keys of `[forward]` and `[forward.email]`.
  public static let forwardKeys: [String: Set<String>] = [
    forwardSection: ["enabled", "perMinute", "caFile", "allowPrivateEndpoints"],
    forwardEmailSection: ["url", "from", "username", "password"],
  ]
}
