import APRS
import Foundation
import Store
import Testing

/// `aprs-cloud stations STATION --export FILE` and `aprs-cloud import FILE`: the operator moves a station, with its
/// claim, settings, markers and every entry, to a fresh server's database.
@Suite struct StationExportCLITests {
  @Test func anExportedStationImportsIntoAFreshDatabaseExactly() throws {
    let old = try OpsDatabase()
    try old.fill()
    let hash = String(repeating: "cd", count: 32)
    _ = try old.database.claimStation("N0CALL-7", keyHash: hash, client: "203.0.113.7", now: old.now)
    try old.database.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(mutedUntil: old.now + 60_000, retention: .untilPulled(max: 300)),
      now: old.now)
    try old.deliver("N0CALL-7", from: "OH7LZB", "Third one", msgno: "9")
    let newest = try #require(try old.database.recentMessages(station: "N0CALL-7", limit: 10).last)
    try old.database.markRead(station: "N0CALL-7", peer: "*", upTo: newest.timestamp, now: old.now)
    let file = old.directory + "/n0call-7.json"
    let exported = try runCLI(["stations", "n0call-7", "--export", file, "--db", old.path])
    #expect(exported.status == 0, "\(exported.stderr)")
    #expect(exported.stderr.contains("exported N0CALL-7: 3 entries, 1 read marker,"), "\(exported.stderr)")
    var info = stat()
    #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600, "it holds the claim's key hash")

    let fresh = try OpsDatabase()
    let imported = try runCLI(["import", file, "--with-claim", "--db", fresh.path])
    #expect(imported.status == 0, "\(imported.stderr)")
    #expect(imported.stdout.contains("imported N0CALL-7: 3 entries"), "\(imported.stdout)")
    #expect(imported.stdout.contains("the owner's station key works here"))
    #expect(try fresh.database.stationClaim("N0CALL-7").claim?.keyHash == hash)
    #expect(
      try fresh.database.recentMessages(station: "N0CALL-7", limit: 10)
        == old.database.recentMessages(station: "N0CALL-7", limit: 10))
    let again = try runCLI(["stations", "N0CALL-7", "--export", "-", "--db", fresh.path])
    let before = try String(contentsOfFile: file, encoding: .utf8)
    #expect(Self.withoutExportedAt(again.stdout) == Self.withoutExportedAt(before + "\n"))
    let shown = try runCLI(["stations", "N0CALL-7", "--db", fresh.path])
    #expect(shown.stdout.contains("retention     until pulled, at most 300\n"), "\(shown.stdout)")

    // A second import of the same station changes nothing and says why.
    let twice = try runCLI(["import", file, "--db", fresh.path])
    #expect(
      twice.status == 1 && twice.stderr.contains("N0CALL-7 is registered here already"), "\(twice.stderr)")
  }

  @Test func aBrokenOrMissingDocumentIsRefusedAndChangesNothing() throws {
    let fresh = try OpsDatabase()
    let file = fresh.directory + "/broken.json"
    try #"{"format":"aprs-cloud-export","version":1,"station":"N0CALL","settings":{"ackPolicy":"sometimes"}}"#
      .write(toFile: file, atomically: true, encoding: .utf8)
    let refused = try runCLI(["import", file, "--db", fresh.path])
    #expect(
      refused.status == 1 && refused.stderr.contains("\(file): settings: ackPolicy must be"),
      "\(refused.stderr)")
    #expect(try fresh.database.station("N0CALL") == nil)
    let missing = try runCLI(["import", fresh.directory + "/nothing.json", "--db", fresh.path])
    #expect(missing.status == 1 && missing.stderr.contains("cannot read"), "\(missing.stderr)")
    let usage = try runCLI(["import", "--db", fresh.path])
    #expect(usage.status == 2)
    let unknown = try runCLI(["stations", "NOBODY", "--export", file, "--db", fresh.path])
    #expect(unknown.status == 1 && unknown.stderr.contains("NOBODY is not registered"))
  }

  static func withoutExportedAt(_ text: String) -> String {
    text.replacingOccurrences(of: #""exportedAt":[0-9]+"#, with: "", options: .regularExpression)
  }
}
