import CSQLite
import Foundation
import Testing

@testable import CompanionFiles
@testable import Store

#if canImport(Glibc)
  import Glibc
#endif

/// Storage faults (docs/design.md "Faults"): how SQLite's codes are classified, the check that the database file is
/// still the one the path names, the beacon record and the database's users file.
@Suite struct StorageFaultTests {
  @Test func sqliteCodesAreClassifiedIntoStorageFaults() {
    #expect(
      StoreError(code: SQLITE_FULL, message: "database or disk is full") == .full("database or disk is full"))
    #expect(StoreError(code: SQLITE_FULL, message: "x").storageFault == .full)
    #expect(StoreError(code: SQLITE_BUSY, message: "x").storageFault == .locked)
    #expect(StoreError(code: SQLITE_LOCKED, message: "x").storageFault == .locked)
    let ioError = SQLITE_IOERR | (4 << 8)  // SQLITE_IOERR_FSYNC
    #expect(StoreError(code: ioError, message: "disk I/O error").storageFault == .ioError(code: ioError))
    #expect(
      StoreError(code: SQLITE_READONLY, message: "attempt to write").storageFault
        == .readOnly("attempt to write"))
    #expect(StoreError(code: SQLITE_CORRUPT, message: "x").storageFault == nil)
    #expect(StoreError(code: SQLITE_CONSTRAINT, message: "x").storageFault == nil)
    #expect(StoreError.invalidArgument("x").storageFault == nil)
    #expect(StorageFault.full.description == "database or disk is full")
  }

  @Test func theMoveCheckIsPure() {
    let opened = DatabaseFileChange.Identity(device: 1, inode: 10, links: 1)
    #expect(DatabaseFileChange.classify(opened: opened, current: opened, sqliteSaysMoved: false) == nil)
    #expect(DatabaseFileChange.classify(opened: opened, current: nil, sqliteSaysMoved: false) == .deleted)
    var unlinked = opened
    unlinked.links = 0
    #expect(
      DatabaseFileChange.classify(opened: opened, current: unlinked, sqliteSaysMoved: false) == .deleted)
    var other = opened
    other.inode = 11
    #expect(DatabaseFileChange.classify(opened: opened, current: other, sqliteSaysMoved: false) == .replaced)
    other = opened
    other.device = 2
    #expect(DatabaseFileChange.classify(opened: opened, current: other, sqliteSaysMoved: false) == .replaced)
    #expect(DatabaseFileChange.classify(opened: opened, current: opened, sqliteSaysMoved: true) == .replaced)
  }

  @Test func anOpenDatabaseNoticesItsFileDeletedOrReplaced() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    defer { database.close() }
    #expect(database.fileChange() == nil)
    // Replaced: another database renamed over the path.
    let other = try openStore(directory.path + "/other.sqlite")
    other.close()
    #expect(rename(directory.path + "/other.sqlite", directory.database) == 0)
    #expect(database.fileChange() == .replaced)
    // Deleted: nothing at the path.
    let second = try openStore(directory.path + "/second.sqlite")
    defer { second.close() }
    #expect(second.fileChange() == nil)
    #expect(unlink(directory.path + "/second.sqlite") == 0)
    #expect(second.fileChange() == .deleted)
    #expect(try openStore(":memory:", migrate: false).fileChange() == nil)
  }

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

  @Test func aDaemonWaitsWhileUsersOfAnotherFileRunAndMovesTheirLogAside() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let path = directory.database
    let first = try DatabaseUsers(databasePath: path)
    #expect(try first.join(shouldStop: { false }, waiting: { _ in }) == [])
    // A second user of the same file joins at once; restore is refused while they run.
    let second = try DatabaseUsers(databasePath: path)
    #expect(try second.join(shouldStop: { false }, waiting: { _ in }) == [])
    #expect(try DatabaseUsers.lockExclusive(databasePath: path) == nil)
    // The file is replaced (the old one stays open, as the running users' SQLite has it); a log is left at the
    // path. A new user waits while the old ones run.
    let old = open(path, O_RDONLY)
    defer { close(old) }
    #expect(unlink(path) == 0)
    #expect(FileManager.default.createFile(atPath: path + "-wal", contents: Data("old log".utf8)))
    let third = try DatabaseUsers(databasePath: path)
    var waited: [String] = []
    var asked = 0
    #expect(
      try third.join(
        shouldStop: {
          asked += 1
          return asked > 2
        }, waiting: { waited.append($0) }) == nil)
    #expect(waited.count == 1 && waited[0].contains("waiting for them to exit"))
    first.close()
    second.close()
    // They are gone: the new user goes on, with their log out of the way.
    let moved = try #require(try third.join(shouldStop: { false }, waiting: { _ in }))
    #expect(moved.count == 1 && moved[0].hasPrefix(path + "-wal.orphaned-"))
    #expect(access(path + "-wal", F_OK) != 0)
    third.close()
    let exclusive = try #require(try DatabaseUsers.lockExclusive(databasePath: path))
    exclusive.close()
  }

  /// Run as root (the tests are), the users and beacon files get the database's owner, so the service user can
  /// still lock and read them after a daemon was started as root once.
  @Test func companionFilesCreatedByRootBelongToTheDatabasesOwner() throws {
    guard geteuid() == 0 else { return }
    let directory = try TempDirectory()
    defer { directory.remove() }
    let path = directory.database
    #expect(FileManager.default.createFile(atPath: path, contents: nil))
    #expect(chown(path, 65534, 65534) == 0)
    let users = try DatabaseUsers(databasePath: path)
    defer { users.close() }
    let beacon = try ListenerBeaconFile(path: ListenerBeaconFile.path(forDatabase: path), ownerOf: path)
    defer { beacon.close() }
    for file in [users.path, beacon.path] {
      var info = stat()
      #expect(stat(file, &info) == 0 && info.st_uid == 65534 && info.st_gid == 65534, "\(file)")
    }
  }
}
