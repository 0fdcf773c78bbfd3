import Platform

/// A Web Push or UnifiedPush endpoint URL (the device token of `webpush` and `unifiedpush` devices): the push
/// service's resource a push is POSTed to (RFC 8030 §5). Pure parsing; the API validates with it, the sender
/// takes the VAPID audience (`origin`) from it.
///
/// Accepted: `https://` (scheme in any case), a host name, an IPv4 address or a bracketed IPv6 address, an
/// optional port 1–65535, then a path and query; at most `maxBytes` of printable ASCII without spaces, quotes,
/// angle brackets, backslashes or a fragment, no user name or password.
public struct WebPushEndpoint: Sendable, Equatable {
  /// The longest endpoint URL accepted, in bytes (docs/protocol.md).
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
  /// (and `*.localhost`, with or without the root's trailing dot), or an IPv4 or IPv6 literal in one of
  /// `ReservedRange.table`'s blocks (loopback, private, link-local, carrier-grade NAT, multicast, …; an
  /// IPv4-mapped IPv6 literal by its IPv4 address). The API refuses such endpoints on a public server (a
  /// client could otherwise make the listener POST into its own network). A name that resolves to such an
  /// address is not caught here: the push sender refuses the connection when libcurl is about to open it
  /// (`HTTPRequest.refusePrivateAddresses`), whatever the name.
  public var isPrivateHost: Bool {
    let name = host.hasSuffix(".") ? String(host.dropLast()) : host
    if name == "localhost" || name.hasSuffix(".localhost") { return true }
    guard let address = IPAddress(name) ?? IPAddress(inetAton: name) else { return false }
    return !address.isPublic
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
