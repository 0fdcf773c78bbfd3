import APRS
import Store
import Testing

@testable import Listener

/// `CALL-0` is the bare call `CALL` wherever the listener compares calls.
@Suite struct ZeroSSIDRoutingTests {
  let stations = LiveStationSet([
    LiveStation(address: "N0CALL", ackMessages: true),
    LiveStation(address: "OH7LZB-9", ackMessages: true),
  ])

  private func route(_ line: String, router: LineRouter = LineRouter()) -> RoutedLine {
    router.route(bytes(line), stations: stations, canTransmit: true)
  }

  @Test func aMessageToCall0IsForTheBareStationAndAckedFromCall0() throws {
    let routed = route("KJ7ABC-7>APRS,TCPIP*::N0CALL-0 :Hello{12")
    let message = try #require(routed.messages.first)
    #expect(routed.messages.count == 1)
    #expect(message.incoming.station == "N0CALL")
    #expect(message.incoming.peer == "KJ7ABC-7")
    // The ACK comes from the addressee exactly as the message named it.
    #expect(message.ack.map { text($0.line) } == "N0CALL-0>APZACL,TCPIP*::KJ7ABC-7 :ack12\r\n")
    // Lower case too; and a retry naming `N0CALL` is the same message (one dedup key).
    let lower = try #require(route("KJ7ABC-7>APRS::n0call-0:Hello{12").messages.first)
    #expect(lower.incoming.station == "N0CALL")
    #expect(lower.ack.map { text($0.line) } == "n0call-0>APZACL,TCPIP*::KJ7ABC-7 :ack12\r\n")
    let bare = try #require(route("KJ7ABC-7>APRS::N0CALL   :Hello{12").messages.first)
    #expect(bare.incoming.dedupKey == message.incoming.dedupKey)
  }

  @Test func otherSSIDsAndLookalikesAreNotTheBareCall() {
    #expect(route("KJ7ABC-7>APRS::N0CALL-10:Hello{1").skip == .notForUs)
    #expect(route("KJ7ABC-7>APRS::N0CALL-00:Hello{1").skip == .notForUs)
    #expect(route("KJ7ABC-7>APRS::N0CALL-1 :Hello{1").skip == .notForUs)
    #expect(route("KJ7ABC-7>APRS::OH7LZB-0 :Hello{1").skip == .notForUs)
  }

  @Test func call0ToCallIsToSelfAndNeverAcked() throws {
    #expect(route("N0CALL-0>APRS::N0CALL   :note to self{3").skip == .toSelf)
    #expect(route("N0CALL>APRS::N0CALL-0 :note to self{3").skip == .toSelf)
    #expect(route("n0call-0>APRS::n0call-0:note to self{3").skip == .toSelf)
    guard case .success(.packet(let parsed)) = TNC2Packet.parse(bytes("N0CALL-0>APRS::N0CALL   :x{3")) else {
      Issue.record("not a packet")
      return
    }
    let packet = try #require(AddressedPacket.classify(parsed).addressed)
    #expect(packet.isToSelf && OutgoingLine.ack(for: packet) == nil)
    // Another SSID of the same call is a normal message.
    #expect(route("N0CALL-5>APRS::N0CALL-0 :hi{3").messages.first?.incoming.peer == "N0CALL-5")
  }

  @Test func aSenderCall0IsThePeerCallAndItsAckAnswersTheBareCallsSends() throws {
    let reply = try #require(route("N0CALL-0>APRS::OH7LZB-9 :Hi{4").messages.first)
    #expect(reply.incoming.peer == "N0CALL")
    // The ACK goes back to the sender as it named itself.
    #expect(reply.ack.map { text($0.line) } == "OH7LZB-9>APZACL,TCPIP*::N0CALL-0 :ack4\r\n")
    let receipt = try #require(route("N0CALL-0>APRS::OH7LZB-9 :ack7").receipt)
    #expect(receipt.peer == "N0CALL" && receipt.station == "OH7LZB-9" && receipt.msgno == "7")
    // Outgoing tracking files a message sent by `N0CALL-0` under `N0CALL`, to the bare addressee.
    let tracked = route("N0CALL-0>APRS::KJ7ABC-0 :out{5", router: LineRouter(trackOutgoing: true))
    #expect(tracked.messages.map(\.incoming.station) == ["N0CALL"])
    #expect(tracked.messages.first?.incoming.peer == "KJ7ABC")
  }

  @Test func anAuthenticatedAckToCall0IsAReceiptForTheBareStation() throws {
    let receipt = try #require(route("KJ7ABC-7>APRS::N0CALL-0 :ack556}eL8OYs").receipt)
    #expect(receipt.station == "N0CALL" && receipt.peer == "KJ7ABC-7" && receipt.msgno == "556")
    #expect(receipt.kind == .ack && receipt.replyAck == nil)
  }
}
