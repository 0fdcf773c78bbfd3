import Foundation
import TestSupport
import Testing

@testable import CompanionFiles

#if canImport(Glibc)
  import Glibc
#endif

/// `DatabaseUsers`: the users file of a database (docs/design.md "Faults"), and the owner of the companion files.
@Suite struct DatabaseUsersTests {
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
