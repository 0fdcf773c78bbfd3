import CSQLite
import Foundation
import TestSupport
import Testing

@testable import CompanionFiles
@testable import Store

#if canImport(Glibc)
  import Glibc
#endif

/// Storage faults (docs/design.md "Faults"): how SQLite's codes are classified, the check that the database file is
/// still the one the path names (the beacon and the users file are `CompanionFilesTests`').
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
}
