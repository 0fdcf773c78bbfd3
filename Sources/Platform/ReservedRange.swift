/// A special-purpose address block (IANA's IPv4 and IPv6 special-purpose registries, RFC 6890) that a
/// connection to a public service never legitimately goes to: this machine, a private network, a link,
/// a multicast group. `IPAddress.reservedRange` finds an address's block in `table`.
public struct ReservedRange: Sendable, Hashable, CustomStringConvertible {
  /// The block in CIDR notation, e.g. `127.0.0.0/8`, `fc00::/7`.
  public let prefix: String
  /// What it is for, e.g. `loopback`, `private`, `link-local`.
  public let purpose: String
  /// The block's first address, 4 or 16 bytes.
  private let network: [UInt8]
  /// The prefix length in bits.
  private let length: Int

  private init(_ prefix: String, _ purpose: String) {
    self.prefix = prefix
    self.purpose = purpose
    let parts = prefix.split(separator: "/")
    network = IPAddress(String(parts[0]))!.bytes
    length = Int(parts[1])!
  }

  /// `loopback 127.0.0.0/8`.
  public var description: String { purpose + " " + prefix }

  /// Whether `bytes` (an address, 4 or 16 bytes) is in the block.
  func contains(_ bytes: [UInt8]) -> Bool {
    guard bytes.count == network.count else { return false }
    var bits = length
    for index in 0..<bytes.count where bits > 0 {
      let mask: UInt8 = bits >= 8 ? 0xFF : ~(0xFF >> UInt8(bits))
      if bytes[index] & mask != network[index] & mask { return false }
      bits -= 8
    }
    return true
  }

  /// Every block, first match wins. IPv4: `0.0.0.0/8` (this network; `0.0.0.0` reaches this host), `10/8`,
  /// `172.16/12` and `192.168/16` (RFC 1918), `100.64/10` (carrier-grade NAT, RFC 6598), `127/8`,
  /// `169.254/16` (link-local, where clouds serve instance metadata), `198.18/15` (benchmarking, RFC 2544),
  /// `224/4` (multicast) and `240/4` (reserved, with the broadcast address). IPv6: `::` (unspecified), `::1`,
  /// `::/96` (IPv4-compatible, deprecated), `fc00::/7` (unique local), `fe80::/10` (link-local),
  /// `fec0::/10` (site-local, deprecated) and `ff00::/8` (multicast). IPv4-mapped (`::ffff:0:0/96`) and
  /// NAT64 (`64:ff9b::/96`) addresses are judged by the IPv4 address they carry (`IPAddress.embeddedIPv4`).
  public static let table: [ReservedRange] = [
    ReservedRange("0.0.0.0/8", "this network"),
    ReservedRange("10.0.0.0/8", "private"),
    ReservedRange("100.64.0.0/10", "shared (carrier-grade NAT)"),
    ReservedRange("127.0.0.0/8", "loopback"),
    ReservedRange("169.254.0.0/16", "link-local"),
    ReservedRange("172.16.0.0/12", "private"),
    ReservedRange("192.168.0.0/16", "private"),
    ReservedRange("198.18.0.0/15", "benchmarking"),
    ReservedRange("224.0.0.0/4", "multicast"),
    ReservedRange("240.0.0.0/4", "reserved"),
    ReservedRange("::/128", "unspecified"),
    ReservedRange("::1/128", "loopback"),
    ReservedRange("::/96", "IPv4-compatible (deprecated)"),
    ReservedRange("64:ff9b:1::/48", "local-use IPv4/IPv6 translation"),
    ReservedRange("fc00::/7", "unique local"),
    ReservedRange("fe80::/10", "link-local"),
    ReservedRange("fec0::/10", "site-local (deprecated)"),
    ReservedRange("ff00::/8", "multicast"),
  ]
}
