import APRS
import Testing

/// The unnumbered line of a bulletin or announcement and the addressees it may go to (`OutgoingMessage`).
@Suite struct OutgoingBulletinTests {
  @Test func theUnnumberedLinePadsTheAddresseeAndCarriesNoNumber() {
    #expect(
      OutgoingMessage.unnumberedLine(from: "OH7LZB-9", to: "BLN3WX", text: "Net tonight")
        == Array("OH7LZB-9>APRS,TCPIP*::BLN3WX   :Net tonight\r\n".utf8))
    #expect(
      OutgoingMessage.unnumberedLine(from: "OH7LZB-9", to: "BLNAEVT12", text: "x")
        == Array("OH7LZB-9>APRS,TCPIP*::BLNAEVT12:x\r\n".utf8))
    // Nothing can start a second line or a number.
    let line = OutgoingMessage.unnumberedLine(from: "OH7 LZB\r\n", to: "BLN1\n", text: "a\r\nb")
    #expect(line == Array("OH7LZB>APRS,TCPIP*::BLN1     :ab\r\n".utf8))
    #expect(!line.contains(UInt8(ascii: "{")))
  }

  @Test func theLineIsReadBackAsTheBulletinItIs() throws {
    let line = OutgoingMessage.unnumberedLine(from: "OH7LZB-9", to: "BLN3WX", text: "Net tonight")
    guard case .success(.packet(let packet)) = TNC2Packet.parse(Array(line.dropLast(2))),
      case .addressed(let read) = AddressedPacket.classify(packet)
    else {
      Issue.record("not read back")
      return
    }
    #expect(read.kind == .bulletin && read.text == "Net tonight" && read.msgno == nil)
  }

  @Test(arguments: ["BLN0", "BLN9", "BLN3WX", "bln3wx", "BLNQ", "BLNAEVT", "BLNZ12345"])
  func bulletinAndAnnouncementAddressesAreTaken(addressee: String) {
    #expect(OutgoingMessage.bulletinAddresseeProblem(addressee) == nil)
  }

  @Test(arguments: ["BLN", "BLN12345678", "BLNAB CD", "BLN-1", "BLN1-1", "BLN_", "BL1", "KJ7ABC", "NWS1", ""])
  func otherAddressesAreRefusedNamingThem(addressee: String) {
    let problem = OutgoingMessage.bulletinAddresseeProblem(addressee)
    #expect(problem?.hasPrefix(addressee) == true, "\(problem ?? "nil")")
  }

  @Test func aMessageToABulletinAddressIsStillRefused() {
    #expect(OutgoingMessage.addresseeProblem("BLN3WX")?.contains("bulletin") == true)
    #expect(OutgoingMessage.addresseeProblem("NWS")?.contains("weather") == true)
  }
}
