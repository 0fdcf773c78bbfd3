import Foundation
import TestSupport
import Testing

@testable import CompanionFiles

#if canImport(Glibc)
  import Glibc
#endif

/// `DatabaseFileChange`: whether the database file is still the one the path names (docs/design.md "Faults").
@Suite struct DatabaseFileChangeTests {
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
}
