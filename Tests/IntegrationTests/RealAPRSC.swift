import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The real APRS-IS server, aprsc (2.1.21 in CI), run on loopback for one test.
///
/// - The binary comes from the environment, the same variables `make test` takes (nothing of aprsc is kept in
///   this repository): `APRSC`, a built aprsc; else `APRSC_SRC`, aprsc's public source (a tarball, a checkout of
///   https://github.com/hessu/aprsc, or a folder that holds one tarball), built once per test process with
///   `.ci/build-aprsc SOURCE .build/aprsc` (skipped while `.build/aprsc/aprsc` is newer than the source); else
///   `../shared/aprsc`, that folder beside the package root, where it exists. With none of them ``isAvailable``
///   is false and the suites that need aprsc are skipped with ``skipNote`` (`.enabled(if:)`); `make test` then
///   leaves out the suites whose names match `RealAPRSC|ThroughAPRSC` and says so in one line, so a suite that
///   starts a `RealAPRSC` takes a name that matches.
/// - aprsc refuses to run as root: as root the test makes the system user `aprsc` when it is missing and starts
///   the server with `-u aprsc`.
/// - It gets a config file (`-c`), a pid file (`-p`) and a log folder (`-o file -r DIR`) in a temporary folder,
///   a user-filter port (`igate`, like 14580) and an HTTP status port on free loopback ports.
/// - It runs as a daemon (`-f`): the process the test starts exits at once, and the server is found by its pid
///   file. (A long-running child that changes its uid confuses Foundation's `Process`, whose child reaping then
///   blocks every other `Process` of the test.)
/// - `stop()` (also run by `deinit`) ends it: SIGTERM, SIGKILL after 5 s.
final class RealAPRSC: @unchecked Sendable {
  /// The server's `ServerId`: its q constructs and `# logresp … server T2LOCAL` name it.
  static let serverID = "T2LOCAL"
  let directory: String
  /// The user-filter port (aprsc's `igate` listener, what 14580 is on the network).
  let port: Int
  /// The HTTP status port (`/status.json`).
  let statusPort: Int
  /// The daemon's process id (from its pid file); 0 until it wrote one.
  private var pid: Int32 = 0

  /// Builds aprsc if needed and starts it; waits (at most 15 s) until both ports are bound.
  init() throws {
    let binary = try Self.binary()
    let user = try Self.serviceUser()
    directory = try makeTemporaryDirectory("aprsc")
    port = try freePort()
    var status = try freePort()
    while status == port { status = try freePort() }
    statusPort = status
    let data = directory + "/data"
    let logs = directory + "/log"
    for folder in [data, logs] {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }
    let config = """
      ServerId   \(Self.serverID)
      PassCode   \(aprsPasscode(Self.serverID))
      MyEmail    test@example.com
      MyAdmin    "aprs-cloud tests"
      RunDir     \(data)
      Listen "Igate port" igate tcp 127.0.0.1 \(port)
      HTTPStatus 127.0.0.1 \(statusPort)

      """
    try config.write(toFile: directory + "/aprsc.conf", atomically: true, encoding: .utf8)
    if let user {
      // aprsc drops to `user` before it writes its pid file, logs and run data.
      for path in [directory, data, logs, directory + "/aprsc.conf"] { chown(path, user.uid, user.gid) }
    }
    try launch(binary: binary, user: user)
  }

  /// Starts the daemon on the folder's config and waits (at most 15 s) until both ports are bound.
  private func launch(binary: String, user: (name: String, uid: uid_t, gid: gid_t)?) throws {
    let data = directory + "/data"
    let logs = directory + "/log"
    let pidFile = data + "/aprsc.pid"
    try? FileManager.default.removeItem(atPath: pidFile)
    pid = 0
    let readyBefore = Self.occurrences("Accept thread ready", in: log)
    var arguments = ["-f", "-c", directory + "/aprsc.conf", "-p", pidFile, "-o", "file", "-r", logs]
    if let user { arguments = ["-u", user.name] + arguments }
    let started = try runProcess(binary, arguments, timeout: 15)
    let ready = waitUntil(timeout: 15, interval: 0.05) {
      if pid == 0, let text = try? String(contentsOfFile: pidFile, encoding: .utf8) {
        pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
      }
      let text = log
      return pid > 0
        && (!Self.isAlive(pid)
          || (Self.occurrences("Accept thread ready", in: text) > readyBefore
            && Self.occurrences("HTTP thread ready", in: text) > readyBefore))
    }
    guard started.status == 0, ready, Self.isAlive(pid) else {
      let text = log + started.stderrText
      stop()
      throw TestFailure("aprsc did not start:\n\(text)")
    }
  }

  /// True while `pid` runs (a zombie counts as gone), from `/proc/PID/stat`.
  static func isAlive(_ pid: Int32) -> Bool {
    guard pid > 0, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.range(of: ") ", options: .backwards)
    else { return false }
    return stat[close.upperBound...].first != "Z"
  }

  deinit { stop() }

  static func occurrences(_ text: String, in log: String) -> Int {
    log.components(separatedBy: text).count - 1
  }

  /// `kill -9` of the daemon (an operator's crash or `systemctl kill`); its folder, config and ports stay for
  /// ``restart()``. Waits until it is gone.
  func kill9() {
    if Self.isAlive(pid) {
      kill(pid, SIGKILL)
      _ = waitUntil(timeout: 5) { !Self.isAlive(pid) }
    }
  }

  /// Starts the daemon again on the same ports (after ``kill9()``); returns when both ports are bound.
  func restart() throws { try launch(binary: try Self.binary(), user: try Self.serviceUser()) }

  /// SIGSTOP: the server freezes; the kernel still accepts connections on its ports, nothing is answered.
  func freeze() { kill(pid, SIGSTOP) }

  /// SIGCONT after ``freeze()``.
  func thaw() { kill(pid, SIGCONT) }

  /// aprsc's own log (`log/aprsc.log`).
  var log: String { (try? String(contentsOfFile: directory + "/log/aprsc.log", encoding: .utf8)) ?? "" }

  func stop() {
    if Self.isAlive(pid) {
      kill(pid, SIGTERM)
      if !waitUntil(timeout: 5, { !Self.isAlive(pid) }) {
        kill(pid, SIGKILL)
        _ = waitUntil(timeout: 5) { !Self.isAlive(pid) }
      }
    }
    pid = 0
    if ProcessInfo.processInfo.environment["APRS_CLOUD_KEEP_TEST_DIRS"] == nil {
      try? FileManager.default.removeItem(atPath: directory)
    }
  }

  /// `/status.json` from the HTTP status port.
  func status() throws -> JSONObject {
    let output = try runProcess(
      "/usr/bin/curl", ["-s", "-S", "--max-time", "5", "http://127.0.0.1:\(statusPort)/status.json"],
      timeout: 10)
    guard output.status == 0, case .object(let object)? = try? JSONParser.parse(Array(output.stdout)) else {
      throw TestFailure("aprsc's status page: \(output.stderrText)")
    }
    return object
  }

  /// TCP connections aprsc accepted since it started (`totals.connects`).
  func connects() throws -> Int {
    guard case .object(let totals)? = try status()["totals"] else { throw TestFailure("no totals in status") }
    return totals.int("connects") ?? -1
  }

  /// The connected clients as the status page lists them (`username`, `verified`, `addr_rem`, `filter` cut to
  /// 255 characters, `pkts_rx`, …).
  func clients() throws -> [JSONObject] { try status().objects("clients") }

  // Building and the service user --------------------------------------------------------------------------

  /// Where the binary comes from: a built one, or a source to build.
  enum Origin: Equatable {
    case binary(String)
    case source(String)
  }

  /// The origin the environment gives (`APRSC`, then `APRSC_SRC`, then `../shared/aprsc` beside the package
  /// root when it exists); nil when there is none, and the tests that need aprsc are skipped.
  static func origin(
    environment: [String: String], packageRoot: String, exists: (String) -> Bool
  ) -> Origin? {
    if let binary = environment["APRSC"], !binary.isEmpty { return .binary(binary) }
    if let source = environment["APRSC_SRC"], !source.isEmpty { return .source(source) }
    let shared = URL(fileURLWithPath: packageRoot).deletingLastPathComponent()
      .appendingPathComponent("shared/aprsc").path
    return exists(shared) ? .source(shared) : nil
  }

  /// This process's origin.
  static let currentOrigin = origin(
    environment: ProcessInfo.processInfo.environment, packageRoot: TestPaths.packageRoot,
    exists: { FileManager.default.fileExists(atPath: $0) })

  /// True when a binary or a source of aprsc is given: the suites that need it run.
  static let isAvailable = currentOrigin != nil

  /// The one line a skipped suite gives: how to run it.
  static let skipNote: Comment =
    "needs the real aprsc: set APRSC=PATH (a built aprsc) or APRSC_SRC=PATH (its source, a tarball or a checkout of https://github.com/hessu/aprsc)"

  /// The binary: ``currentOrigin``'s, built once per test process when it is a source.
  static func binary() throws -> String { try built.get() }

  private static let built: Result<String, TestFailure> = {
    switch currentOrigin {
    case nil:
      return .failure(TestFailure("no aprsc: \(skipNote.rawValue)"))
    case .binary(let path):
      guard FileManager.default.isExecutableFile(atPath: path) else {
        return .failure(TestFailure("APRSC=\(path) is not an executable file"))
      }
      return .success(path)
    case .source(let source):
      let script = TestPaths.packageRoot + "/.ci/build-aprsc"
      do {
        let output = try runProcess(script, [source, TestPaths.packageRoot + "/.build/aprsc"], timeout: 600)
        let path = output.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        guard output.status == 0, FileManager.default.isExecutableFile(atPath: path) else {
          return .failure(TestFailure("building aprsc from \(source) failed:\n\(output.stderrText)"))
        }
        return .success(path)
      } catch let failure as TestFailure {
        return .failure(failure)
      } catch {
        return .failure(TestFailure("building aprsc: \(error)"))
      }
    }
  }()

  /// The unprivileged user aprsc runs as when the tests run as root (made once with `useradd -r` when missing);
  /// nil when they do not run as root (aprsc then runs as the test's own user).
  static func serviceUser() throws -> (name: String, uid: uid_t, gid: gid_t)? {
    guard getuid() == 0 else { return nil }
    try madeUser.get()
    guard let entry = getpwnam("aprsc") else { throw TestFailure("no user aprsc after useradd") }
    return ("aprsc", entry.pointee.pw_uid, entry.pointee.pw_gid)
  }

  private static let madeUser: Result<Void, TestFailure> = {
    if getpwnam("aprsc") != nil { return .success(()) }
    do {
      let output = try runProcess(
        "/usr/sbin/useradd", ["-r", "-s", "/usr/sbin/nologin", "aprsc"], timeout: 30)
      // 9: made meanwhile by another test process.
      guard output.status == 0 || output.status == 9 else {
        return .failure(TestFailure("useradd aprsc failed: \(output.stderrText)"))
      }
      return .success(())
    } catch {
      return .failure(TestFailure("useradd aprsc: \(error)"))
    }
  }()
}

/// A plain APRS-IS client (a station's app, another igate) on a real or fake server: logs in, sends lines, reads
/// lines with bounded waits. Blocking socket; every read has a deadline.
final class APRSISClient {
  private let fd: Int32
  private var buffer: [UInt8] = []

  /// Connects to `127.0.0.1:port`, reads the banner and logs in as `login` (with `filter` when given); throws
  /// unless the `# logresp` says verified (when `passcode` is the login's).
  init(port: Int, login: String, passcode: Int, filter: String? = nil, timeout: Double = 10) throws {
    fd = try connectLoopbackTCP(port: port)
    guard let banner = try readLine(timeout: timeout), banner.hasPrefix("#") else {
      close(fd)
      throw TestFailure("no banner from 127.0.0.1:\(port)")
    }
    var line = "user \(login) pass \(passcode) vers aprs-cloud-tests 1.0"
    if let filter { line += " filter " + filter }
    try send(line)
    while true {
      guard let answer = try readLine(timeout: timeout) else {
        close(fd)
        throw TestFailure("no logresp for \(login)")
      }
      if answer.hasPrefix("# logresp") {
        guard answer.contains(" verified") else {
          close(fd)
          throw TestFailure("login \(login) not verified: \(answer)")
        }
        break
      }
    }
  }

  deinit { close(fd) }

  /// Sends one line (CR LF appended).
  func send(_ line: String) throws { try sendAll(fd, Array((line + "\r\n").utf8)) }

  /// The next line without its line end; nil when nothing arrived within `timeout` s or the server closed.
  func readLine(timeout: Double) throws -> String? {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
      if let end = buffer.firstIndex(where: { $0 == 0x0A || $0 == 0x0D }) {
        let line = Array(buffer[..<end])
        buffer.removeSubrange(...end)
        if line.isEmpty { continue }
        return String(decoding: line, as: UTF8.self)
      }
      let left = deadline.timeIntervalSinceNow
      guard left > 0 else { return nil }
      var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&poller, 1, Int32(max(1, left * 1000))) > 0 else { continue }
      var chunk = [UInt8](repeating: 0, count: 4096)
      let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      guard count > 0 else { return nil }
      buffer += chunk[0..<count]
    }
  }

  /// Reads lines (keepalives skipped) until one satisfies `match`; nil after `timeout` s.
  func waitForLine(timeout: Double, _ match: (String) -> Bool) throws -> String? {
    let deadline = Date().addingTimeInterval(timeout)
    while deadline.timeIntervalSinceNow > 0 {
      guard let line = try readLine(timeout: deadline.timeIntervalSinceNow) else { return nil }
      if match(line) { return line }
    }
    return nil
  }
}
