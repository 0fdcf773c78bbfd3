import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `ackPolicy:"fallback"` through the real aprsc (``RealAPRSC``), nginx and the responder: the listener's
/// `#filter` carries `b/W7ABC-7`, so the station's own `ack`, gated to aprsc by an igate on a second client
/// connection (source the station, addressee the sender), reaches the listener though it is addressed to neither
/// the listener nor a registered station; the server then sends no ACK for that message, while the next one,
/// which the radio leaves unanswered, gets exactly one ACK after the wait. The sender's app on a third connection
/// sees what aprsc delivers.
@Suite(.serialized, .enabled(if: RealAPRSC.isAvailable, RealAPRSC.skipNote))
struct FallbackAckThroughAPRSCTests {
  static let station = "W7ABC"
  static let igate = "OH2IGT"
  static let wait = 4.0

  @Test func theRadiosAckThroughAnotherClientSuppressesOursAndSilenceEarnsOneAckAfterTheWait() throws {
    let aprsc = try RealAPRSC()
    defer { aprsc.stop() }
    let rig = try FallbackRig()
    defer { rig.stop() }
    let station = try rig.claim(Self.station, ssid: 7)
    _ = try rig.settings(station, #""ackPolicy":"fallback","fallbackWait":\#(Int(Self.wait))"#)

    let listener = try ListenerProcess(
      database: rig.stack.databasePath, config: RealAPRSCListenerTests.listenerConfig(aprsc))
    defer { listener.stop() }
    let (address, _) = try RealAPRSCListenerTests.waitForListener(aprsc, listener)
    let held = waitUntil(timeout: 10, interval: 0.1) {
      let client = try? aprsc.clients().first { $0.string("username") == RealAPRSCListenerTests.login }
      return client?.string("filter").map { FallbackAckEndToEndTests.senders(of: $0).contains(station) }
        == true
    }
    #expect(held, "aprsc's filter: \(String(describing: try? aprsc.clients()))\n\(listener.log)")

    let peer = RealAPRSCListenerTests.peer
    let app = try APRSISClient(port: aprsc.port, login: peer, passcode: aprsPasscode(peer))
    let radio = try APRSISClient(port: aprsc.port, login: Self.igate, passcode: aprsPasscode(Self.igate))
    let file = SQLiteFile(path: rig.stack.databasePath)
    let padded = peer.padding(toLength: 9, withPad: " ", startingAt: 0)
    /// Our listener's ACK of `msgno` (its destination is the project's tocall; the radio's is not).
    func ours(_ line: String, _ msgno: String) -> Bool {
      line.hasPrefix("\(station)>APZACL,") && line.hasSuffix("::\(padded):ack\(msgno)")
    }

    // Message 12: the radio answers through the igate a second later.
    try app.send("\(peer)>APDR16,TCPIP*::\(station)  :through aprsc{12")
    #expect(
      try file.waitUntil { try $0.int("SELECT count(*) FROM messages") == 1 },
      "not stored:\n\(listener.log)\n\(aprsc.log)")
    try radio.send(radioAnswer(station, to: peer, "ack", "12", igate: Self.igate))
    let radiosAck = try app.waitForLine(timeout: 5) {
      $0.contains("qAR,\(Self.igate)") && $0.hasSuffix(":ack12")
    }
    #expect(radiosAck != nil, "aprsc did not deliver the radio's ack:\n\(aprsc.log)")
    #expect(
      try file.waitUntil(timeout: 5) {
        try $0.run("SELECT answered_by FROM messages WHERE msgno = '12';") == "air\n"
      }, "the listener did not hear the radio:\n\(listener.log)")

    // Message 13: the radio stays silent; our one ACK comes at the wait's end. Our ACK of 12 never comes.
    let sentAt = Date()
    try app.send("\(peer)>APDR16,TCPIP*::\(station)  :no radio now{13")
    var ourAcks: [String] = []
    var ack13At: Date?
    let deadline = Date().addingTimeInterval(Self.wait + 6)
    while ack13At == nil, deadline.timeIntervalSinceNow > 0 {
      guard let line = try app.readLine(timeout: deadline.timeIntervalSinceNow) else { break }
      if ours(line, "12") || ours(line, "13") { ourAcks.append(line) }
      if ours(line, "13") { ack13At = Date() }
    }
    let delay = ack13At.map { $0.timeIntervalSince(sentAt) } ?? -1
    #expect(delay >= Self.wait, "our ACK of 13 came \(delay) s after it:\n\(listener.log)")
    // Two more seconds: nothing more from the listener.
    let quiet = Date().addingTimeInterval(2)
    while quiet.timeIntervalSinceNow > 0, let line = try app.readLine(timeout: quiet.timeIntervalSinceNow) {
      if ours(line, "12") || ours(line, "13") { ourAcks.append(line) }
    }
    #expect(ourAcks.count == 1 && ourAcks.allSatisfy { ours($0, "13") }, "\(ourAcks)")
    #expect(
      try file.run("SELECT msgno, coalesce(answered_by, '-') FROM messages ORDER BY msgno;")
        == "12|air\n13|-\n")
    #expect(
      rig.waitForCounter("airAnswered", 1) && rig.waitForCounter("fallbackAcks", 1), "\(rig.healthSummary)")
    #expect(try rig.counter("acksSent") == 1, "\(rig.healthSummary)")
    #expect(try RealAPRSCListenerTests.listenerAddress(aprsc) == address, "the listener reconnected")
    #expect(listener.terminate() == 0)
  }
}
