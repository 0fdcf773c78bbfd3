import API
import Foundation
import JSON
import Store
import Testing

/// The global send budget shared fairly (docs/design.md "Who may do what"): one network (IPv4 /24, IPv6 /48, IPv6
/// /32) sends at most its share of everyone's, one station no more than that, and a cancelled send still counts.
@Suite struct SendFairnessTests {
  /// Everyone's budget 30 a minute, the station's and the address's own limits out of the way, three stations.
  static func fixture() throws -> APIFixture {
    var config = APIConfig()
    config.send.perMinute = 30
    config.send.sendsPerAddressPerMinute = 30
    config.send.inFlight = 30
    config.send.sendsPerMinuteGlobal = 30
    let api = try SendMannersTests.fixture(config)
    for call in ["KJ7ABC", "W5AGO", "OH7LZB"] { SendMannersTests.register(api, call, ssid: 0) }
    return api
  }

  @Test func oneNetworkCannotSpendEveryonesBudget() throws {
    let api = try Self.fixture()
    // A station alone takes at most a third of everyone's budget, whatever its own limit.
    var sent = 0
    while sent < 30,
      SendMannersTests.send(api, SendMannersTests.body("KJ7ABC", ["text": "m\(sent)"]), from: "203.0.113.7")
        .status == 200
    {
      sent += 1
    }
    #expect(sent == 10)
    // Another station of the same /24, from another address: the network's share is spent, and the 429 names it.
    let neighbour = SendMannersTests.send(api, SendMannersTests.body("W5AGO"), from: "203.0.113.8")
    #expect(neighbour.status == 429, "\(neighbour.text)")
    #expect(neighbour.error?.contains("this network (203.0.113.0/24)") == true, "\(neighbour.text)")
    // A cancel gives nothing back.
    let first = try #require(
      SendMannersTests.send(api, SendMannersTests.body("OH7LZB", ["clientId": "c1"]), from: "198.51.100.7")
        .status == 200 ? "c1" : nil)
    #expect(
      SendMannersTests.send(
        api, ["callsign": "OH7LZB", "ssid": 0, "auth": SendMannersTests.passcode("OH7LZB"), "cancel": first],
        from: "198.51.100.7"
      ).status == 200)
    // Everyone else still sends: the other network has its own share.
    var other = 1
    while other < 30,
      SendMannersTests.send(api, SendMannersTests.body("OH7LZB", ["text": "o\(other)"]), from: "198.51.100.7")
        .status == 200
    {
      other += 1
    }
    #expect(other == 10, "the cancelled send counted")
    #expect(try api.database.limitStatus()[.sendsPerNetworkPerMinute] >= 1)
  }

  @Test func anIPv6WideNetworkTakesAtMostHalf() throws {
    let api = try Self.fixture()
    // Three /48s of one /32: 10 each would be 30; the /32 stops at 15.
    var total = 0
    for (call, address) in [
      ("KJ7ABC", "2001:db8:1::7"), ("W5AGO", "2001:db8:2::7"), ("OH7LZB", "2001:db8:3::7"),
    ] {
      for index in 0..<10
      where SendMannersTests.send(api, SendMannersTests.body(call, ["text": "x\(index)"]), from: address)
        .status
        == 200
      {
        total += 1
      }
    }
    #expect(total == 15)
  }
}
