import APRS
import Store
import Testing

@testable import Listener

@Suite struct LineRouterTests {
  let stations = LiveStationSet([
    LiveStation(address: "OH7LZB", ackMessages: true),
    LiveStation(address: "N0CALL-7", ackMessages: false),
    LiveStation(address: "KJ7ABC-7", ackMessages: true),
  ])
  let router = LineRouter()

  private func route(_ line: String, canTransmit: Bool = true, router: LineRouter? = nil) -> RoutedLine {
    (router ?? self.router).route(bytes(line), stations: stations, canTransmit: canTransmit)
  }

  @Test func aNumberedMessageToAStationThatWantsAcksIsStoredAndAcked() throws {
    let routed = route("OH7AA-1>APRS,WIDE1-1,WIDE2-2,qAo,OH7AA::OH7LZB   :Testing, 1 2 3{42")
    #expect(routed.skip == nil)
    let message = try #require(routed.messages.first)
    #expect(routed.messages.count == 1)
    #expect(message.incoming.station == "OH7LZB")
    #expect(message.incoming.direction == .received)
    #expect(message.incoming.peer == "OH7AA-1")
    #expect(message.incoming.text == "Testing, 1 2 3")
    #expect(message.incoming.msgno == "42")
    #expect(message.incoming.dedupWindowMs == 3_600_000)
    #expect(
      message.incoming.dedupKey
        == DedupKey(sender: "OH7AA-1", addressee: "OH7LZB", msgno: "42", text: "Testing, 1 2 3").digest)
    #expect(message.ack.map { text($0.line) } == "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack42\r\n")
    #expect(message.ack?.key == message.incoming.dedupKey)
  }

  @Test func addresseeMatchesCaseInsensitivelyWithExactSSID() {
    // Lower case and unpadded: matched, and the ACK's source is the addressee as sent.
    let lower = route("OH7AA-1>APRS::oh7lzb:hello{7")
    #expect(lower.messages.first?.incoming.station == "OH7LZB")
    #expect(lower.messages.first?.ack.map { text($0.line) } == "oh7lzb>APZACL,TCPIP*::OH7AA-1  :ack7\r\n")
    #expect(route("OH7AA-1>APRS::OH7LZB-1 :other ssid{1").skip == .notForUs)
    #expect(route("OH7AA-1>APRS::N0CALL   :no ssid{1").skip == .notForUs)
    #expect(route("OH7AA-1>APRS::n0call-7 :hi{1").messages.first?.incoming.station == "N0CALL-7")
  }

  @Test func ackMessagesFalseMeansNoAck() {
    let routed = route("OH7AA-1>APRS::N0CALL-7 :hi{1")
    #expect(routed.messages.count == 1)
    #expect(routed.messages.first?.ack == nil)
  }

  @Test func unverifiedOrReceiveOnlyMeansNoAck() {
    let routed = route("OH7AA-1>APRS::OH7LZB   :hi{1", canTransmit: false)
    #expect(routed.messages.count == 1)
    #expect(routed.messages.first?.ack == nil)
  }

  @Test func unnumberedMessagesAreStoredButNeverAcked() {
    let routed = route("OH7AA-1>APRS::OH7LZB   :no number")
    #expect(routed.messages.first?.incoming.msgno == nil)
    #expect(routed.messages.first?.incoming.dedupWindowMs == 1_800_000)
    #expect(routed.messages.first?.ack == nil)
  }

  @Test func replyAckIsEchoedAndKeyedOnTheNumberAlone() throws {
    let first = try #require(route("OH7AA-1>APRS::OH7LZB   :reply{MM}AA").messages.first)
    let retry = try #require(route("OH7AA-1>APRS::OH7LZB   :reply{MM}BB").messages.first)
    #expect(first.incoming.msgno == "MM}AA")
    #expect(first.ack.map { text($0.line) } == "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ackMM}AA\r\n")
    #expect(retry.ack.map { text($0.line) } == "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ackMM}BB\r\n")
    #expect(first.incoming.dedupKey == retry.incoming.dedupKey)
    #expect(first.ack?.key == retry.ack?.key)
  }

  @Test func thirdPartyMessagesAreUnwrapped() throws {
    let routed = route("IGATE-1>APRS,TCPIP*,qAC,T2TEST:}KJ7XYZ-9>APDR16,TCPIP,IGATE-1*::KJ7ABC-7 :via rf{12")
    let message = try #require(routed.messages.first)
    #expect(message.incoming.station == "KJ7ABC-7")
    #expect(message.incoming.peer == "KJ7XYZ-9")
    #expect(message.ack.map { text($0.line) } == "KJ7ABC-7>APZACL,TCPIP*::KJ7XYZ-9 :ack12\r\n")
  }

  @Test func acksAndRejsToAStationAreReceiptsNeverMessages() throws {
    let ack = route("OH7AA-1>APRS::OH7LZB   :ack5")
    #expect(ack.messages.isEmpty)
    let receipt = try #require(ack.receipt)
    #expect(
      receipt == DeliveryReceipt(station: "OH7LZB", peer: "OH7AA-1", msgno: "5", kind: .ack, replyAck: nil))
    let rej = try #require(route("OH7AA-1>APRS::OH7LZB   :rejAB}CD").receipt)
    #expect(rej.kind == .rej && rej.msgno == "AB" && rej.replyAck == "CD")
    let wrapped = try #require(route("A-1>APRS,B-2,WIDE1*:}C>APU25N,TCPIP,A-1*::KJ7ABC-7 :ack56").receipt)
    #expect(wrapped.peer == "C" && wrapped.station == "KJ7ABC-7" && wrapped.msgno == "56")
    #expect(route("OH7AA-1>APRS::SOMEONE  :ack5").skip == .notForUs)
  }

  @Test func thingsThatAreNeverStored() {
    #expect(route("OH7AA-1>APRS::BLN1     :bulletin{1").skip == .bulletin)
    #expect(route("OH7AA-1>APRS::BLNA     :announcement").skip == .bulletin)
    #expect(route("OH7AA-1>APRS::NWS-WARN :weather{1").skip == .weather)
    #expect(route("OH7LZB>APRS::OH7LZB   :PARM.Volts,Temp").skip == .telemetry)
    #expect(route("OH7AA-1>APRS::OH7LZB   :?APRSP").skip == .query)
    #expect(route("OH7LZB>APRS::oh7lzb   :note to self{3").skip == .toSelf)
    #expect(route("OH7AA-1>APRS,TCPIP*:!6028.51N/02505.68E#PHG7220").skip == .notMessage)
    #expect(route("OH7AA-1>APRS::OH7LZB   :").skip == .notMessage)
    #expect(route("# aprsc 2.1.21").skip == .comment)
    #expect(route("this is not APRS").skip == .invalid)
    #expect(route(String(repeating: "X", count: 600)).skip == .invalid)
    #expect(router.route([0x00, 0xFF, 0x80, 0x3E], stations: stations, canTransmit: true).skip == .invalid)
  }

  @Test func sameBaseCallOtherSSIDIsANormalMessage() {
    let routed = route("KJ7ABC>APRS::KJ7ABC-7 :from my other radio{9")
    #expect(routed.messages.count == 1)
    #expect(routed.messages.first?.ack != nil)
  }

  @Test func outgoingTrackingStoresSentCopiesWithTheirOwnKey() throws {
    let tracking = LineRouter(trackOutgoing: true)
    let sent = route("OH7LZB>APRS::W1AW     :going out{4", router: tracking)
    let copy = try #require(sent.messages.first)
    #expect(sent.messages.count == 1)
    #expect(
      copy.incoming.station == "OH7LZB" && copy.incoming.direction == .sent && copy.incoming.peer == "W1AW")
    #expect(copy.ack == nil)
    #expect(copy.incoming.dedupKey.hasPrefix(LineRouter.sentKeyPrefix))
    // Between two served stations: a received copy for one and a sent copy for the other.
    let both = route("OH7LZB>APRS::KJ7ABC-7 :hello{5", router: tracking)
    #expect(both.messages.map(\.incoming.direction) == [.received, .sent])
    #expect(Set(both.messages.map(\.incoming.dedupKey)).count == 2)
    // Without tracking the sent side is nothing.
    #expect(route("OH7LZB>APRS::W1AW     :going out{4").skip == .notForUs)
  }
}
