#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The key the per-address rate limits count a client under, from the web server's `REMOTE_ADDR`.
///
/// - IPv4: the address itself in dotted decimal (`203.0.113.7`); an IPv4-mapped IPv6 address
///   (`::ffff:203.0.113.7`) counts as that IPv4 address.
/// - IPv6: its /64 prefix in one canonical form (RFC 5952: lower-case hex groups without leading
///   zeros, the longest zero run as `::`), e.g. `2001:db8:0:1::/64`; one subscriber usually holds a
///   whole /64, so all of it is one address here.
///   Brackets and a zone (`%eth0`) are ignored.
/// - Anything else (empty: a CGI run without `REMOTE_ADDR`, tests; `unix:` from a web server listening
///   on a unix socket): the one shared key `unknown`.
///
/// Loopback is not special: behind a local proxy or tunnel every client is `127.0.0.1` and shares
/// one key.
public struct ClientAddress: Sendable, Equatable, CustomStringConvertible {
  /// The key, as described above.
  public let key: String

  /// The key every client without a usable address shares.
  public static let unknown = "unknown"

  /// Keys `remoteAddress` as described above.
  public init(_ remoteAddress: String) {
    key = Self.key(of: remoteAddress)
  }

  public var description: String { key }

  private static func key(of remoteAddress: String) -> String {
    var text = Substring(remoteAddress.trimmingASCIISpaces())
    if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
    if let zone = text.firstIndex(of: "%") { text = text[..<zone] }
    guard !text.isEmpty, text.utf8.count <= 64 else { return unknown }
    let address = String(text)
    var v4 = in_addr()
    if inet_pton(AF_INET, address, &v4) == 1 {
      return dotted(withUnsafeBytes(of: &v4) { Array($0) })
    }
    var v6 = in6_addr()
    guard inet_pton(AF_INET6, address, &v6) == 1 else { return unknown }
    let bytes = withUnsafeBytes(of: &v6) { Array($0) }
    if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
      return dotted(Array(bytes[12..<16]))
    }
    // The /64: the interface half zeroed, printed the RFC 5952 way (inet_ntop: lower case, no
    // leading zeros, the longest zero run as `::`).
    withUnsafeMutableBytes(of: &v6) { raw in
      for index in 8..<16 { raw[index] = 0 }
    }
    var printed = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
    guard inet_ntop(AF_INET6, &v6, &printed, socklen_t(printed.count)) != nil else { return unknown }
    return String(decoding: printed.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/64"
  }

  private static func dotted(_ bytes: [UInt8]) -> String {
    bytes.map { String($0) }.joined(separator: ".")
  }
}
