import Foundation
import TestSupport
import Testing

@testable import CompanionFiles

#if canImport(Glibc)
  import Glibc
#endif

/// `ListenerBeacon` and `ListenerBeaconFile`: the listener's beacon record beside the database.
@Suite struct ListenerBeaconTests {
  @Test func theBeaconRecordRoundTripsAndATornOneIsRefused() throws {
    let beacon = ListenerBeacon(
      pid: 42, monotonicMs: 123_456, epochMs: 1_800_000_000_000, storeFault: "database or disk\nis full",
      storeFaultSince: 1_799_999_999_000, failedBatches: 7, heldLines: 12, droppedLines: 3,
      leaseFault: nil, databaseFile: "the database file was deleted")
    let bytes = beacon.encoded(sequence: 9)
    var expected = beacon
    expected.storeFault = "database or disk is full"
    #expect(ListenerBeacon(encoded: bytes) == expected)
    var torn = String(decoding: bytes, as: UTF8.self)
    torn = torn.replacingOccurrences(of: "end=9", with: "end=8")
    #expect(ListenerBeacon(encoded: Array(torn.utf8)) == nil)
    #expect(ListenerBeacon(encoded: Array("garbage".utf8)) == nil)
    #expect(beacon.isFresh(monotonicNow: 123_456 + ListenerBeacon.freshMs))
    #expect(!beacon.isFresh(monotonicNow: 123_457 + ListenerBeacon.freshMs))
    var elsewhere = beacon
    elsewhere.host = ListenerBeacon.thisHost + "-other"
    #expect(!elsewhere.isFresh(monotonicNow: 123_456), "another host's monotonic clock means nothing here")

    let directory = try TempDirectory()
    defer { directory.remove() }
    let path = ListenerBeaconFile.path(forDatabase: directory.database)
    let file = try ListenerBeaconFile(path: path)
    #expect(ListenerBeaconFile.read(path: path) == nil, "allocated, not written yet")
    #expect(file.write(beacon))
    #expect(ListenerBeaconFile.read(path: path) == expected)
    var info = stat()
    #expect(stat(path, &info) == 0 && info.st_size == Int64(ListenerBeaconFile.size))
    file.close()
  }
}
