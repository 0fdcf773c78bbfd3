import Testing

@testable import APRS

/// `CALL-0` is the bare call: in classification, dedup keys and filter entries.
@Suite struct ZeroSSIDTests {
  @Test(
    "canonical calls: upper case, trimmed, -0 dropped, nothing else changed",
    arguments: [
      ("N0CALL-0", "N0CALL"), ("n0call-0", "N0CALL"), (" N0CALL-0 ", "N0CALL"), ("N0CALL", "N0CALL"),
      ("N0CALL-10", "N0CALL-10"), ("N0CALL-00", "N0CALL-00"), ("N0CALL-7", "N0CALL-7"), ("-0", "-0"),
      ("A-0", "A"), ("A--0", "A--0"), ("", ""),
    ])
  func canonical(text: String, expected: String) {
    #expect(StationAddress.canonical(text) == expected)
  }

  @Test("a message to CALL-0 names the station CALL; the ACK's source stays as sent")
  func addressee() throws {
    let message = try #require(addressed("KJ7ABC-7>APRS::N0CALL-0 :Hello{12"))
    #expect(message.addressee == "N0CALL" && message.addresseeAsSent == "N0CALL-0")
    #expect(!message.isToSelf)
    let ack = try #require(OutgoingLine.ack(for: message))
    #expect(String(decoding: ack, as: UTF8.self) == "N0CALL-0>APZACL,TCPIP*::KJ7ABC-7 :ack12\r\n")
    // Bulletins keep their names (`BLN0` has no SSID to drop).
    #expect(try #require(addressed("KJ7ABC-7>APRS::BLN0     :News")).kind == .bulletin)
    #expect(try #require(addressed("KJ7ABC-7>APRS::N0CALL-00:Hello")).addressee == "N0CALL-00")
  }

  @Test("CALL-0 to CALL (either way round) is to-self and never ACKed; another SSID is not")
  func toSelf() throws {
    for line in ["N0CALL-0>APRS::N0CALL   :x{1", "N0CALL>APRS::N0CALL-0 :x{1", "n0call-0>APRS::N0CALL:x{1"] {
      let message = try #require(addressed(line))
      #expect(message.isToSelf, "\(line)")
      #expect(OutgoingLine.ack(for: message) == nil)
    }
    let other = try #require(addressed("N0CALL-1>APRS::N0CALL-0 :x{1"))
    #expect(!other.isToSelf && other.sender == "N0CALL-1")
    #expect(try #require(addressed("n0call-0>APRS::KJ7ABC   :x")).sender == "N0CALL")
  }

  @Test("a retry naming CALL-0 has the key of the one naming CALL")
  func dedup() throws {
    let zero = DedupKey(try #require(addressed("KJ7ABC-0>APRS::N0CALL-0 :Hello{12")))
    let bare = DedupKey(try #require(addressed("KJ7ABC>APRS::N0CALL   :Hello{12")))
    #expect(zero == bare && zero.digest == bare.digest)
    #expect(zero.sender == "KJ7ABC" && zero.addressee == "N0CALL")
  }

  @Test("filter entries: CALL-0 beside each bare call of up to 7 characters")
  func aliases() throws {
    func alias(_ call: String) -> String? {
      PackedCall.pack(call.utf8).flatMap(PackedCall.zeroSSIDAlias).map(PackedCall.string)
    }
    #expect(alias("N0CALL") == "N0CALL-0")
    #expect(alias("K1A") == "K1A-0")
    #expect(alias("ABCDEFG") == "ABCDEFG-0")
    #expect(alias("ABCDEFGH") == nil && alias("ABCDEFGHI") == nil)
    #expect(alias("N0CALL-7") == nil && alias("K1A-15") == nil)
    #expect(PackedCall.entryBytes(PackedCall.pack("N0CALL".utf8)!) == 7 + 9)
    #expect(PackedCall.entryBytes(PackedCall.pack("N0CALL-7".utf8)!) == 9)
    #expect(PackedCall.entryBytes(PackedCall.pack("ABCDEFGH".utf8)!) == 9)
  }

  @Test("the exact list holds g/CALL-0 and b/CALL-0, counted in its bytes")
  func exactList() throws {
    let stations = try ["N0CALL", "KJ7ABC-7", "W1AW"].map { try StationAddress(parsing: $0) }
    let plan = FilterPlanner(addressees: stations, senders: stations).plan()
    #expect(plan.isExact)
    #expect(plan.spec == "g/KJ7ABC-7/N0CALL/N0CALL-0/W1AW/W1AW-0 b/KJ7ABC-7/N0CALL/N0CALL-0/W1AW/W1AW-0")
    #expect(plan.byteCount == plan.spec.utf8.count + 10)
    #expect(plan.addressees.exactStations == 3 && plan.exactStationCount == 6)
  }

  @Test("the -0 entries count against the 510 bytes: a list that fits without them takes prefixes")
  func boundary() throws {
    // 50 bare 7-character calls: 50 × 8 = 400 bytes exact, 50 × 18 = 900 bytes with their -0 entries.
    let stations = (0..<50).map { try! StationAddress(parsing: "KJ\($0 / 10)A\(Self.letter($0 % 10))CD") }
    let plan = FilterPlanner(addressees: stations).plan()
    #expect(!plan.isExact)
    #expect(plan.byteCount <= FilterPlanner.maximumLineLength)
    FilterPlannerTests.checkLine(plan, addressees: stations)
    // 20 of them fit exactly, with their -0 entries: 20 × 18 = 360.
    let few = FilterPlanner(addressees: stations.prefix(20)).plan()
    #expect(few.isExact && few.addressees.entries.count == 40)
    FilterPlannerTests.checkLine(few, addressees: Array(stations.prefix(20)))
  }

  static func letter(_ index: Int) -> String { String(CallGenerator.letters[index]) }
}
