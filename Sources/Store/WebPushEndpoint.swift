/// A Web Push or UnifiedPush endpoint URL (the device token of `webpush` and `unifiedpush` devices): the push
/// service's resource a push is POSTed to (RFC 8030 §5). Pure parsing; the API validates with it, the sender
/// takes the VAPID audience (`origin`) from it.
///
/// Accepted: `https://` (scheme in any case), a host name, an IPv4 address or a bracketed IPv6 address, an
/// optional port 1–65535, then a path and query; at most `maxBytes` of printable ASCII without spaces, quotes,
/// angle brackets, backslashes or a fragment, no user name or password.
public struct WebPushEndpoint: Sendable, Equatable {
  /// The longest endpoint URL accepted, in bytes (PROTOCOL.md).
  public static let maxBytes = 1024

  /// The URL as given.
  public let url: String
  /// The host in lower case (an IPv6 address with its brackets).
  public let host: String
  /// The port; 443 when the URL names none.
  public let port: Int
  /// The origin (RFC 6454): `https://host`, with `:port` unless it is 443. The VAPID `aud` (RFC 8292).
  public var origin: String { port == 443 ? "https://" + host : "https://\(host):\(port)" }

  /// Parses `url`; nil when it is not an endpoint this server sends to.
  public init?(_ url: String) {
    let bytes = Array(url.utf8)
    let scheme = Array("https://".utf8)
    guard bytes.count > scheme.count, bytes.count <= Self.maxBytes,
      zip(bytes, scheme).allSatisfy({ Self.lower($0) == $1 }),
      bytes.allSatisfy(Self.isAllowed)
    else { return nil }
    let rest = bytes[scheme.count...]
    let authorityEnd = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
    let authority = Array(rest[rest.startIndex..<authorityEnd])
    guard !authority.isEmpty, !authority.contains(UInt8(ascii: "@")) else { return nil }
    var hostBytes = authority
    var portBytes: [UInt8]?
    if authority.first == UInt8(ascii: "[") {
      guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return nil }
      hostBytes = Array(authority[...close])
      let inner = authority[1..<close]
      guard inner.count >= 2,
        inner.allSatisfy({ Self.isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") })
      else { return nil }
      let after = authority[(close + 1)...]
      if !after.isEmpty {
        guard after.first == UInt8(ascii: ":") else { return nil }
        portBytes = Array(after.dropFirst())
      }
    } else if let colon = authority.firstIndex(of: UInt8(ascii: ":")) {
      hostBytes = Array(authority[..<colon])
      portBytes = Array(authority[(colon + 1)...])
    }
    if hostBytes.first != UInt8(ascii: "[") {
      guard !hostBytes.isEmpty, hostBytes.count <= 253,
        hostBytes.allSatisfy({ Self.isHostByte($0) }), hostBytes.first != UInt8(ascii: "."),
        hostBytes.first != UInt8(ascii: "-")
      else { return nil }
    }
    var port = 443
    if let portBytes {
      guard (1...5).contains(portBytes.count), portBytes.allSatisfy({ (0x30...0x39).contains($0) }),
        let number = Int(String(decoding: portBytes, as: UTF8.self)), (1...65_535).contains(number)
      else { return nil }
      port = number
    }
    self.url = url
    self.host = String(decoding: hostBytes.map(Self.lower), as: UTF8.self)
    self.port = port
  }

  /// Whether the host is this machine or a private network by its name or address literal: `localhost`
  /// (and `*.localhost`), IPv4 `0/8`, `10/8`, `100.64/10`, `127/8`, `169.254/16`, `172.16/12`, `192.168/16`,
  /// IPv6 `::`, `::1`, `fc00::/7`, `fe80::/10` and IPv4-mapped forms of the IPv4 ones. A public server refuses
  /// such endpoints (a client could otherwise make the listener POST into its own network); a name that
  /// resolves to such an address is not caught here.
  public var isPrivateHost: Bool {
    if host == "localhost" || host.hasSuffix(".localhost") { return true }
    if host.hasPrefix("[") {
      let inner = String(host.dropFirst().dropLast())
      if inner == "::" || inner == "::1" { return true }
      if inner.hasPrefix("fc") || inner.hasPrefix("fd") { return true }
      if ["fe8", "fe9", "fea", "feb"].contains(where: inner.hasPrefix) { return true }
      if inner.hasPrefix("::ffff:"), let v4 = Self.ipv4(String(inner.dropFirst(7))) {
        return Self.isPrivate(v4)
      }
      return false
    }
    guard let v4 = Self.ipv4(host) else { return false }
    return Self.isPrivate(v4)
  }

  private static func isPrivate(_ a: [Int]) -> Bool {
    a[0] == 0 || a[0] == 10 || a[0] == 127 || (a[0] == 100 && (64...127).contains(a[1]))
      || (a[0] == 169 && a[1] == 254) || (a[0] == 172 && (16...31).contains(a[1]))
      || (a[0] == 192 && a[1] == 168)
  }

  /// A dotted-quad IPv4 address's four numbers.
  private static func ipv4(_ text: String) -> [Int]? {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 4 else { return nil }
    var numbers: [Int] = []
    for part in parts {
      guard (1...3).contains(part.utf8.count), part.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
        let number = Int(part), number <= 255
      else { return nil }
      numbers.append(number)
    }
    return numbers
  }

  private static let excluded: Set<UInt8> = Set("\"#<>\\^`{|}".utf8)

  private static func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte + 0x20 : byte }

  private static func isHexDigit(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
  }

  private static func isHostByte(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
      || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
  }

  /// Printable ASCII without space, `"`, `#`, `<`, `>`, `\`, `^`, `` ` ``, `{`, `|`, `}`.
  private static func isAllowed(_ byte: UInt8) -> Bool {
    guard (0x21...0x7E).contains(byte) else { return false }
    return !excluded.contains(byte)
  }
}
