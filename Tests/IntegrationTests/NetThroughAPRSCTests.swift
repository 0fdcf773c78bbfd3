import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A net through the real aprsc (``RealAPRSC``), nginx and the responder: the `net` subscription's silent join
/// `K HOTG` leaves the listener's connection from the station's call and reaches ANSRVR (a client of aprsc logged
/// in as the service, filtering its own call); the service's `ack` ends the join, and the fan-out of a member's
/// post (from the original sender, `N:HOTG text`) passes aprsc's filter for the station and is stored as the
/// room's entry, ACKed to the sender through aprsc.
@Suite(.serialized, .enabled(if: RealAPRSC.isAvailable, RealAPRSC.skipNote))
struct NetThroughAPRSCTests {
  static let station = "W7ABC"

  @Test func theJoinGoesThroughAprscAndTheFanOutComesBackAsARoomEntry() throws {
    let aprsc = try RealAPRSC()
    defer { aprsc.stop() }
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let (identity, bearer) = try RealAPRSCListenerTests.claimedStation(stack, Self.station)
    let member = Self.station + "-7"
    let listener = try ListenerProcess(
      database: stack.databasePath,
      config: RealAPRSCListenerTests.listenerConfig(aprsc)
        + "\n[send]\nschedule = 0, 31\nackWait = 60s\npoll = 50ms\n")
    defer { listener.stop() }
    _ = try RealAPRSCListenerTests.waitForListener(aprsc, listener)
    let file = SQLiteFile(path: stack.databasePath)
    try #require(
      try file.waitUntil { try $0.meta("connected") == "1" && $0.meta("receiveOnly") == "0" },
      "the listener did not publish its login:\n\(listener.log)")
    let service = try APRSISClient(
      port: aprsc.port, login: "ANSRVR", passcode: aprsPasscode("ANSRVR"), filter: "g/ANSRVR")

    let settings = try stack.post(
      "/v1/settings",
      json:
        #"{\#(identity),"ackPolicy":"server","subscriptions":[{"kind":"net","server":"ANSRVR","group":"HOTG"}]}"#,
      headers: bearer)
    #expect(settings.status == 200, "\(settings.text)")
    let join = try service.waitForLine(timeout: 10) { $0.hasPrefix("\(member)>") && $0.contains(":K HOTG{") }
    let joinLine = try #require(join, "no join through aprsc:\n\(listener.log)\n\(aprsc.log)")
    #expect(joinLine.contains("::ANSRVR   :K HOTG{"), "\(joinLine)")
    let number = try #require(NetRig.msgno(of: joinLine))

    let padded = member.padding(toLength: 9, withPad: " ", startingAt: 0)
    try service.send("ANSRVR>APRS,TCPIP*::\(padded):ack\(number)")
    #expect(
      try file.waitUntil { try $0.run("SELECT state FROM sends;") == "acked\n" },
      "the join did not end acked:\n\(listener.log)")

    // The fan-out of W1AW's post as the station receives it: from W1AW (here sent by W1AW's own connection, as the
    // other aprsc suites inject a peer's lines), `N:HOTG` and the text; W1AW's app then sees the station's ACK.
    let peer = RealAPRSCListenerTests.peer
    let app = try APRSISClient(
      port: aprsc.port, login: peer, passcode: aprsPasscode(peer), filter: "g/\(peer)")
    try app.send("\(peer)>APWW11,TCPIP*::\(padded):N:HOTG Happy APRSThursday via aprsc{42")
    #expect(
      try file.waitUntil {
        try $0.run("SELECT room, peer, text FROM messages WHERE direction = 'received';")
          == "ANSRVR/HOTG|\(peer)|Happy APRSThursday via aprsc\n"
      }, "no room entry:\n\(listener.log)\n\(aprsc.log)")
    let ack = try app.waitForLine(timeout: 10) { $0.hasSuffix(":ack42") }
    #expect(ack?.hasPrefix("\(member)>") == true, "no ACK through aprsc:\n\(listener.log)")
    let opted = try stack.post(
      "/v1/sync", json: #"{\#(identity),"since":0,"want":["rooms"]}"#, headers: bearer)
    let received = opted.jsonObject?.objects("messages").filter { $0.string("direction") == "received" }
    #expect(
      received?.map { "\($0.string("type") ?? "")|\($0.string("room") ?? "")|\($0.string("peer") ?? "")" }
        == ["net|ANSRVR/HOTG|\(peer)"], "\(opted.text)")
    #expect(listener.terminate() == 0)
  }
}
