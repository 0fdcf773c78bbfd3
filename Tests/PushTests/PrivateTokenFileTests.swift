import Config
import Foundation
import TestSupport
import Testing

@testable import Push

#if canImport(Glibc)
  import Glibc
#endif

/// The APNs provider token's file: 0600, this user's, never trusted otherwise.
@Suite struct PrivateTokenFileTests {
  func withDirectory(_ body: (String) throws -> Void) throws {
    let directory = try makeTemporaryDirectory("token-file")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try body(directory)
  }

  func mode(_ path: String) -> mode_t {
    var info = stat()
    return stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
  }

  @Test func aSavedTokenIsOwnerOnlyAndReadsBack() throws {
    try withDirectory { directory in
      let file = PrivateTokenFile(path: directory + "/db.sqlite.apns-token")
      guard case .success(nil) = file.load() else { Issue.record("a missing file is no token"); return }
      let previous = umask(0)
      defer { umask(previous) }
      guard case .success = file.save("KEY TEAM 1 eyJ.a.b") else { Issue.record("not saved"); return }
      #expect(mode(file.path) == 0o600)
      guard case .success(let line) = file.load() else { Issue.record("not read"); return }
      #expect(line == "KEY TEAM 1 eyJ.a.b")
      guard case .success = file.save("KEY TEAM 2 eyJ.c.d") else { Issue.record("not replaced"); return }
      guard case .success("KEY TEAM 2 eyJ.c.d") = file.load() else { Issue.record("not the new one"); return }
      #expect(mode(file.path) == 0o600)
      let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory)
      #expect(leftovers == ["db.sqlite.apns-token"], "\(leftovers)")
    }
  }

  @Test func aFileOthersMayReadOrALinkIsNotTrusted() throws {
    try withDirectory { directory in
      let path = directory + "/token"
      try "KEY TEAM 1 eyJ.a.b\n".write(toFile: path, atomically: false, encoding: .utf8)
      chmod(path, 0o644)
      guard case .failure(let open) = PrivateTokenFile(path: path).load() else {
        Issue.record("a world-readable token file was trusted")
        return
      }
      #expect(open.description.contains("mode 644"), "\(open)")
      chmod(path, 0o620)
      guard case .failure = PrivateTokenFile(path: path).load() else {
        Issue.record("group-writable"); return
      }
      chmod(path, 0o600)
      let link = directory + "/link"
      symlink(path, link)
      guard case .failure = PrivateTokenFile(path: link).load() else {
        Issue.record("followed a link"); return
      }
      guard case .failure = PrivateTokenFile(path: directory).load() else {
        Issue.record("a directory"); return
      }
      // A save replaces the link itself, never what it points to.
      guard case .success = PrivateTokenFile(path: link).save("new") else {
        Issue.record("not saved"); return
      }
      guard case .success("KEY TEAM 1 eyJ.a.b") = PrivateTokenFile(path: path).load() else {
        Issue.record("the link's target was written")
        return
      }
    }
  }

  @Test func theFileLivesBesideTheDatabase() {
    #expect(
      PushServiceOptions.apnsTokenFile(database: "/var/lib/aprs-cloud/aprs-cloud.sqlite")
        == "/var/lib/aprs-cloud/aprs-cloud.sqlite.apns-token")
    let options = PushServiceOptions(databasePath: "/data/db.sqlite", push: PushConfig())
    #expect(options.apnsTokenFile == "/data/db.sqlite.apns-token")
  }
}
