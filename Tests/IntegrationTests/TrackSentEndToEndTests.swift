import Foundation
import Testing

/// `trackSent` end to end through the APRS-IS fake: what the station's radio sends, heard through an igate, is one
/// `sent` entry of its conversation; the peer's ack makes it `acked`; only `want:["sent"]` sees it; nothing of it
/// is pushed, ACKed or transmitted again (docs/protocol.md "Hearing the station's own radio").
@Suite(.serialized) struct TrackSentEndToEndTests {
  @Test func theRadiosMessageAndItsPeersAckAreOneSentThenAckedEntryNeverPushed() throws {
    let rig = try FallbackRig()
    defer { rig.stop() }
    let station = try rig.claim("N0CALL", ssid: 7)
    let answer = try rig.settings(station, #""trackSent":true"#)
    #expect(answer["trackSent"] == .bool(true) && answer.string("ownTransmissions") != nil, "\(answer)")
    try rig.startListener()
    #expect(
      rig.waitForFilter { FallbackAckEndToEndTests.senders(of: $0).contains(station) },
      "filter: \(rig.filter())\n\(rig.log)")

    // The radio's message, heard twice (a second igate; APRS-IS may drop it as a duplicate), is one entry.
    let radio = "\(station)>APK102,WIDE1-1,qAR,OH2IGT::KJ7ABC-7 :See you at 8{17"
    #expect(try rig.aprsis.inject([radio]) == 1)
    _ = try rig.aprsis.inject([radio.replacingOccurrences(of: "OH2IGT", with: "OH3IGT")])
    #expect(
      try rig.database.waitUntil {
        try $0.int("SELECT count(*) FROM messages WHERE direction = 'sent' AND heard_state = 'sent'") == 1
      }, "not stored:\n\(rig.log)")
    var entries = try rig.sync(station, want: ["sent"])
    #expect(entries.count == 1, "\(entries)")
    #expect(entries.first?.string("direction") == "sent" && entries.first?.string("peer") == "KJ7ABC-7")
    #expect(entries.first?.string("state") == "sent" && entries.first?.string("seqId") == "17")
    #expect(try rig.sync(station).isEmpty)  // the shipping app's answers are unchanged

    #expect(
      try rig.aprsis.inject([messageLine(from: "KJ7ABC-7", to: station, text: "ack17", msgno: nil)]) == 1)
    #expect(
      try rig.database.waitUntil {
        try $0.int("SELECT count(*) FROM messages WHERE heard_state = 'acked'") == 1
      },
      "not acked:\n\(rig.log)")
    entries = try rig.sync(station, want: ["sent"])
    #expect(entries.map { $0.string("state") } == ["acked"], "\(entries)")
    // Never pushed, never ACKed, never transmitted again.
    #expect(try rig.database.int("SELECT count(*) FROM outbox") == 0)
    #expect(try !rig.aprsis.wait("transmitted", count: 1, timeout: 1), "transmitted:\n\(rig.log)")
    #expect(try rig.database.int("SELECT count(*) FROM messages") == 1)
  }
}
