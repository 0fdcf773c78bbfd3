import Foundation
import Store
import Testing

/// `aprs-cloud import FILE` and what a document may bring (docs/operating.md "Moving a station to another server"): its claim
/// only when the operator says so (`--with-claim`), and then unproven; its entries no more than the station's
/// retention keeps on this server.
@Suite struct StationImportCLITests {
  static let keyHash = String(repeating: "ab", count: 32)

  /// An export document of `station` with a claim of ``keyHash`` (when `claimedAt` is given), `settings` (the
  /// `/v1/settings` answer's JSON members), `direct` messages to the station and `others` to another SSID of its
  /// call, oldest first, the first at `start`.
  static func document(
    _ station: String = "N0CALL-7", claimedAt: Int64? = nil,
    settings: String = #""retention":{"mode":"ring"}"#,
    direct: Int, others: Int = 0, start: Int64
  ) -> String {
    var entries: [String] = []
    for index in 0..<(direct + others) {
      let to = index < direct ? "" : #","to":"N0CALL-9""#
      entries.append(
        #"{"direction":"received","type":"message","peer":"KJ7ABC","text":"m\#(index + 1)","#
          + #""timestamp":\#(start + Int64(index)),"seqId":null\#(to)}"#)
    }
    let claim = claimedAt.map { #"{"keyHash":"\#(keyHash)","claimedAt":\#($0)}"# } ?? "null"
    return #"{"format":"aprs-cloud-export","version":1,"station":"\#(station)","exportedAt":\#(start),"#
      + #""claim":\#(claim),"settings":{\#(settings)},"read":{},"entries":[\#(entries.joined(separator: ","))]}"#
  }

  @Test func aDocumentsClaimComesAlongOnlyWithWithClaimAndThenUnproven() throws {
    let plain = try OpsDatabase()
    let file = plain.directory + "/n0call-7.json"
    try Self.document(claimedAt: plain.now - 86_400_000, direct: 3, start: plain.now - 60_000)
      .write(toFile: file, atomically: true, encoding: .utf8)
    let imported = try runCLI(["import", file, "--db", plain.path])
    #expect(imported.status == 0, "\(imported.stderr)")
    #expect(imported.stdout.contains("imported N0CALL-7: 3 entries"), "\(imported.stdout)")
    #expect(
      imported.stdout.contains(
        "unclaimed: the document's claim was left out (--with-claim brings it, unproven)"),
      "\(imported.stdout)")
    #expect(!imported.stdout.contains("station key works here"), "\(imported.stdout)")
    #expect(
      try plain.database.stationClaim("N0CALL-7") == .unclaimed, "whoever wrote the document chose the key")

    // The operator vouches for the document: the claim comes along, unproven, and governs as such a claim does.
    let vouched = try OpsDatabase()
    let other = vouched.directory + "/n0call-9.json"
    try Self.document(
      claimedAt: vouched.now - 86_400_000, settings: #""ssids":"all","ackSsids":[9]"#, direct: 3,
      start: vouched.now - 60_000
    ).write(toFile: file, atomically: true, encoding: .utf8)
    try Self.document("N0CALL-9", claimedAt: vouched.now - 86_400_000, direct: 0, start: vouched.now - 60_000)
      .write(toFile: other, atomically: true, encoding: .utf8)
    for path in [file, other] {
      let claimed = try runCLI(["import", path, "--with-claim", "--db", vouched.path])
      #expect(claimed.status == 0, "\(claimed.stderr)")
      #expect(
        claimed.stdout.contains(
          "the document's claim came along unproven: the owner's station key works here"),
        "\(claimed.stdout)")
    }
    let claim = try #require(try vouched.database.stationClaim("N0CALL-7").claim)
    #expect(
      claim.keyHash == Self.keyHash && claim.proof == .unproven && claim.claimedAt == vouched.now - 86_400_000
    )
    let shown = try runCLI(["stations", "N0CALL-7", "--db", vouched.path])
    #expect(shown.stdout.contains("claim         unproven, claimed"), "\(shown.stdout)")
    #expect(
      try vouched.database.auditTrail(of: "N0CALL-7").first?.detail.contains("imported with --with-claim")
        == true)
    // N0CALL-9 is a station of the same owner here by a claim that governs: N0CALL-7 may ACK in its name.
    let collecting = try vouched.database.stationsCollectingOtherSSIDs(heardSince: 0)
    #expect(
      collecting.first { $0.address == "N0CALL-7" }?.ackSsids.ssids.contains(9) == true, "\(collecting)")

    let usage = try runCLI(["import", "--help"])
    #expect(usage.stdout.contains("--with-claim"), "\(usage.stdout)")
  }

  @Test func anImportKeepsNoMoreEntriesThanTheStationsRetentionHereAndSaysHowManyWentOut() throws {
    // The ring (50 a ring, the default): 120 of the station's own and 60 for another SSID come in.
    let ring = try OpsDatabase()
    let file = ring.directory + "/n0call-7.json"
    let start = ring.now - 3_600_000
    try Self.document(direct: 120, others: 60, start: start).write(
      toFile: file, atomically: true, encoding: .utf8)
    let imported = try runCLI(["import", file, "--db", ring.path])
    #expect(imported.status == 0, "\(imported.stderr)")
    #expect(imported.stdout.contains("imported N0CALL-7: 100 entries"), "\(imported.stdout)")
    #expect(
      imported.stdout.contains(
        "80 older entries dropped (more than the station's retention keeps here: the newest 50 of each ring)"),
      "\(imported.stdout)")
    let kept = try ring.database.recentMessages(station: "N0CALL-7", limit: 1_000)
    #expect(kept.count == 100)
    #expect(
      kept.filter { $0.to == nil }.map(\.text) == (71...120).map { "m\($0)" }, "the newest of the station's")
    #expect(
      kept.filter { $0.to != nil }.map(\.text) == (131...180).map { "m\($0)" },
      "the newest of the other SSID's")
    #expect(
      try ring.database.droppedCount(station: "N0CALL-7", since: .min) == 0, "not evicted here unpulled")

    // `untilPulled` with a max: the station's own ring keeps that many (the other rings stay rings).
    let inbox = try OpsDatabase()
    try Self.document(
      settings: #""retention":{"mode":"untilPulled","max":100}"#, direct: 120, others: 60, start: start
    ).write(toFile: file, atomically: true, encoding: .utf8)
    let kept100 = try runCLI(["import", file, "--db", inbox.path])
    #expect(kept100.status == 0, "\(kept100.stderr)")
    #expect(kept100.stdout.contains("imported N0CALL-7: 150 entries"), "\(kept100.stdout)")
    #expect(kept100.stdout.contains("30 older entries dropped"), "\(kept100.stdout)")
    #expect(
      try inbox.database.recentMessages(station: "N0CALL-7", limit: 1_000).filter { $0.to == nil }.count
        == 100)

    // What fits is kept whole, and nothing is said of drops.
    let small = try OpsDatabase()
    try Self.document(direct: 50, others: 50, start: start).write(
      toFile: file, atomically: true, encoding: .utf8)
    let whole = try runCLI(["import", file, "--db", small.path])
    #expect(whole.status == 0 && whole.stdout.contains("imported N0CALL-7: 100 entries"), "\(whole.stdout)")
    #expect(!whole.stdout.contains("dropped"), "\(whole.stdout)")
  }
}
