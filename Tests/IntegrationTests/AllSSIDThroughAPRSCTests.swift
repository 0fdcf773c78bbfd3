import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The all-SSID inbox through the real aprsc (``RealAPRSC``), nginx and the responder: with `ssids:"all"` the
/// listener's `#filter` (sent on the open connection when the owner opts in) carries `g/…/W7ABC*`, which aprsc takes as a prefix, so a message to `W7ABC-9` (and one
/// to `W7ABC-0`, the bare call) reaches the listener, is stored for W7ABC-7 with `to`, is shown to a sync with
/// `want:["ssids"]` and not to the shipping app's sync.
@Suite(.serialized, .enabled(if: RealAPRSC.isAvailable, RealAPRSC.skipNote)) struct AllSSIDThroughAPRSCTests {
  static let station = "W7ABC"

  @Test func aMessageToAnotherSSIDPassesAprscsFilterAndReachesOnlyOptedInSyncs() throws {
    let aprsc = try RealAPRSC()
    defer { aprsc.stop() }
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let (identity, bearer) = try RealAPRSCListenerTests.claimedStation(stack, Self.station)

    let listener = try ListenerProcess(
      database: stack.databasePath, config: RealAPRSCListenerTests.listenerConfig(aprsc))
    defer { listener.stop() }
    let (address, _) = try RealAPRSCListenerTests.waitForListener(aprsc, listener)
    // The owner opts in while the listener is online: a `#filter` line on the same connection, which aprsc
    // holds with the prefix entry.
    let settings = try stack.post("/v1/settings", json: #"{\#(identity),"ssids":"all"}"#, headers: bearer)
    #expect(settings.status == 200 && settings.jsonObject?.string("ssids") == "all", "\(settings.text)")

    let held = waitUntil(timeout: 10, interval: 0.1) {
      let client = try? aprsc.clients().first { $0.string("username") == RealAPRSCListenerTests.login }
      return client?.string("filter")?.contains("\(Self.station)*") == true
    }
    #expect(held, "aprsc's filter: \(String(describing: try? aprsc.clients()))\n\(listener.log)")

    let peer = RealAPRSCListenerTests.peer
    let app = try APRSISClient(port: aprsc.port, login: peer, passcode: aprsPasscode(peer))
    try app.send("\(peer)>APDR16,TCPIP*::\(Self.station)-9 :to nine through aprsc{12")
    try app.send("\(peer)>APDR16,TCPIP*::\(Self.station)-0 :to zero through aprsc{13")
    let file = SQLiteFile(path: stack.databasePath)
    #expect(
      try file.waitUntil { try $0.int("SELECT count(*) FROM messages") == 2 },
      "not stored:\n\(listener.log)\n\(aprsc.log)")
    #expect(
      try file.run("SELECT station, addressee, peer, msgno FROM messages ORDER BY timestamp;")
        == "W7ABC-7|W7ABC-9|\(peer)|12\nW7ABC-7|W7ABC|\(peer)|13\n")

    // The shipping app's sync sees nothing new; one with want:["ssids"] sees both, with `to`.
    let old = try stack.post("/v1/sync", json: #"{\#(identity),"since":0}"#)
    #expect(old.status == 200 && old.jsonObject?.objects("messages").isEmpty == true, "\(old.text)")
    let opted = try stack.post(
      "/v1/sync", json: #"{\#(identity),"since":0,"want":["ssids"]}"#, headers: bearer)
    #expect(
      opted.jsonObject?.objects("messages").map { $0.string("to") } == ["W7ABC-9", "W7ABC"], "\(opted.text)")
    #expect(try RealAPRSCListenerTests.listenerAddress(aprsc) == address, "the listener reconnected")
    #expect(listener.terminate() == 0)
  }
}
