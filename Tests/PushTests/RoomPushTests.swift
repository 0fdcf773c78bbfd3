import APRS
import Testing

@testable import Push
@testable import Store

/// A room's digest push (docs/protocol.md "Room pushes"): its data names the room and how many entries it
/// announces, its banner the count and the last sender, and it collapses per room.
@Suite struct RoomPushTests {
  static let hotg = NetRoom(service: .ansrvr, group: "HOTG")

  private func content(roomCount: Int?) -> PushContent {
    var content = PushContent(
      station: "N0CALL-7", fromCall: "KC8OWL", seqId: "12", text: "Happy APRSThursday!", count: 30,
      entry: .room(Self.hotg, subscription: "s1"), priority: .low)
    content.roomCount = roomCount
    return content
  }

  @Test func theDataNameTheRoomAndTheCount() {
    let data = PushPayload.data(content(roomCount: 12))
    #expect(data.map(\.key) == ["type", "subscription", "room", "roomCount", "fromCall", "to", "count"])
    #expect(data.first { $0.key == "type" }?.value == "net")
    #expect(data.first { $0.key == "room" }?.value == "ANSRVR/HOTG")
    #expect(data.first { $0.key == "roomCount" }?.value == "12")
  }

  @Test func theBannerSaysHowManyAndWhoWasLast() {
    #expect(
      NotificationText.make(content(roomCount: 12), preview: true)
        == NotificationText(title: "HOTG net: 12 new", body: "Last from KC8OWL"))
    #expect(
      NotificationText.make(content(roomCount: 1), preview: true)
        == NotificationText(title: "HOTG net: KC8OWL", body: "Happy APRSThursday!"))
    #expect(
      NotificationText.make(content(roomCount: 1), preview: false)
        == NotificationText(title: "HOTG net: KC8OWL", body: "New net message"))
  }

  @Test func itCollapsesPerRoomApartFromOtherEntries() {
    #expect(content(roomCount: 3).collapseName == "N0CALL-7-net-HOTG")
    var bulletin = content(roomCount: nil)
    bulletin.entry = SubscriptionEntry(kind: .bulletin, subscription: "s2")
    #expect(bulletin.collapseName == "N0CALL-7-subs")
  }
}
