import Platform
import Testing

/// The one classification of addresses that are not public unicast: each reserved block at its first and
/// last address and just outside it, IPv6 and the IPv4 addresses IPv6 carries; and the literal parser.
@Suite struct IPAddressTests {
  /// `address` is in the block named `range` (its CIDR prefix).
  static let reserved: [(address: String, range: String)] = [
    ("0.0.0.0", "0.0.0.0/8"), ("0.255.255.255", "0.0.0.0/8"),
    ("10.0.0.0", "10.0.0.0/8"), ("10.255.255.255", "10.0.0.0/8"),
    ("100.64.0.0", "100.64.0.0/10"), ("100.127.255.255", "100.64.0.0/10"),
    ("127.0.0.1", "127.0.0.0/8"), ("127.255.255.254", "127.0.0.0/8"),
    ("169.254.0.0", "169.254.0.0/16"), ("169.254.169.254", "169.254.0.0/16"),
    ("169.254.255.255", "169.254.0.0/16"),
    ("172.16.0.0", "172.16.0.0/12"), ("172.31.255.255", "172.16.0.0/12"),
    ("192.168.0.0", "192.168.0.0/16"), ("192.168.255.255", "192.168.0.0/16"),
    ("198.18.0.0", "198.18.0.0/15"), ("198.19.255.255", "198.18.0.0/15"),
    ("224.0.0.0", "224.0.0.0/4"), ("239.255.255.255", "224.0.0.0/4"),
    ("240.0.0.0", "240.0.0.0/4"), ("255.255.255.255", "240.0.0.0/4"),
    ("::", "::/128"), ("::1", "::1/128"), ("::2", "::/96"), ("::7f00:1", "::/96"),
    ("fc00::", "fc00::/7"), ("fd12:3456::1", "fc00::/7"),
    ("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fc00::/7"),
    ("fe80::", "fe80::/10"), ("fe80::1", "fe80::/10"),
    ("febf:ffff::1", "fe80::/10"), ("fec0::1", "fec0::/10"),
    ("ff00::", "ff00::/8"), ("ff02::1", "ff00::/8"), ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ff00::/8"),
    // IPv4-mapped and NAT64 addresses are judged by the IPv4 address they carry.
    ("::ffff:127.0.0.1", "127.0.0.0/8"), ("::ffff:7f00:1", "127.0.0.0/8"), ("::ffff:10.1.2.3", "10.0.0.0/8"),
    ("::ffff:169.254.169.254", "169.254.0.0/16"), ("::ffff:0.0.0.0", "0.0.0.0/8"),
    ("64:ff9b::a9fe:a9fe", "169.254.0.0/16"), ("64:ff9b::192.168.1.1", "192.168.0.0/16"),
    // So are IPv4-translated (RFC 2765) and 6to4 (RFC 3056, bytes 2–5) addresses; RFC 8215's local-use
    // translation prefix is not globally reachable.
    ("::ffff:0:7f00:1", "127.0.0.0/8"), ("::ffff:0:a00:1", "10.0.0.0/8"), ("2002:7f00:1::", "127.0.0.0/8"),
    ("2002:a00:1::1", "10.0.0.0/8"), ("2002:c0a8:101::", "192.168.0.0/16"),
    ("64:ff9b:1::a00:1", "64:ff9b:1::/48"), ("64:ff9b:1::808:808", "64:ff9b:1::/48"),
  ]

  /// Public unicast: the neighbours of each IPv4 block, and ordinary IPv6.
  static let publicAddresses = [
    "1.0.0.0", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255", "128.0.0.0",
    "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0", "192.167.255.255", "192.169.0.0",
    "198.17.255.255", "198.20.0.0", "223.255.255.255", "8.8.8.8", "2001:4860:4860::8888", "2a00:1450::1",
    "fbff:ffff::1", "ff::1", "::1:0:0:1", "::fffe:7f00:1", "::ffff:8.8.8.8", "64:ff9b::808:808",
    "::ffff:0:808:808", "2002:808:808::1", "64:ff9b:2::1",
  ]

  @Test(arguments: reserved) func reservedBlocksAreNamed(address: String, range: String) throws {
    let parsed = try #require(IPAddress(address), "\(address)")
    #expect(parsed.reservedRange?.prefix == range, "\(address)")
    #expect(!parsed.isPublic)
  }

  @Test(arguments: publicAddresses) func publicAddressesAreNotReserved(address: String) throws {
    let parsed = try #require(IPAddress(address), "\(address)")
    #expect(parsed.reservedRange == nil, "\(address): \(String(describing: parsed.reservedRange))")
    #expect(parsed.isPublic)
  }

  @Test func rangesDescribeThemselves() throws {
    #expect(IPAddress("127.0.0.1")?.reservedRange?.description == "loopback 127.0.0.0/8")
    #expect(IPAddress("169.254.169.254")?.reservedRange?.purpose == "link-local")
    #expect(IPAddress("fd00::1")?.reservedRange?.description == "unique local fc00::/7")
    #expect(IPAddress("::ffff:192.168.0.1")?.reservedRange?.description == "private 192.168.0.0/16")
  }

  @Test func literalsParseAndPrint() throws {
    #expect(IPAddress("10.0.0.1")?.bytes == [10, 0, 0, 1])
    #expect(IPAddress("10.0.0.1")?.isIPv4 == true)
    #expect(IPAddress("[::1]")?.bytes == [UInt8](repeating: 0, count: 15) + [1])
    #expect(IPAddress("::1")?.isIPv4 == false)
    #expect(IPAddress("::ffff:7f00:1")?.description == "::ffff:127.0.0.1")
    #expect(IPAddress("[FE80::A]")?.description == "fe80::a")
    #expect(IPAddress("192.168.001.010")?.description == "192.168.1.10")
    #expect(IPAddress(bytes: [8, 8, 4, 4])?.description == "8.8.4.4")
    #expect(IPAddress("::ffff:127.0.0.1")?.embeddedIPv4 == IPAddress("127.0.0.1"))
    #expect(IPAddress("2001:db8::1")?.embeddedIPv4 == nil)
    #expect(IPAddress(bytes: [1, 2, 3]) == nil)
    // Host names and the shorthand forms inet_aton would take are not literals.
    for text in [
      "", "localhost", "127.1", "2130706433", "0x7f.0.0.1", "1.2.3", "1.2.3.4.5", "256.0.0.1", "1.2.3.-1",
      "1.2.3.1234", "example.org", "[::1", "::1]", "[127.0.0.1]", ":::", "fe80::1%eth0", "1::2::3",
    ] {
      #expect(IPAddress(text) == nil, "\(text)")
    }
  }
}
