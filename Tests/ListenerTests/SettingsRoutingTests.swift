import APRS
import Logging
import Testing

@testable import Listener
@testable import Store

/// The addressees' settings in the writer: blocked senders (a bare call blocks every SSID) never stored, ACKed or
/// pushed and counted; the ACK policy deciding what goes out at once; `device` ACKs kept for the pull, sent for
/// later copies once pulled.
@Suite struct SettingsRoutingTests {
  static let t0: Int64 = 1_800_000_000_000

  private func planned(_ line: String, canTransmit: Bool = true) -> [PlannedMessage] {
    let stations = LiveStationSet([
      LiveStation(address: "OH7LZB", ackMessages: true), LiveStation(address: "N0CALL-7", ackMessages: true),
    ])
    return LineRouter(trackOutgoing: true).route(bytes(line), stations: stations, canTransmit: canTransmit)
      .messages
  }

  // MARK: The pure step

  @Test func blockedSendersAreDroppedBeforeAnythingIsStored() throws {
    let settings: [String: StationSettings] = [
      "OH7LZB": StationSettings(
        blocked: try CallList(validating: ["KJ7ABC", "OH7AA-1"], field: "blocked"), ackPolicy: .server),
      "N0CALL-7": StationSettings(ackPolicy: .server),
    ]
    var all: [PlannedMessage] = []
    for line in [
      "KJ7ABC-7>APRS::OH7LZB   :bare call, any SSID{1", "KJ7ABC>APRS::OH7LZB   :the bare call itself{2",
      "OH7AA-1>APRS::OH7LZB   :that SSID{3", "OH7AA-2>APRS::OH7LZB   :another SSID{4",
      "KJ7ABC-7>APRS::N0CALL-7 :not blocked there{5",
      // A served station's own message (outgoing tracking) to someone it blocks is kept as sent.
      "OH7LZB>APRS::KJ7ABC-7 :my own{6",
    ] {
      all += planned(line)
    }
    let settled = LineRouter.settle(all, settings: settings, canTransmit: true)
    #expect(settled.blocked == 3)
    #expect(settled.messages.map(\.incoming.msgno) == ["4", "5", "6"])
    #expect(settled.messages.map { $0.ack != nil } == [true, true, false])
    #expect(settled.messages.allSatisfy { $0.deviceAck == nil })
  }

  @Test func theAckPolicyDecidesWhatIsSentNowAndWhatWaitsForThePull() throws {
    let line = "OH7AA-1>APRS::OH7LZB   :hello{42"
    let ackLine = "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack42\r\n"
    func settle(_ policy: AckPolicy, canTransmit: Bool = true) -> SettledMessage? {
      LineRouter.settle(
        planned(line, canTransmit: canTransmit), settings: ["OH7LZB": StationSettings(ackPolicy: policy)],
        canTransmit: canTransmit
      ).messages.first
    }
    #expect(settle(.server)?.ack.map { text($0.line) } == ackLine)
    #expect(settle(.server)?.deviceAck == nil)
    #expect(settle(.server, canTransmit: false)?.ack == nil)
    #expect(settle(.device)?.ack == nil)
    #expect(settle(.device)?.deviceAck.map { text($0.line) } == ackLine)
    // The pull may come once the connection can transmit: the ACK is kept either way.
    #expect(settle(.device, canTransmit: false)?.deviceAck.map { text($0.line) } == ackLine)
    #expect(settle(.never)?.ack == nil && settle(.never)?.deviceAck == nil)
    // An unnumbered message earns nothing; a station without settings (gone at the commit) gets no ACK.
    let unnumbered = LineRouter.settle(
      planned("OH7AA-1>APRS::OH7LZB   :no number"), settings: ["OH7LZB": StationSettings(ackPolicy: .device)],
      canTransmit: true)
    #expect(unnumbered.messages.first?.deviceAck == nil)
    let gone = LineRouter.settle(planned(line), settings: [:], canTransmit: true)
    #expect(gone.messages.count == 1 && gone.messages.first?.ack == nil && gone.blocked == 0)
  }

  /// A claim governs only the devices it brought or adopted (docs/design.md "Who may do what"): while the station
  /// has keyless devices from before its claim, a blocked sender's message is kept for them, and the server ACKs
  /// as they asked (`ackMessages:true`) whatever the owner's policy; a subscription entry still follows the owner.
  @Test func earlierKeylessDevicesGetWhatTheyWouldWithoutTheClaim() throws {
    let blocked = try CallList(validating: ["KJ7ABC"], field: "blocked")
    let settings = ["OH7LZB": StationSettings(blocked: blocked, ackPolicy: .never)]
    let lines = planned("KJ7ABC-7>APRS::OH7LZB   :blocked{1") + planned("OH7AA-1>APRS::OH7LZB   :welcome{2")
    func settle(_ reach: ClaimReach?) -> SettledBatch {
      LineRouter.settle(
        lines, settings: settings, reaches: reach.map { ["OH7LZB": $0] } ?? [:], canTransmit: true)
    }
    // No earlier device: the owner's settings hold.
    let owned = settle(ClaimReach(claimedAt: Self.t0))
    #expect(owned.blocked == 1 && owned.messages.map(\.incoming.msgno) == ["2"])
    #expect(owned.messages.allSatisfy { $0.ack == nil })
    #expect(settle(nil).blocked == 1)
    // An earlier device that asked for no ACKs: the blocked sender's message is stored, nothing is ACKed.
    let quiet = settle(ClaimReach(claimedAt: Self.t0, earlierDevices: 1))
    #expect(quiet.blocked == 0 && quiet.messages.map(\.incoming.msgno) == ["1", "2"])
    #expect(quiet.messages.allSatisfy { $0.ack == nil && $0.deviceAck == nil })
    // One that asked for ACKs: both are ACKed, as its register would have set without the claim.
    let acked = settle(ClaimReach(claimedAt: Self.t0, earlierDevices: 1, earlierWantAcks: true))
    #expect(
      acked.messages.map { $0.ack.map { text($0.line) } } == [
        "OH7LZB>APZACL,TCPIP*::KJ7ABC-7 :ack1\r\n", "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack2\r\n",
      ])
  }

  @Test func theWriterKeepsABlockedSendersMessageForTheEarlierKeylessPhoneAndAcksAsItAsked() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    let upsert = StationUpsert(
      address: "OH7LZB", base: "OH7LZB", ssid: 0, platform: .android, pushToken: "earlier-phone",
      ackMessages: true, isRegistration: true)
    _ = try test.database.upsertStation(upsert, now: 1_000)
    _ = try test.database.claimStation(
      "OH7LZB", keyHash: String(repeating: "b", count: 64), client: "192.0.2.1", now: 2_000)
    try test.database.updateStationSettings(
      "OH7LZB",
      StationSettingsUpdate(
        blocked: try CallList(validating: ["KJ7ABC"], field: "blocked"), ackPolicy: .never),
      now: 3_000)
    #expect(
      try test.database.claimReach("OH7LZB")
        == ClaimReach(
          claimedAt: 2_000, earlierDevices: 1, earlierWantAcks: true))
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let result = try writer.process(
      [bytes("KJ7ABC-7>APRS::OH7LZB   :blocked{1"), bytes("OH7AA-1>APRS::OH7LZB   :welcome{2")],
      stations: try test.stations(), canTransmit: true, now: Self.t0)
    #expect(result.blocked == 0 && result.stored == 2)
    #expect(result.acks.count == 2)
    // The earlier phone, keyed by a proof, is the owner's: the owner's settings hold again.
    try test.database.execute("UPDATE devices SET keyed = 1 WHERE token = 'earlier-phone'")
    #expect(try test.database.claimReach("OH7LZB")?.earlierDevices == 0)
    let after = try writer.process(
      [bytes("KJ7ABC-7>APRS::OH7LZB   :blocked again{3")], stations: try test.stations(), canTransmit: true,
      now: Self.t0 + 1_000)
    #expect(after.blocked == 1 && after.stored == 0 && after.acks.isEmpty)
  }

  // MARK: The writer

  @Test func theWriterDropsBlockedSendersAndCountsThem() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB", ackMessages: true)
    try test.database.updateStationSettings(
      "OH7LZB", StationSettingsUpdate(blocked: try CallList(validating: ["KJ7ABC"], field: "blocked")),
      now: Self.t0)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let before = test.database.transactionCounts
    let result = try writer.process(
      [
        bytes("KJ7ABC-7>APRS::OH7LZB   :blocked{1"), bytes("KJ7ABC>APRS::OH7LZB   :blocked too{2"),
        bytes("OH7AA-1>APRS::OH7LZB   :welcome{3"),
      ],
      stations: try test.stations(), canTransmit: true, now: Self.t0)
    #expect(result.blocked == 2 && result.stored == 1)
    #expect(result.acks.map(text) == ["OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack3\r\n"])
    #expect(test.database.transactionCounts.writes == before.writes + 1)
    #expect(
      try test.database.sync(station: "OH7LZB", since: 0, now: Self.t0).messages.map(\.peer) == ["OH7AA-1"])
    #expect(try test.database.dueOutbox(now: Self.t0).count == 1)
    #expect(try test.database.scalarText("SELECT count(*) FROM dedup") == "1")
  }

  @Test func aDeviceStationsMessagesAreAckedOnlyOncePulledAndCopiesAfterThePull() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB", ackMessages: true)
    try test.database.updateStationSettings("OH7LZB", StationSettingsUpdate(ackPolicy: .device), now: Self.t0)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let stations = try test.stations()
    let line = bytes("OH7AA-1>APRS::OH7LZB   :hello{42")
    let ackLine = "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack42\r\n"
    let first = try writer.process([line], stations: stations, canTransmit: true, now: Self.t0)
    #expect(first.stored == 1 && first.acks.isEmpty)
    // A copy before the pull: still no ACK.
    let early = try writer.process([line], stations: stations, canTransmit: true, now: Self.t0 + 40_000)
    #expect(early.duplicates == 1 && early.acks.isEmpty)
    #expect(
      try test.database.takePulledDeviceAcks(now: Self.t0 + 41_000, minIntervalMs: 30_000).lines.isEmpty)

    // The phone syncs: the listener's worker takes the ACK.
    _ = try test.database.sync(station: "OH7LZB", since: 0, now: Self.t0 + 60_000)
    let worker = DeviceAckWorker(
      database: test.database, pollMs: 100, ackIntervalMs: 30_000, counters: ListenerCounters(),
      logger: .init(level: .error), clock: { Self.t0 + 61_000 })
    #expect(try worker.check(canTransmit: false).isEmpty, "ACKs wait while they cannot be sent")
    #expect(try worker.check(canTransmit: true).map(text) == [ackLine])
    #expect(try worker.check(canTransmit: true).isEmpty)

    // A copy 10 s later falls under the 30 s rule; one after it is ACKed again.
    let soon = try writer.process([line], stations: stations, canTransmit: true, now: Self.t0 + 71_000)
    #expect(soon.acks.isEmpty && soon.acksSuppressed == 1)
    let later = try writer.process([line], stations: stations, canTransmit: true, now: Self.t0 + 92_000)
    #expect(later.acks.map(text) == [ackLine])
    let unverified = try writer.process(
      [line], stations: stations, canTransmit: false, now: Self.t0 + 200_000)
    #expect(unverified.acks.isEmpty && unverified.acksSuppressed == 0)
  }

  @Test func neverMeansNoAckAndNoKeptAck() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    try test.register("OH7LZB", ackMessages: false)
    let writer = MessageWriter(database: test.database, router: LineRouter())
    let result = try writer.process(
      [bytes("OH7AA-1>APRS::OH7LZB   :hello{42")], stations: try test.stations(), canTransmit: true,
      now: Self.t0)
    #expect(result.stored == 1 && result.acks.isEmpty)
    _ = try test.database.sync(station: "OH7LZB", since: 0, now: Self.t0 + 1)
    #expect(try test.database.scalarText("SELECT count(*) FROM device_acks") == "0")
  }
}
