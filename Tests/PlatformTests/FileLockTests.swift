import Foundation
import Platform
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct FileLockTests {
  /// A fresh folder for one test.
  private func makeDirectory() throws -> String {
    var template = Array("/tmp/ac-filelock-XXXXXX".utf8CString)
    let made = try #require(mkdtemp(&template))
    return String(cString: made)
  }

  @Test func oneHolderAtATimeAndCloseReleases() throws {
    let directory = try makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/db.listener-lock"
    let first = try FileLock(path: path)
    let second = try FileLock(path: path)
    #expect(try first.lock(note: "first:1:a"))
    #expect(try first.lock(note: "first:1:a"))  // already held: still true
    #expect(try !second.lock(note: "second"))
    #expect(second.contents() == "\(getpid()) first:1:a")
    first.close()
    first.close()  // twice is fine
    #expect(try second.lock(note: "second:2:b"))
    #expect(second.contents() == "\(getpid()) second:2:b")
    var info = stat()
    #expect(stat(path, &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600)
    #expect(throws: FileLockError.self) { try first.lock() }
  }

  /// Root gives the lock file the owner of the database (as SQLite does with `-wal`), so the service user can
  /// still open it; anyone else leaves it alone.
  @Test func rootAdoptsTheDatabasesOwner() throws {
    let directory = try makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let database = directory + "/db.sqlite"
    #expect(FileManager.default.createFile(atPath: database, contents: nil))
    let isRoot = geteuid() == 0
    if isRoot { #expect(chown(database, 4321, 4322) == 0) }
    let lock = try FileLock(path: database + ".listener-lock")
    lock.adoptOwner(of: database)
    var info = stat()
    #expect(stat(database + ".listener-lock", &info) == 0)
    #expect(info.st_uid == (isRoot ? 4321 : geteuid()))
    #expect(info.st_gid == (isRoot ? 4322 : getegid()))
    #expect(try lock.lock())
  }

  @Test func aMissingFolderIsATypedError() throws {
    #expect(throws: FileLockError.self) { _ = try FileLock(path: "/nonexistent-folder/x.lock") }
  }

  /// The point of the lock: a holder killed with SIGKILL frees it at once, no timeout involved. The holder is
  /// flock(1) from util-linux (`flock(2)` too), with `--no-fork` so the process killed is the one holding it.
  @Test func aKilledHolderFreesItAtOnce() throws {
    let directory = try makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/db.listener-lock"
    let holder = Process()
    holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
    holder.arguments = ["--exclusive", "--no-fork", path, "/bin/sleep", "60"]
    try holder.run()
    defer {
      if holder.isRunning { kill(holder.processIdentifier, SIGKILL) }
      holder.waitUntilExit()
    }
    // Until flock(1) holds it, a probe gets it: give it back at once and look again (flock(1) waits for it).
    let held = waitFor(10_000) {
      guard let probe = try? FileLock(path: path) else { return false }
      defer { probe.close() }
      return (try? probe.lock()) == false
    }
    try #require(held, "flock(1) never took the lock")
    let successor = try FileLock(path: path)
    #expect(try !successor.lock())
    kill(holder.processIdentifier, SIGKILL)
    holder.waitUntilExit()
    // Reaped: its descriptors are closed, so the lock is free on the first try.
    #expect(try successor.lock())
  }

  /// Close-on-exec: a child process started while the lock is held does not keep it after the holder closes it.
  @Test func aChildProcessDoesNotInheritTheLock() throws {
    let directory = try makeDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/db.listener-lock"
    let lock = try FileLock(path: path)
    #expect(try lock.lock())
    let child = Process()
    child.executableURL = URL(fileURLWithPath: "/bin/sleep")
    child.arguments = ["30"]
    try child.run()
    defer {
      kill(child.processIdentifier, SIGKILL)
      child.waitUntilExit()
    }
    lock.close()
    let next = try FileLock(path: path)
    // Free at once, or within moments when another test's child is between its fork and its exec (it holds a
    // copy of every descriptor until exec closes the close-on-exec ones); a child that kept it would hold it
    // for its 30 s.
    #expect(waitFor(5_000) { (try? next.lock()) == true })
  }

  private func waitFor(_ timeoutMs: Int64, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicMilliseconds() + timeoutMs
    while !condition() {
      if monotonicMilliseconds() >= deadline { return false }
      usleep(2_000)
    }
    return true
  }
}
