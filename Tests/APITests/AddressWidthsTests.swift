import API
import APRS
import Foundation
import Store
import Testing

/// A register body for `call` (its own passcode).
private func register(_ call: String) -> [String: Any] {
  ["callsign": call, "ssid": 0, "auth": String(Passcode.compute(call))]
}

/// `count` distinct valid base calls with their own prefix, so suites never collide.
private func calls(_ count: Int, prefix: String) -> [String] {
  (0..<count).map { "\(prefix)\($0)XY" }
}

@Suite struct ClientAddressWidthTests {
  @Test(
    arguments: [
      // IPv4: the /24, no wide network; IPv4-mapped IPv6 is IPv4 in every width.
      ("203.0.113.7", "203.0.113.7", "203.0.113.0/24", nil),
      ("203.0.113.255", "203.0.113.255", "203.0.113.0/24", nil),
      (" 10.1.2.3 ", "10.1.2.3", "10.1.2.0/24", nil),
      ("0.0.0.0", "0.0.0.0", "0.0.0.0/24", nil),
      ("255.255.255.255", "255.255.255.255", "255.255.255.0/24", nil),
      ("127.0.0.1", "127.0.0.1", "127.0.0.0/24", nil),
      ("::ffff:203.0.113.7", "203.0.113.7", "203.0.113.0/24", nil),
      ("::FFFF:cb00:7107", "203.0.113.7", "203.0.113.0/24", nil),
      ("[::ffff:198.51.100.9]", "198.51.100.9", "198.51.100.0/24", nil),
      ("0:0:0:0:0:ffff:c633:6409", "198.51.100.9", "198.51.100.0/24", nil),
      // IPv6: /64 key, /48 network, /32 wide network, all RFC 5952.
      ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64", "2001:db8:1::/48", "2001:db8::/32"),
      ("2001:0DB8:ABCD:FFFF::1", "2001:db8:abcd:ffff::/64", "2001:db8:abcd::/48", "2001:db8::/32"),
      ("[2001:db8:ab:cd::2]", "2001:db8:ab:cd::/64", "2001:db8:ab::/48", "2001:db8::/32"),
      ("2001:db8:8000::1", "2001:db8:8000::/64", "2001:db8:8000::/48", "2001:db8::/32"),
      ("2a00:1450:4001:82b::200e", "2a00:1450:4001:82b::/64", "2a00:1450:4001::/48", "2a00:1450::/32"),
      (
        "2001:db9:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9:ffff:ffff::/64", "2001:db9:ffff::/48",
        "2001:db9::/32"
      ),
      ("2001:470:1f0b:1a2::2", "2001:470:1f0b:1a2::/64", "2001:470:1f0b::/48", "2001:470::/32"),
      ("fe80::1%eth0", "fe80::/64", "fe80::/48", "fe80::/32"),
      ("::1", "::/64", "::/48", "::/32"),
      ("::", "::/64", "::/48", "::/32"),
      // NAT64 and 6to4 are IPv6 clients (only IPv4-mapped is IPv4).
      ("64:ff9b::203.0.113.7", "64:ff9b::/64", "64:ff9b::/48", "64:ff9b::/32"),
      ("2002:cb00:7107::1", "2002:cb00:7107::/64", "2002:cb00:7107::/48", "2002:cb00::/32"),
      // No usable address: one shared key, no network.
      ("", "unknown", nil, nil),
      ("unix:", "unknown", nil, nil),
      ("not an address", "unknown", nil, nil),
      ("999.1.1.1", "unknown", nil, nil),
      ("1.2.3", "unknown", nil, nil),
      ("2001:db8::1/64", "unknown", nil, nil),
      ("2001:db8:::1", "unknown", nil, nil),
    ] as [(String, String, String?, String?)])
  func widths(remote: String, key: String, network: String?, wide: String?) {
    let client = ClientAddress(remote)
    #expect(client.key == key, "\(remote)")
    #expect(client.network?.description == network, "\(remote)")
    #expect(client.wideNetwork?.description == wide, "\(remote)")
    #expect(client.network?.prefixLength == network.map { $0.contains(":") ? 48 : 24 }, "\(remote)")
  }

  /// Blocks mask every bit past their prefix, also within a byte.
  @Test func blocksMaskTheHostBits() {
    #expect(AddressBlock([10, 1, 255, 3], prefixLength: 20)?.description == "10.1.240.0/20")
    #expect(AddressBlock([255, 255, 255, 255], prefixLength: 0)?.description == "0.0.0.0/0")
    #expect(AddressBlock([255, 255, 255, 255], prefixLength: 32)?.description == "255.255.255.255/32")
    let v6: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff] + [UInt8](repeating: 0xff, count: 10)
    #expect(AddressBlock(v6, prefixLength: 36)?.description == "2001:db8:f000::/36")
    #expect(AddressBlock(v6, prefixLength: 128)?.description == "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff/128")
    #expect(AddressBlock([1, 2, 3, 4], prefixLength: 33) == nil)
    #expect(AddressBlock([1, 2, 3], prefixLength: 8) == nil)
    #expect(AddressBlock(v6, prefixLength: -1) == nil)
    // Two addresses of one block are one value.
    #expect(ClientAddress("2001:db8:1:5::1").network == ClientAddress("2001:db8:1:ffff::9").network)
    #expect(ClientAddress("2001:db8:1:5::1").network != ClientAddress("2001:db8:2:5::1").network)
    #expect(ClientAddress("203.0.113.1").network == ClientAddress("::ffff:203.0.113.200").network)
  }
}

@Suite struct AddressWidthLimitsTests {
  /// A free /48 from a tunnel broker is 65,536 /64s: each under its own per-address cap, all under the
  /// /48's.
  @Test func manySlash64sOfOneSlash48HitTheNetworkCap() throws {
    var config = APIConfig()
    config.newStationsPerAddressPerHour = 2
    config.newStationsPerNetworkPerHour = 5
    let api = try APIFixture(config: config)
    let stations = calls(9, prefix: "KA")
    for (index, call) in stations.prefix(5).enumerated() {
      let reply = api.post("/v1/register", register(call), from: "2001:db8:1:\(index + 1)::1")
      #expect(reply.status == 200, "\(reply.text)")
    }
    let refused = api.post("/v1/register", register(stations[5]), from: "2001:db8:1:77::1")
    #expect(refused.status == 429)
    #expect(
      refused.error?.contains("too many new stations from this network (2001:db8:1::/48)") == true,
      "\(refused.text)")
    let retryAfter = try #require(refused.header("Retry-After").flatMap { Int($0) })
    #expect(retryAfter > 0 && retryAfter <= 3600)
    // A heartbeat that would re-create a station counts too; stations there go on refreshing.
    #expect(api.post("/v1/heartbeat", register(stations[5]), from: "2001:db8:1:78::1").status == 429)
    #expect(api.post("/v1/heartbeat", register(stations[0]), from: "2001:db8:1:79::1").status == 200)
    #expect(try api.hits(.newStationsPerNetworkPerHour) == 2)
    #expect(try api.hits(.newStationsPerAddressPerHour) == 0)
    // Another /48 of the same /32 still creates.
    #expect(api.post("/v1/register", register(stations[5]), from: "2001:db8:2:1::1").status == 200)
    #expect(try api.database.stationCount() == 6)
    // An hour later the /48 creates again.
    api.clock.advance(ms: 3_600_000)
    #expect(api.post("/v1/register", register(stations[6]), from: "2001:db8:1:77::1").status == 200)
  }

  @Test func manySlash48sOfOneSlash32HitTheWideNetworkCap() throws {
    var config = APIConfig()
    config.newStationsPerNetworkPerHour = 2
    config.newStationsPerWideNetworkPerHour = 4
    let api = try APIFixture(config: config)
    let stations = calls(8, prefix: "KB")
    for (index, call) in stations.prefix(4).enumerated() {
      #expect(api.post("/v1/register", register(call), from: "2001:db8:\(index + 1)::1").status == 200)
    }
    api.clock.advance(ms: 1_800_000)
    let refused = api.post("/v1/register", register(stations[4]), from: "2001:db8:ff::1")
    #expect(refused.status == 429)
    #expect(
      refused.error?.contains("too many new stations from this network (2001:db8::/32)") == true,
      "\(refused.text)")
    #expect(refused.header("Retry-After") == "1800")
    #expect(try api.hits(.newStationsPerWideNetworkPerHour) == 1)
    #expect(try api.hits(.newStationsPerNetworkPerHour) == 0)
    api.clock.advance(ms: 1_800_000 - 1)
    #expect(api.post("/v1/register", register(stations[4]), from: "2001:db8:ff::2").status == 429)
    // The refused requests used up nothing of their /48: once the /32 reopens it takes its two.
    api.clock.advance(ms: 1)
    #expect(api.post("/v1/register", register(stations[4]), from: "2001:db8:ff::1").status == 200)
    #expect(api.post("/v1/register", register(stations[5]), from: "2001:db8:ff:1::1").status == 200)
    #expect(api.post("/v1/register", register(stations[6]), from: "2001:db8:ff:2::1").status == 429)
    // Another /32 is another budget.
    #expect(api.post("/v1/register", register(stations[6]), from: "2001:db9::1").status == 200)
  }

  @Test func ipv4CountsPerSlash24WithMappedAddressesAndHasNoWiderWidth() throws {
    var config = APIConfig()
    config.newStationsPerNetworkPerHour = 3
    config.newStationsPerWideNetworkPerHour = 1
    let api = try APIFixture(config: config)
    let stations = calls(10, prefix: "KC")
    for (index, remote) in ["203.0.113.1", "203.0.113.2", "::ffff:203.0.113.3"].enumerated() {
      #expect(api.post("/v1/register", register(stations[index]), from: remote).status == 200, "\(remote)")
    }
    for remote in ["203.0.113.4", "::ffff:203.0.113.250", "[::ffff:cb00:71fe]"] {
      let refused = api.post("/v1/register", register(stations[3]), from: remote)
      #expect(refused.status == 429, "\(remote)")
      #expect(
        refused.error?.contains("too many new stations from this network (203.0.113.0/24)") == true,
        "\(refused.text)")
    }
    #expect(try api.hits(.newStationsPerNetworkPerHour) == 3)
    // No /16 or /8 width for IPv4: neighbouring /24s create freely though the IPv6 /32 cap is 1.
    for (index, remote) in ["203.0.114.1", "203.0.115.1", "203.1.0.1", "10.0.0.1"].enumerated() {
      #expect(
        api.post("/v1/register", register(stations[4 + index]), from: remote).status == 200, "\(remote)")
    }
    #expect(try api.hits(.newStationsPerWideNetworkPerHour) == 0)
    // Clients without an address share one key and no network.
    #expect(api.post("/v1/register", register(stations[8])).status == 200)
    #expect(api.post("/v1/register", register(stations[9]), from: "unix:").status == 200)
  }

  /// Over several widths at once: each limit counts a hit, the 429 names the widest and waits for the
  /// last window to reopen.
  @Test func overSeveralWidthsAtOnce() throws {
    var config = APIConfig()
    config.newStationsPerAddressPerHour = 1
    config.newStationsPerNetworkPerHour = 2
    config.newStationsPerWideNetworkPerHour = 2
    let api = try APIFixture(config: config)
    let stations = calls(4, prefix: "KD")
    #expect(api.post("/v1/register", register(stations[0]), from: "2001:db8:1::1").status == 200)
    api.clock.advance(ms: 600_000)
    #expect(api.post("/v1/register", register(stations[1]), from: "2001:db8:1:1::1").status == 200)
    api.clock.advance(ms: 600_000)
    // The first /64 is over its own 1 (its window reopens in 40 min), the /48 and /32 over their 2 (in 40 min
    // too: all three windows opened with the first station).
    let refused = api.post("/v1/register", register(stations[2]), from: "2001:db8:1::9")
    #expect(refused.status == 429)
    #expect(refused.error?.contains("(2001:db8::/32)") == true, "\(refused.text)")
    #expect(refused.header("Retry-After") == "2400")
    // The second /64 opened its window 10 min later: refused there, the wait is that later window's.
    api.clock.advance(ms: 2_400_000)
    #expect(api.post("/v1/register", register(stations[2]), from: "2001:db8:1::9").status == 200)
    let later = api.post("/v1/register", register(stations[3]), from: "2001:db8:1:1::2")
    #expect(later.status == 429)
    #expect(later.error?.contains("from this address") == true, "\(later.text)")
    #expect(later.header("Retry-After") == "600")
    #expect(try api.hits(.newStationsPerAddressPerHour) == 2)
    #expect(try api.hits(.newStationsPerNetworkPerHour) == 1)
    #expect(try api.hits(.newStationsPerWideNetworkPerHour) == 1)
  }

  @Test func metricsShowTheSettingsAndHits() throws {
    var config = APIConfig()
    config.newStationsPerNetworkPerHour = 1
    config.newStationsPerWideNetworkPerHour = 7
    let api = try APIFixture(config: config)
    #expect(api.post("/v1/register", register("KE0XY"), from: "198.51.100.1").status == 200)
    #expect(api.post("/v1/register", register("KE1XY"), from: "198.51.100.2").status == 429)
    let metrics = api.handler.handle(APIRequest(method: "GET", path: "/metrics", viaMetricsListener: true))
    let text = String(decoding: metrics.body, as: UTF8.self)
    #expect(text.contains(#"aprs_cloud_limit_hits_total{limit="newStationsPerNetworkPerHour"} 1"#), "\(text)")
    #expect(text.contains(#"aprs_cloud_limit_hits_total{limit="newStationsPerWideNetworkPerHour"} 0"#))
    #expect(text.contains(#"aprs_cloud_limit_setting{limit="newStationsPerNetworkPerHour"} 1"#))
    #expect(text.contains(#"aprs_cloud_limit_setting{limit="newStationsPerWideNetworkPerHour"} 7"#))
  }
}
