#if canImport(Glibc)
  import Glibc
#endif

/// An IPv4 or IPv6 address as bytes in network order, and whether it is a public unicast address
/// (`reservedRange`). The one classification of "this machine or a private network" the project has: the API
/// refuses Web Push endpoints whose host is such a literal (`WebPushEndpoint.isPrivateHost`), and the push
/// sender refuses to open a connection to such an address whatever name resolved to it (`CurlMulti`).
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
  /// 4 bytes (IPv4) or 16 (IPv6), network order.
  public let bytes: [UInt8]

  /// The address of `bytes`; nil unless there are 4 or 16 of them.
  public init?(bytes: [UInt8]) {
    guard bytes.count == 4 || bytes.count == 16 else { return nil }
    self.bytes = bytes
  }

  /// Parses an address literal: a dotted quad of four decimal numbers 0–255 (1–3 digits each; none of the
  /// shorthand forms `inet_aton` takes, such as `127.1`), or an IPv6 address with or without its URL
  /// brackets (`::1`, `[::1]`, `::ffff:10.0.0.1`). Nil for anything else (a host name).
  public init?(_ text: String) {
    if let quad = Self.dottedQuad(text) {
      bytes = quad
      return
    }
    var inner = Substring(text)
    if inner.first == "[" {
      guard inner.last == "]" else { return nil }
      inner = inner.dropFirst().dropLast()
    }
    guard inner.contains(":") else { return nil }
    var address = in6_addr()
    guard inet_pton(AF_INET6, String(inner), &address) == 1 else { return nil }
    bytes = withUnsafeBytes(of: &address) { Array($0) }
  }

  /// An IPv4 address in any form `inet_aton` reads, the shorthand ones included: `127.1`, `2130706433`,
  /// `0x7f000001`, `0177.0.0.1` (the forms URL parsers and libcurl's resolver also take as IPv4 literals).
  /// Nil for anything else.
  public init?(inetAton text: String) {
    var address = in_addr()
    guard !text.isEmpty, inet_aton(text, &address) != 0 else { return nil }
    bytes = withUnsafeBytes(of: &address.s_addr) { Array($0) }
  }

  /// IPv4 (4 bytes).
  public var isIPv4: Bool { bytes.count == 4 }

  /// The IPv4 address an IPv6 one carries when a connection to it reaches (or is relayed through) that IPv4
  /// host: in its last 4 bytes when IPv4-mapped (`::ffff:0:0/96`, RFC 4291), IPv4-translated
  /// (`::ffff:0:0:0/96`, RFC 2765) or NAT64-translated (`64:ff9b::/96`, RFC 6052); in bytes 2–5 for 6to4
  /// (`2002::/16`, RFC 3056).
  public var embeddedIPv4: IPAddress? {
    guard bytes.count == 16 else { return nil }
    if bytes[0] == 0x20 && bytes[1] == 0x02 { return IPAddress(bytes: Array(bytes[2..<6])) }
    let prefix = Array(bytes[0..<12])
    guard prefix == Self.mappedPrefix || prefix == Self.translatedPrefix || prefix == Self.nat64Prefix else {
      return nil
    }
    return IPAddress(bytes: Array(bytes[12...]))
  }

  /// The special-purpose range the address is in (loopback, private, link-local, multicast, …; see
  /// `ReservedRange.table`); nil for a public unicast address. An IPv4-mapped or NAT64 address is classified
  /// by the IPv4 address it carries.
  public var reservedRange: ReservedRange? {
    if let embedded = embeddedIPv4 { return embedded.reservedRange }
    return ReservedRange.table.first { $0.contains(bytes) }
  }

  /// Whether a connection to it may leave this machine for the public internet (`reservedRange` is nil).
  public var isPublic: Bool { reservedRange == nil }

  /// The usual text form (`inet_ntop`): `10.0.0.1`, `::1`, `::ffff:127.0.0.1`.
  public var description: String {
    var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
    let family = isIPv4 ? AF_INET : AF_INET6
    let written = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }
    guard written != nil else { return "?" }
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  private static let mappedPrefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]
  private static let translatedPrefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0]
  private static let nat64Prefix: [UInt8] = [0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0]

  /// Four decimal numbers 0–255 of 1–3 digits, dot-separated.
  private static func dottedQuad(_ text: String) -> [UInt8]? {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 4 else { return nil }
    var numbers: [UInt8] = []
    for part in parts {
      guard (1...3).contains(part.utf8.count), part.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
        let number = Int(part), number <= 255
      else { return nil }
      numbers.append(UInt8(number))
    }
    return numbers
  }
}

extension IPAddress {
  /// `address` (4 or 16 bytes, network order) with every bit past the first `prefixLength` cleared: the first
  /// address of the block of that width holding it. Nil for another byte count or a prefix outside
  /// 0…(bits of the address). The one masking of the per-address limits' blocks and the operator's bans.
  public static func masked(_ address: [UInt8], prefixLength: Int) -> [UInt8]? {
    guard address.count == 4 || address.count == 16, (0...address.count * 8).contains(prefixLength) else {
      return nil
    }
    var masked = address
    for index in masked.indices {
      let kept = min(8, max(0, prefixLength - index * 8))
      masked[index] &= kept == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - kept))
    }
    return masked
  }
}
