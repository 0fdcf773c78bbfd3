import Platform

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A block of client addresses that a wider per-address limit counts as one: the first `prefixLength`
/// bits of an address, the rest zeroed (`ClientAddress.network`, `ClientAddress.wideNetwork`).
public struct AddressBlock: Sendable, Hashable, CustomStringConvertible {
  /// The block's first address: 4 bytes (IPv4) or 16 (IPv6), network order, every bit past
  /// `prefixLength` zero.
  public let bytes: [UInt8]
  /// How many leading bits the block's addresses share (IPv4 /24: 24; IPv6 /48: 48, /32: 32).
  public let prefixLength: Int

  /// The block of `prefixLength` bits holding `address` (4 or 16 bytes, network order); nil for any
  /// other byte count or a prefix longer than the address.
  public init?(_ address: [UInt8], prefixLength: Int) {
    guard let masked = IPAddress.masked(address, prefixLength: prefixLength) else { return nil }
    bytes = masked
    self.prefixLength = prefixLength
  }

  /// IPv4 (4 bytes).
  public var isIPv4: Bool { bytes.count == 4 }

  /// CIDR notation, the way the rate-limit keys and the logs show it: `203.0.113.0/24`, and for IPv6
  /// the RFC 5952 form (`inet_ntop`: lower case, no leading zeros, the longest zero run as `::`),
  /// `2001:db8:1::/48`.
  public var description: String {
    if isIPv4 { return bytes.map { String($0) }.joined(separator: ".") + "/\(prefixLength)" }
    var printed = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
    let written = bytes.withUnsafeBytes {
      inet_ntop(AF_INET6, $0.baseAddress, &printed, socklen_t(printed.count))
    }
    guard written != nil else { return "?/\(prefixLength)" }
    return String(decoding: printed.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      + "/\(prefixLength)"
  }
}
