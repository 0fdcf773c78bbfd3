import APRS
import Testing

@testable import Listener
@testable import Store

/// The all-SSID inbox in routing (settings `ssids`, `ackSsids`): messages to other chosen SSIDs of a served
/// station's call are stored for it with `to`; an exact station registered here keeps its own copy and ACK
/// (never a second ACK); other SSIDs are ACKed only for `ackSsids`, from the addressee as named; blocked senders
/// and the ACK policy apply; nothing changes for stations that keep the default.
@Suite struct AllSSIDRoutingTests {
  static let t0: Int64 = 1_800_000_000_000

  private func stations(
    _ addresses: [String] = ["N0CALL-7"], collecting: [OtherSSIDStation]
  ) -> LiveStationSet {
    LiveStationSet(addresses.map { LiveStation(address: $0, ackMessages: true) }, collecting: collecting)
  }

  private func all(_ address: String = "N0CALL-7", acks: [Int] = []) -> OtherSSIDStation {
    let own = SSIDCoverage.split(address).ssid ?? 0
    return OtherSSIDStation(
      address: address, ssids: SSIDSelection.all.others(own: own), ackSsids: SSIDSet(acks))
  }

  private func route(_ line: String, _ stations: LiveStationSet, canTransmit: Bool = true) -> RoutedLine {
    LineRouter().route(bytes(line), stations: stations, canTransmit: canTransmit)
  }

  // MARK: The pure router

  @Test func aMessageToAnotherSSIDIsCollectedWithToAndNoAckByDefault() {
    let routed = route("OH7AA-1>APRS::N0CALL-9 :hello nine{42", stations(collecting: [all()]))
    #expect(routed.skip == nil)
    #expect(routed.messages.count == 1)
    let message = routed.messages[0]
    #expect(message.incoming.station == "N0CALL-7" && message.incoming.to == "N0CALL-9")
    #expect(message.incoming.peer == "OH7AA-1" && message.incoming.text == "hello nine")
    #expect(message.incoming.msgno == "42")
    #expect(message.ack == nil && message.earnedAck == nil, "ackSsids is empty")
    #expect(message.incoming.dedupKey.hasPrefix(LineRouter.collectedKeyPrefix))
  }

  @Test func anSSIDInAckSsidsEarnsAnAckFromTheAddresseeAsNamed() {
    let routed = route("OH7AA-1>APRS::n0call-9 :hello{42", stations(collecting: [all(acks: [9])]))
    #expect(
      routed.messages.map(\.ack).map { $0.map { text($0.line) } } == [
        "n0call-9>APZACL,TCPIP*::OH7AA-1  :ack42\r\n"
      ])
    #expect(routed.messages.first?.incoming.to == "N0CALL-9")
    // Only when the connection may transmit; the earned ACK stays for ackPolicy device.
    let quiet = route(
      "OH7AA-1>APRS::N0CALL-9 :hello{42", stations(collecting: [all(acks: [9])]), canTransmit: false)
    #expect(quiet.messages.first?.ack == nil && quiet.messages.first?.earnedAck != nil)
  }

  @Test func zeroIsTheBareCallAndTheAckGoesOutAsTheMessageNamedIt() {
    let collecting = [OtherSSIDStation(address: "N0CALL-7", ssids: SSIDSet([0]), ackSsids: SSIDSet([0]))]
    for addressee in ["N0CALL-0 ", "N0CALL   ", "n0call   "] {
      let routed = route("OH7AA-1>APRS::\(addressee):reply{7", stations(collecting: collecting))
      #expect(routed.messages.count == 1, "\(addressee)")
      #expect(routed.messages.first?.incoming.to == "N0CALL")
      let source = String(addressee.filter { $0 != " " })
      #expect(
        routed.messages.first?.ack.map { text($0.line) }
          == "\(source)>APZACL,TCPIP*::OH7AA-1  :ack7\r\n")
    }
  }

  @Test func aListCollectsOnlyItsSSIDsAndTheDefaultCollectsNothing() {
    let list = [OtherSSIDStation(address: "N0CALL-7", ssids: SSIDSet([0, 9]), ackSsids: .empty)]
    #expect(route("OH7AA-1>APRS::N0CALL-9 :in{1", stations(collecting: list)).messages.count == 1)
    #expect(route("OH7AA-1>APRS::N0CALL-5 :out{2", stations(collecting: list)).skip == .notForUs)
    #expect(route("OH7AA-1>APRS::N0CALL-9 :exact{3", stations(collecting: [])).skip == .notForUs)
    // Another call that merely starts the same is not collected.
    #expect(route("OH7AA-1>APRS::N0CALLX-9:other{4", stations(collecting: [all()])).skip == .notForUs)
    // The station's own address is routed as always: one copy, no `to`.
    let own = route("OH7AA-1>APRS::N0CALL-7 :mine{5", stations(collecting: [all(acks: [7])]))
    #expect(own.messages.count == 1 && own.messages[0].incoming.to == nil)
  }

  @Test func anExactStationRegisteredHereKeepsItsCopyAndTheOnlyAck() {
    let routed = route(
      "OH7AA-1>APRS::N0CALL-9 :both{9", stations(["N0CALL-7", "N0CALL-9"], collecting: [all(acks: [9])]))
    #expect(routed.messages.map(\.incoming.station) == ["N0CALL-9", "N0CALL-7"])
    #expect(routed.messages.map(\.incoming.to) == [nil, "N0CALL-9"])
    #expect(routed.messages[0].ack != nil)
    #expect(routed.messages[1].ack == nil && routed.messages[1].earnedAck == nil, "never a second ACK")
  }

  @Test func twoStationsCollectingOneSSIDGetACopyEachAndOneAck() {
    let routed = route(
      "OH7AA-1>APRS::N0CALL-9 :two collectors{6",
      stations(
        ["N0CALL-5", "N0CALL-7"], collecting: [all("N0CALL-7", acks: [9]), all("N0CALL-5", acks: [9])]))
    #expect(routed.messages.map(\.incoming.station) == ["N0CALL-5", "N0CALL-7"])
    #expect(routed.messages.map { $0.earnedAck != nil } == [true, false])
  }

  @Test func theStationsOwnMessageToAnotherSSIDIsNotCollected() {
    let routed = route("N0CALL-7>APRS::N0CALL-9 :note to self{3", stations(collecting: [all()]))
    #expect(routed.messages.isEmpty && routed.skip == .notForUs)
  }

  // MARK: Settling with the settings of the commit

  @Test func settingsDecideBlockedSendersAcksAndStaleChoices() throws {
    let planned = route("OH7AA-1>APRS::N0CALL-9 :hi{5", stations(collecting: [all(acks: [9])])).messages
    func settle(_ settings: StationSettings) -> SettledBatch {
      LineRouter.settle(planned, settings: ["N0CALL-7": settings], canTransmit: true)
    }
    let allNine = StationSettings(ackPolicy: .server, ssids: .all, ackSsids: SSIDSet([9]))
    #expect(settle(allNine).messages.first?.ack != nil)
    var blocked = allNine
    blocked.blocked = try CallList(validating: ["OH7AA"], field: "blocked")
    #expect(settle(blocked).messages.isEmpty && settle(blocked).blocked == 1)
    var never = allNine
    never.ackPolicy = .never
    #expect(settle(never).messages.first.map { $0.ack == nil && $0.deviceAck == nil } == true)
    var device = allNine
    device.ackPolicy = .device
    #expect(settle(device).messages.first.map { $0.ack == nil && $0.deviceAck != nil } == true)
    var notAcked = allNine
    notAcked.ackSsids = SSIDSet([5])
    #expect(settle(notAcked).messages.first.map { $0.ack == nil && $0.deviceAck == nil } == true)
    // Chosen again as exact (the registry not caught up yet): the copy is not stored.
    #expect(settle(StationSettings(ackPolicy: .server)).messages.isEmpty)
    #expect(settle(StationSettings(ackPolicy: .server, ssids: .list(SSIDSet([7, 9])))).messages.count == 1)
  }

  // MARK: The writer and the store

  @Test func theWriterStoresCollectedEntriesApartAndAcksByAckSsids() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("N0CALL-7", ackMessages: true)
    try test.database.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(ssids: .all, ackSsids: SSIDSet([9])), now: Self.t0)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let result = try writer.process(
      [
        bytes("OH7AA-1>APRS::N0CALL-9 :to nine{1"), bytes("OH7AA-1>APRS::N0CALL-3 :to three{2"),
        bytes("OH7AA-1>APRS::N0CALL-7 :to me{3"),
      ],
      stations: try test.stations(), canTransmit: true, now: Self.t0)
    #expect(result.stored == 3)
    // N0CALL-9 is no station of the owner here: never an ACK in its name (it may be someone's radio on air).
    #expect(result.acks.map(text) == ["N0CALL-7>APZACL,TCPIP*::OH7AA-1  :ack3\r\n"])
    let old = try test.database.sync(station: "N0CALL-7", since: 0, now: Self.t0 + 1)
    #expect(old.messages.map(\.text) == ["to me"])
    #expect(old.messages.allSatisfy { $0.to == nil })
    let opted = try test.database.sync(station: "N0CALL-7", since: 0, now: Self.t0 + 1, wants: .ssids)
    #expect(opted.messages.map(\.text) == ["to nine", "to three", "to me"])
    #expect(opted.messages.map(\.to) == ["N0CALL-9", "N0CALL-3", nil])
    // A copy is a duplicate, ACKed again after the 30 s rule.
    let copy = try writer.process(
      [bytes("OH7AA-1>APRS::N0CALL-9 :to nine{1")], stations: try test.stations(), canTransmit: true,
      now: Self.t0 + 31_000)
    #expect(copy.duplicates == 1 && copy.acks.isEmpty)
  }

  @Test func anExactStationHereIsStoredAsTodayAndAckedOnceByItsOwnPolicy() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("N0CALL-7", ackMessages: true)
    try test.register("N0CALL-9", ackMessages: false)
    try test.database.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(ssids: .all, ackSsids: SSIDSet([9])), now: Self.t0)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let result = try writer.process(
      [bytes("OH7AA-1>APRS::N0CALL-9 :for nine{4")], stations: try test.stations(), canTransmit: true,
      now: Self.t0)
    #expect(result.stored == 2)
    #expect(result.acks.isEmpty, "N0CALL-9's own policy is never; N0CALL-7's ackSsids does not apply")
    #expect(
      try test.database.sync(station: "N0CALL-9", since: 0, now: Self.t0 + 1).messages.map(\.to) == [nil])
    #expect(
      try test.database.sync(station: "N0CALL-7", since: 0, now: Self.t0 + 1, wants: .ssids).messages.map(
        \.to) == ["N0CALL-9"])
  }
}

extension AllSSIDRoutingTests {
  /// `ackPolicy:"device"` with `ackSsids`: a collected entry's ACK waits for a pull by a client that asked for
  /// other SSIDs; the shipping app's sync never returns it, so it never earns it.
  @Test func aDevicePolicyAcksACollectedEntryOnlyOnceAnOptedInClientPulledIt() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("N0CALL-7", ackMessages: true)
    try test.database.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(ackPolicy: .device, ssids: .all, ackSsids: SSIDSet([9])), now: Self.t0
    )
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let stored = try writer.process(
      [bytes("OH7AA-1>APRS::N0CALL-9 :pull me{8")], stations: try test.stations(), canTransmit: true,
      now: Self.t0)
    #expect(stored.stored == 1 && stored.acks.isEmpty)
    _ = try test.database.sync(station: "N0CALL-7", since: 0, now: Self.t0 + 1_000)
    #expect(try test.database.takePulledDeviceAcks(now: Self.t0 + 2_000, minIntervalMs: 30_000).lines.isEmpty)
    _ = try test.database.sync(station: "N0CALL-7", since: 0, now: Self.t0 + 3_000, wants: .ssids)
    // Nor once an opted-in client pulled it: N0CALL-9 is no station of the owner here.
    #expect(try test.database.takePulledDeviceAcks(now: Self.t0 + 4_000, minIntervalMs: 30_000).lines.isEmpty)
  }
}

extension AllSSIDRoutingTests {
  /// A reply-ack (`{MM}AA`) in a message to another SSID acknowledges that SSID's message `AA`, never one of the
  /// collecting station's own sends.
  @Test func aReplyAckToAnotherSSIDDoesNotAnswerTheStationsOwnSend() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("N0CALL-7", ackMessages: true)
    try test.database.updateStationSettings("N0CALL-7", StationSettingsUpdate(ssids: .all), now: Self.t0)
    guard
      case .created(let sent, _) = try test.database.createSend(
        NewSend(station: "N0CALL-7", addressee: "OH7AA-1", text: "are you there", clientId: nil),
        limits: SendLimits(),
        now: Self.t0)
    else {
      Issue.record("not created")
      return
    }
    let msgno = try #require(sent.msgno)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let other = try writer.process(
      [bytes("OH7AA-1>APRS::N0CALL-9 :yes nine{5}\(msgno)")], stations: try test.stations(),
      canTransmit: true,
      now: Self.t0 + 1_000)
    #expect(other.stored == 1 && other.sendsAnswered.isEmpty)
    let own = try writer.process(
      [bytes("OH7AA-1>APRS::N0CALL-7 :yes seven{6}\(msgno)")], stations: try test.stations(),
      canTransmit: true, now: Self.t0 + 2_000)
    #expect(own.sendsAnswered.map(\.station) == ["N0CALL-7"])
  }
}
