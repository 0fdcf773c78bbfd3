import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The tests' own process starter (``SpawnedProcess``): the exit status, the output in the files given, no
/// descriptor of the test process beyond the three standard ones, and a timeout that leaves the child running
/// until it is killed.
@Suite struct SpawnedProcessTests {
  @Test func statusOutputAndOnlyTheStandardDescriptors() throws {
    let directory = try makeTemporaryDirectory("spawn")
    defer { rmrf(directory) }
    let held = open("/dev/null", O_RDONLY)  // not close-on-exec: the child must not get it anyway
    defer { close(held) }
    let out = directory + "/out"
    let child = try SpawnedProcess(
      "/bin/sh", ["-c", "ls /proc/self/fd; echo oops >&2; exit 3"], stdout: out, stderr: directory + "/err")
    #expect(child.wait(timeoutSeconds: 10) == 3)
    let listed = try String(contentsOfFile: out).split(separator: "\n")
    // 0, 1, 2 and the one `ls` opened to read the folder.
    #expect(listed.count <= 4, "\(listed)")
    #expect(try String(contentsOfFile: directory + "/err") == "oops\n")
  }

  @Test func aChildPastItsTimeoutIsLeftRunningUntilKilled() throws {
    let directory = try makeTemporaryDirectory("spawn")
    defer { rmrf(directory) }
    let child = try SpawnedProcess(
      "/bin/sleep", ["30"], stdout: directory + "/out", stderr: directory + "/err")
    #expect(child.wait(timeoutSeconds: 0.05) == nil)
    child.kill()
    #expect(Glibc.kill(child.pid, 0) != 0, "reaped")
  }
}

private func rmrf(_ path: String) { try? FileManager.default.removeItem(atPath: path) }
