import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Subscriptions through the real aprsc (``RealAPRSC``), nginx and the responder: the owner's subscriptions put
/// `g/BLN*`, the group call, the weather servers' prefixes and `b/<watched call>` on the listener's one `#filter`
/// line (sent on the open connection: no reconnect), aprsc delivers the bulletin, the group message, the NWS
/// alert and the watched station's emergency status, each is stored once as its own entry type, never ACKed,
/// shown only to a sync with `want:["subscriptions"]`; removing the subscriptions takes the entries off the
/// filter and out of the inbox.
@Suite(.serialized, .enabled(if: RealAPRSC.isAvailable, RealAPRSC.skipNote))
struct SubscriptionsThroughAPRSCTests {
  static let station = "W7ABC"

  @Test func subscribedTrafficPassesAprscsFilterAndIsStoredAsEntriesNeverAcked() throws {
    let aprsc = try RealAPRSC()
    defer { aprsc.stop() }
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let (identity, bearer) = try RealAPRSCListenerTests.claimedStation(stack, Self.station)

    let listener = try ListenerProcess(
      database: stack.databasePath, config: RealAPRSCListenerTests.listenerConfig(aprsc))
    defer { listener.stop() }
    let (address, _) = try RealAPRSCListenerTests.waitForListener(aprsc, listener)
    let peer = RealAPRSCListenerTests.peer
    let subscriptions = """
      [{"kind":"bulletin","match":"BLN?WX"},{"kind":"group","call":"SLCARES"},\
      {"kind":"nws","zones":["OHC081"]},{"kind":"watch","call":"\(peer)","emergency":true}]
      """
    let settings = try stack.post(
      "/v1/settings", json: #"{\#(identity),"subscriptions":\#(subscriptions)}"#, headers: bearer)
    #expect(settings.status == 200, "\(settings.text)")

    func aprscFilter() -> String {
      let client = try? aprsc.clients().first { $0.string("username") == RealAPRSCListenerTests.login }
      return client?.string("filter") ?? ""
    }
    let held = waitUntil(timeout: 10, interval: 0.1) {
      let filter = aprscFilter()
      return ["BLN*", "SLCARES", "NWS*", "b/\(peer)"].allSatisfy { filter.contains($0) }
    }
    #expect(held, "aprsc's filter: \(aprscFilter())\n\(listener.log)")

    let app = try APRSISClient(port: aprsc.port, login: peer, passcode: aprsPasscode(peer))
    try app.send("\(peer)>APDR16,TCPIP*::BLN1WX   :Storm warning tonight")
    try app.send("\(peer)>APDR16,TCPIP*::BLN2     :Club meeting moved")
    try app.send("\(peer)>APDR16,TCPIP*::SLCARES  :Net tonight 2000{33")
    try app.send("\(peer)>APDR16,TCPIP*::NWS-WARN :092345z,SEVERE_WEATHER,OHC081,PAC125 Tornado Warning")
    try app.send("\(peer)>APDR16,TCPIP*:>EMERGENCY: car off the road")
    let file = SQLiteFile(path: stack.databasePath)
    #expect(
      try file.waitUntil { try $0.int("SELECT count(*) FROM messages WHERE kind IS NOT NULL") == 4 },
      "not stored:\n\(listener.log)\n\(aprsc.log)")
    #expect(
      try file.run(
        "SELECT kind, peer, coalesce(addressee, ''), coalesce(event, '') FROM messages ORDER BY timestamp;")
          == """
          bulletin|\(peer)|BLN1WX|
          group|\(peer)|SLCARES|
          nws|\(peer)|NWS-WARN|
          watch|\(peer)||emergency

          """)
    // Never ACKed: the numbered group message earns no ACK at its sender.
    #expect(try app.waitForLine(timeout: 3) { $0.contains(":ack33") } == nil)
    #expect(try file.int("SELECT count(*) FROM ack_state") == 0)

    // The shipping app's sync sees nothing; one with the opt-in sees the four entries.
    let old = try stack.post("/v1/sync", json: #"{\#(identity),"since":0}"#)
    #expect(old.status == 200 && old.jsonObject?.objects("messages").isEmpty == true, "\(old.text)")
    let opted = try stack.post(
      "/v1/sync", json: #"{\#(identity),"since":0,"want":["subscriptions"]}"#, headers: bearer)
    #expect(
      opted.jsonObject?.objects("messages").map { $0.string("type") } == [
        "bulletin", "group", "nws", "watch",
      ],
      "\(opted.text)")

    // Dropping the subscriptions takes their entries off the filter (same connection) and out of the inbox.
    let cleared = try stack.post(
      "/v1/settings", json: #"{\#(identity),"subscriptions":[]}"#, headers: bearer)
    #expect(cleared.status == 200, "\(cleared.text)")
    let gone = waitUntil(timeout: 10, interval: 0.1) {
      let filter = aprscFilter()
      return !filter.isEmpty && !filter.contains("BLN*") && !filter.contains("b/")
    }
    #expect(gone, "aprsc's filter: \(aprscFilter())\n\(listener.log)")
    #expect(try file.int("SELECT count(*) FROM messages WHERE kind IS NOT NULL") == 0)
    #expect(try RealAPRSCListenerTests.listenerAddress(aprsc) == address, "the listener reconnected")
    #expect(listener.terminate() == 0)
  }
}

extension RealAPRSCListenerTests {
  /// Registers `station`-7 (without history) through the stack and claims it: its identity fields (for a JSON
  /// body) and the `Authorization` header with its key.
  static func claimedStation(_ stack: TestStack, _ station: String) throws -> (
    identity: String, bearer: [String]
  ) {
    let auth = String(aprsPasscode(station))
    let identity = #""callsign":"\#(station)","ssid":7,"auth":"\#(auth)""#
    let registered = try stack.post(
      "/v1/register",
      json: #"{\#(identity),"platform":"android","pushToken":"","wantHistory":false,"since":0}"#)
    #expect(registered.status == 200, "\(registered.text)")
    let claim = try stack.post("/v1/claim", json: "{\(identity)}")
    let key = try #require(claim.jsonObject?.string("stationKey"), "\(claim.text)")
    return (identity, ["Authorization: Bearer \(key)"])
  }
}
