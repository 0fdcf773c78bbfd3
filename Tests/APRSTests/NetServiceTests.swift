import Testing

@testable import APRS

/// The net services' command texts and rules, and their fan-out and answers recognised, as CQSRVR's own page
/// shows them (its TNC-2 examples) and the nets' instructions give ANSRVR's.
@Suite struct NetServiceTests {
  private func packet(_ line: String) throws -> TNC2Packet {
    guard case .success(.packet(let packet)) = TNC2Packet.parse(Array(line.utf8)) else {
      throw NetTestError(line)
    }
    return packet
  }

  struct NetTestError: Error {
    let line: String
    init(_ line: String) { self.line = line }
  }

  @Test func commandsAreTheServicesOwnForms() {
    #expect(
      NetService.cqsrvr.postText(group: "mytest", text: "Listening for APRS contacts")
        == "CQ MYTEST Listening for APRS contacts")
    #expect(NetService.ansrvr.postText(group: "HOTG", text: "Hello from OH7") == "CQ HOTG Hello from OH7")
    #expect(NetService.cqsrvr.leaveText(group: "MyTest") == "U MYTEST")
    #expect(NetService.ansrvr.leaveText(group: "HOTG") == "U HOTG")
    // One word of letters and digits, at most 9; the whole within 67 characters; some text.
    #expect(NetService.cqsrvr.postText(group: "MY TEST", text: "x") == nil)
    #expect(NetService.cqsrvr.postText(group: "", text: "x") == nil)
    #expect(NetService.cqsrvr.postText(group: "TOOLONGGRP", text: "x") == nil)
    #expect(NetService.cqsrvr.postText(group: "HOTG", text: "") == nil)
    #expect(NetService.cqsrvr.postText(group: "HOTG", text: String(repeating: "x", count: 59)) != nil)
    #expect(NetService.cqsrvr.postText(group: "HOTG", text: String(repeating: "x", count: 60)) == nil)
    #expect(NetService.cqsrvr.leaveText(group: "bad/") == nil)
  }

  @Test func rulesAreThoseTheServicesDocument() {
    #expect(NetService.cqsrvr.postIntervalMs == 1_800_000)
    #expect(NetService.ansrvr.postIntervalMs == nil)
    #expect(NetService.ansrvr.membershipMs == 43_200_000)
    #expect(NetService.cqsrvr.membershipMs == nil)
    #expect(NetService(call: "cqsrvr") == .cqsrvr && NetService(call: "ANSRVR-0") == .ansrvr)
    #expect(NetService(call: "ANSRVR-1") == nil && NetService(call: "APRSPH") == nil)
  }

  @Test func cqsrvrsFanOutIsAPostFromTheOriginalSender() throws {
    let copy = try packet("AE5PL-10>APJIC1,qAO,CQSRVR::W5EJL-1  :CQ MYTEST Listening for APRS contacts")
    #expect(
      NetFanOut(copy)
        == NetFanOut(
          service: .cqsrvr, group: "MYTEST", peer: "AE5PL-10", text: "Listening for APRS contacts",
          kind: .post))
    #expect(NetFanOut(copy)?.room.description == "CQSRVR/MYTEST")
    // A lower-case group is the same room.
    #expect(
      NetFanOut(try packet("AE5PL-10>APJIC1,qAO,CQSRVR::W5EJL-1  :cq mytest hi"))?.group == "MYTEST")
  }

  @Test func theServicesAnswersNameTheirRoom() throws {
    let sent = try packet("CQSRVR>APJIC1,TCPIP*::AE5PL-10 :Message has been sent to MYTEST{00")
    #expect(NetFanOut(sent)?.kind == .answer && NetFanOut(sent)?.room.description == "CQSRVR/MYTEST")
    #expect(NetFanOut(sent)?.text == "Message has been sent to MYTEST")
    let removed = try packet("CQSRVR>APJIC1,TCPIP*::AE5PL-10 :Removed from MYTEST{01")
    #expect(NetFanOut(removed)?.kind == .answer && NetFanOut(removed)?.group == "MYTEST")
    // The service's ACK is no answer of the room.
    #expect(NetFanOut(try packet("CQSRVR>APJIC1,TCPIP*::AE5PL-10 :ack01")) == nil)
    #expect(NetFanOut(try packet("CQSRVR>APJIC1,TCPIP*::AE5PL-10 :Something else{02")) == nil)
  }

  @Test func anythingElseIsNoFanOut() throws {
    // A direct message, a numbered copy, a copy without the service in its path, a text without CQ GROUP TEXT.
    #expect(NetFanOut(try packet("AE5PL-10>APJIC1,TCPIP*,qAC,T2::W5EJL-1  :CQ MYTEST hello")) == nil)
    #expect(NetFanOut(try packet("AE5PL-10>APJIC1,qAO,CQSRVR::W5EJL-1  :CQ MYTEST hello{12")) == nil)
    #expect(NetFanOut(try packet("AE5PL-10>APJIC1,qAO,OTHER::W5EJL-1  :CQ MYTEST hello")) == nil)
    #expect(NetFanOut(try packet("AE5PL-10>APJIC1,qAO,CQSRVR::W5EJL-1  :CQ MYTEST")) == nil)
    #expect(NetFanOut(try packet("AE5PL-10>APJIC1,qAO,CQSRVR::W5EJL-1  :hello there all")) == nil)
    #expect(NetFanOut(try packet("AE5PL-10>APJIC1,qAO,CQSRVR:!4903.50N/07201.75W-")) == nil)
  }
}
