#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Who a request came from, as the per-address limits count clients, from the web server's `REMOTE_ADDR`:
/// the address itself (`key`) and the wider blocks it belongs to (`network`, `wideNetwork`).
///
/// - IPv4: the address itself in dotted decimal (`203.0.113.7`); an IPv4-mapped IPv6 address
///   (`::ffff:203.0.113.7`) counts as that IPv4 address in every width.
/// - IPv6: its /64 prefix in one canonical form (RFC 5952: lower-case hex groups without leading
///   zeros, the longest zero run as `::`), e.g. `2001:db8:0:1::/64`; one subscriber usually holds a
///   whole /64, so all of it is one address here.
///   Brackets and a zone (`%eth0`) are ignored.
/// - Anything else (empty: a CGI run without `REMOTE_ADDR`, tests; `unix:` from a web server listening
///   on a unix socket): the one shared key `unknown`, in no wider block.
///
/// Loopback is not special: behind a local proxy or tunnel every client is `127.0.0.1` and shares
/// one key.
public struct ClientAddress: Sendable, Equatable, CustomStringConvertible {
  /// The key, as described above.
  public let key: String
  /// The address itself: 4 bytes (IPv4, an IPv4-mapped IPv6 address too) or 16, network order; nil for `unknown`.
  public let bytes: [UInt8]?
  /// The block one site or small customer usually holds, counted by
  /// `[ratelimit] newStationsPerNetworkPerHour`: the IPv4 /24 (`203.0.113.0/24`) or the IPv6 /48
  /// (`2001:db8:1::/48`, what a tunnel broker or an ISP hands a customer for free). Nil for `unknown`.
  public let network: AddressBlock?
  /// The block one provider usually holds, counted by `[ratelimit] newStationsPerWideNetworkPerHour`: the
  /// IPv6 /32 (`2001:db8::/32`, a provider's or a tunnel broker's allocation). Nil for IPv4, which has
  /// no such width here: a /16 is shared by the customers of a whole ISP or mobile carrier (CGNAT pools),
  /// so one abuser there would lock out every other client behind it; and nil for `unknown`.
  public let wideNetwork: AddressBlock?

  /// The key every client without a usable address shares.
  public static let unknown = "unknown"

  /// The prefix lengths of `network` (IPv4, IPv6) and `wideNetwork` (IPv6 only).
  public static let networkPrefix = (ipv4: 24, ipv6: 48)
  public static let wideNetworkPrefix = 32

  /// Keys `remoteAddress` as described above.
  public init(_ remoteAddress: String) {
    let parsed = Self.bytes(of: remoteAddress)
    self.bytes = parsed
    guard let bytes = parsed else {
      key = Self.unknown
      network = nil
      wideNetwork = nil
      return
    }
    if bytes.count == 4 {
      key = bytes.map { String($0) }.joined(separator: ".")
      network = AddressBlock(bytes, prefixLength: Self.networkPrefix.ipv4)
      wideNetwork = nil
    } else {
      key = AddressBlock(bytes, prefixLength: 64)?.description ?? Self.unknown
      network = AddressBlock(bytes, prefixLength: Self.networkPrefix.ipv6)
      wideNetwork = AddressBlock(bytes, prefixLength: Self.wideNetworkPrefix)
    }
  }

  public var description: String { key }

  /// The address as 4 bytes (IPv4, also when IPv4-mapped) or 16 (IPv6), network order; nil when
  /// `remoteAddress` is no address.
  private static func bytes(of remoteAddress: String) -> [UInt8]? {
    var text = Substring(remoteAddress.trimmingASCIISpaces())
    if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
    if let zone = text.firstIndex(of: "%") { text = text[..<zone] }
    guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
    let address = String(text)
    var v4 = in_addr()
    if inet_pton(AF_INET, address, &v4) == 1 {
      return withUnsafeBytes(of: &v4) { Array($0) }
    }
    var v6 = in6_addr()
    guard inet_pton(AF_INET6, address, &v6) == 1 else { return nil }
    let bytes = withUnsafeBytes(of: &v6) { Array($0) }
    if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
      return Array(bytes[12..<16])
    }
    return bytes
  }
}
