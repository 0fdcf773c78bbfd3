// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import Testing

@testable import Store

/// `Database+ReadMarkers.swift`: what a station has read, shared by its devices and stamped on the cursor.
@Suite struct DatabaseReadMarkersTests {
  private static let station = "N0CALL-7"

  @Test func anUnregisteredStationHasNoMarkers() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    #expect(try database.markRead(station: "NOBODY-1", peer: "*", upTo: 5, now: 10) == nil)
    #expect(try count(database, "read_markers") == 0)
    #expect(try database.lastMessageTimestamp() == 0, "the cursor sequence does not move")
    #expect(try database.readMarkers(station: "NOBODY-1", changedAfter: .min).isEmpty)
  }

  @Test func aMarkIsStampedAndASecondOneChangesNothing() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    _ = try database.storeMessages([incoming(Self.station, "one")], now: 1_000)
    let first = try database.markRead(station: Self.station, peer: "KJ7ABC-7", upTo: 1_000, now: 2_000)
    #expect(first == ReadMark(upTo: 1_000, stamp: 2_000))
    #expect(try database.lastMessageTimestamp() == 2_000, "the stamp is taken from the cursor sequence")
    #expect(
      try database.markRead(station: Self.station, peer: "KJ7ABC-7", upTo: 1_000, now: 3_000)
        == ReadMark(upTo: 1_000, stamp: nil))
    #expect(
      try database.markRead(station: Self.station, peer: "KJ7ABC-7", upTo: 500, now: 3_000)
        == ReadMark(upTo: 1_000, stamp: nil), "a marker never moves back")
    #expect(try database.lastMessageTimestamp() == 2_000)
    #expect(try database.readMarkers(station: Self.station, changedAfter: .min) == ["KJ7ABC-7": 1_000])
  }

  @Test func theStampComesAfterEveryMessageWhateverTheClock() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    _ = try database.storeMessages([incoming(Self.station, "one")], now: 10_000)
    // The wall clock is behind the newest timestamp: the stamp still follows it.
    let mark = try database.markRead(station: Self.station, peer: "*", upTo: 10_000, now: 5_000)
    #expect(mark == ReadMark(upTo: 10_000, stamp: 10_001))
    let next = try database.storeMessages([incoming(Self.station, "two")], now: 5_001)
    #expect(next == [.stored(messageID: 2, timestamp: 10_002)], "the next message comes after the marker")
    #expect(try database.readMarkers(station: Self.station, changedAfter: 10_000) == ["*": 10_000])
    #expect(try database.readMarkers(station: Self.station, changedAfter: 10_001).isEmpty)
  }

  @Test func aMarkerInTheFutureIsCutToTheLatestTimeGiven() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    _ = try database.storeMessages([incoming(Self.station, "one")], now: 1_000)
    // The later of the newest timestamp (1_000) and the clock (1_500).
    #expect(
      try database.markRead(station: Self.station, peer: "*", upTo: .max, now: 1_500)
        == ReadMark(upTo: 1_500, stamp: 1_500))
    // With the clock behind the newest timestamp, the bound is that timestamp (the stamp, 1_500, since).
    #expect(
      try database.markRead(station: Self.station, peer: "KJ7ABC-7", upTo: .max, now: 10)
        == ReadMark(upTo: 1_500, stamp: 1_501))
  }

  @Test func peersAreNamedUpperCaseAndTheStarStays() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    _ = try database.markRead(station: "n0call-7", peer: "kj7abc-7", upTo: 1, now: 100)
    _ = try database.markRead(station: Self.station, peer: "*", upTo: 1, now: 101)
    #expect(
      try database.markRead(station: Self.station, peer: "KJ7ABC-7", upTo: 1, now: 102)?.stamp == nil,
      "the same marker")
    #expect(try database.readMarkers(station: "N0CALL-7", changedAfter: .min) == ["*": 1, "KJ7ABC-7": 1])
  }

  @Test func markersAreTheStationsOwn() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    try register(database, "N0CALL-8")
    _ = try database.markRead(station: Self.station, peer: "*", upTo: 1, now: 100)
    #expect(try database.readMarkers(station: "N0CALL-8", changedAfter: .min).isEmpty)
    #expect(
      try database.markRead(station: "N0CALL-8", peer: "*", upTo: 1, now: 100)
        == ReadMark(upTo: 1, stamp: 101))
    #expect(try database.deleteStation(Self.station))
    #expect(try count(database, "read_markers") == 1, "deleted with their station")
  }

  @Test func onlyMarkersChangedAfterTheCursorAreRead() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    let a = try #require(
      try database.markRead(station: Self.station, peer: "A1AAA", upTo: 1, now: 100)?.stamp)
    let b = try #require(
      try database.markRead(station: Self.station, peer: "B1BBB", upTo: 1, now: 100)?.stamp)
    #expect(a == 100 && b == 101)
    #expect(try database.readMarkers(station: Self.station, changedAfter: 99) == ["A1AAA": 1, "B1BBB": 1])
    #expect(try database.readMarkers(station: Self.station, changedAfter: 100) == ["B1BBB": 1])
    // Moving A restamps it.
    _ = try database.markRead(station: Self.station, peer: "A1AAA", upTo: 50, now: 100)
    #expect(try database.readMarkers(station: Self.station, changedAfter: 101) == ["A1AAA": 50])
  }

  @Test func aRefusedMarkLeavesTheSequenceAlone() throws {
    let (database, directory) = try temporaryStore(registering: Self.station)
    defer { directory.remove() }
    // The schema holds no negative marker: the write is refused whole.
    #expect(throws: StoreError.self) {
      try database.markRead(station: Self.station, peer: "*", upTo: -1, now: 100)
    }
    #expect(try count(database, "read_markers") == 0)
    #expect(try database.lastMessageTimestamp() == 0)
  }
}
