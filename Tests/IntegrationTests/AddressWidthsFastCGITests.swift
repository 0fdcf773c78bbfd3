import Foundation
import JSON
import TestSupport
import Testing

/// The new-station caps per network width, through the responder's FastCGI socket with the
/// `REMOTE_ADDR` a web server would pass: many /64s of one IPv6 /48 hit the /48's cap, many /48s of one
/// /32 the /32's, and an IPv4 /24 (IPv4-mapped addresses included) its own; `/metrics` counts each.
@Suite final class AddressWidthsFastCGITests {
  let directory: String

  init() throws {
    directory = try ResponderPaths.temporaryDirectory("widths")
  }

  deinit { try? FileManager.default.removeItem(atPath: directory) }

  /// A register of `call` (its own passcode) from `remoteAddress`.
  private func register(_ socket: String, _ call: String, from remoteAddress: String) throws -> ResponderReply
  {
    var hash = 0x73E2
    let bytes = Array(call.utf8)
    for index in stride(from: 0, to: bytes.count, by: 2) {
      hash ^= Int(bytes[index]) << 8
      if index + 1 < bytes.count { hash ^= Int(bytes[index + 1]) }
    }
    let body = Array(#"{"callsign":"\#(call)","ssid":0,"auth":"\#(hash & 0x7FFF)"}"#.utf8)
    let connection = try ResponderFastCGIConnection(unixPath: socket)
    let params = ResponderFastCGIConnection.params("POST", "/v1/register", body: body).map {
      $0.0 == "REMOTE_ADDR" ? ($0.0, remoteAddress) : $0
    }
    try connection.begin(params)
    try connection.send(body)
    try connection.endBody()
    return try connection.readReply().reply()
  }

  @Test func networkAndWideNetworkCapsThroughTheSocket() throws {
    let socket = directory + "/widths.sock"
    let server = try ResponderServer(
      executable: try ResponderPaths.responder(),
      arguments: ["--listen", socket, "--db", directory + "/aprs.sqlite", "--workers", "2"],
      directory: directory,
      environment: [
        "APRS_CLOUD_RATELIMIT_NEWSTATIONSPERADDRESSPERHOUR": "2",
        "APRS_CLOUD_RATELIMIT_NEWSTATIONSPERNETWORKPERHOUR": "4",
        "APRS_CLOUD_RATELIMIT_NEWSTATIONSPERWIDENETWORKPERHOUR": "6",
      ])
    // Four /64s of the tunnel broker's /48 2001:db8:77::/48, one station each, fill the /48.
    for index in 1...4 {
      let reply = try register(socket, "KA\(index)AA", from: "2001:db8:77:\(index)::1")
      #expect(reply.status == 200, "\(reply.bodyText)")
    }
    for remote in ["2001:db8:77:5::1", "2001:db8:77:ffff:1:2:3:4", "[2001:DB8:77:6::1]"] {
      let refused = try register(socket, "KB1AA", from: remote)
      #expect(refused.status == 429, "\(remote): \(refused.bodyText)")
      #expect(refused.header("Content-Type") == "application/json")
      #expect(refused.errorText?.contains("new stations from this network (2001:db8:77::/48)") == true)
      let retryAfter = try #require(refused.header("Retry-After").flatMap { Int($0) })
      #expect(retryAfter > 0 && retryAfter <= 3600)
    }
    // Two more /48s of the same /32 fill the /32's six; a third is refused; another /32 is not.
    #expect(try register(socket, "KC1AA", from: "2001:db8:78::1").status == 200)
    #expect(try register(socket, "KC2AA", from: "2001:db8:79:1::1").status == 200)
    let wide = try register(socket, "KC3AA", from: "2001:db8:7a::1")
    #expect(wide.status == 429, "\(wide.bodyText)")
    #expect(wide.errorText?.contains("new stations from this network (2001:db8::/32)") == true)
    #expect(wide.header("Retry-After").flatMap { Int($0) } != nil)
    #expect(try register(socket, "KC3AA", from: "2001:db9:7a::1").status == 200)
    // IPv4 counts per /24, an IPv4-mapped IPv6 address as its IPv4 address; there is no wider IPv4 width.
    for (index, remote) in ["198.51.100.1", "198.51.100.2", "::ffff:198.51.100.3", "198.51.100.4"]
      .enumerated()
    {
      #expect(try register(socket, "KD\(index)AA", from: remote).status == 200, "\(remote)")
    }
    let v4 = try register(socket, "KD9AA", from: "::ffff:198.51.100.200")
    #expect(v4.status == 429, "\(v4.bodyText)")
    #expect(v4.errorText?.contains("(198.51.100.0/24)") == true)
    for (index, remote) in (1...7).map({ "198.51.\(100 + $0).1" }).enumerated() {
      #expect(try register(socket, "KE\(index)AA", from: remote).status == 200, "\(remote)")
    }

    let connection = try ResponderFastCGIConnection(unixPath: socket)
    try connection.begin(
      ResponderFastCGIConnection.params("GET", "/metrics", extra: [("APRS_CLOUD_METRICS", "on")]))
    try connection.endBody()
    let scrape = try connection.readReply().reply()
    #expect(scrape.status == 200)
    let metrics = try PrometheusDocument(parsing: scrape.bodyText)
    let hits = { (limit: String) in metrics.value("aprs_cloud_limit_hits_total", ["limit": limit]) }
    let setting = { (limit: String) in metrics.value("aprs_cloud_limit_setting", ["limit": limit]) }
    #expect(hits("newStationsPerNetworkPerHour") == 4)
    #expect(hits("newStationsPerWideNetworkPerHour") == 1)
    #expect(hits("newStationsPerAddressPerHour") == 0)
    #expect(setting("newStationsPerNetworkPerHour") == 4)
    #expect(setting("newStationsPerWideNetworkPerHour") == 6)
    #expect(metrics.value("aprs_cloud_stations") == Double(4 + 2 + 1 + 4 + 7))
    #expect(server.stop() == 0)
  }
}
