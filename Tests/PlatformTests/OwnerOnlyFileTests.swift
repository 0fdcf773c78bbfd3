import Foundation
import Platform
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A file written whole at mode 0600 whatever the umask, replacing or keeping what is at its path.
@Suite(.serialized) struct OwnerOnlyFileTests {
  private func mode(_ path: String) -> mode_t {
    var info = stat()
    return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0
  }

  private func leftovers(_ directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".tmp-") }
  }

  @Test func replaceWritesAnOwnerOnlyFileAndReplacesWhatIsThere() throws {
    let directory = NSTemporaryDirectory() + "owner-only-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/secret.yml"
    let old = umask(0o022)
    defer { umask(old) }
    #expect(try OwnerOnlyFile.write(Array("first".utf8), to: path, placement: .replace))
    #expect(mode(path) == 0o600)
    #expect(try OwnerOnlyFile.write(Array("second".utf8), to: path, placement: .replace))
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "second")
    #expect(mode(path) == 0o600)
    #expect(try leftovers(directory).isEmpty)
  }

  @Test func keepExistingNeverOverwrites() throws {
    let directory = NSTemporaryDirectory() + "owner-only-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/aprs-cloud.ini"
    #expect(try OwnerOnlyFile.write(Array("starter".utf8), to: path, placement: .keepExisting))
    #expect(try !OwnerOnlyFile.write(Array("again".utf8), to: path, placement: .keepExisting))
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "starter")
    #expect(try leftovers(directory).isEmpty)
  }

  @Test func anUnwritableFolderIsAnErrorWithItsReason() {
    #expect(throws: OwnerOnlyFile.WriteError.self) {
      try OwnerOnlyFile.write([1], to: "/nonexistent-folder-\(getpid())/file", placement: .replace)
    }
  }
}
