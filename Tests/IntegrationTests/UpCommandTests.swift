import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A TCP listener held open on 127.0.0.1 (to make a port "in use").
private final class HeldPort {
  let fd: Int32
  let port: Int

  init() throws {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    self.fd = fd
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, listen(fd, 4) == 0 else {
      port = 0
      throw TestFailure("cannot hold a port")
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    port = Int(UInt16(bigEndian: address.sin_port))
  }

  deinit { close(fd) }
}

/// `aprs-cloud up` as a newcomer runs it: a real process on a temporary data directory and free ports,
/// started with Debian's usual umask 022 (its files must be private all the same).
private final class UpRun {
  let directory: String
  let data: String
  let port: Int
  let metricsPort: Int
  let process: Process
  var url: String { "http://127.0.0.1:\(port)" }
  var metricsURL: String { "http://127.0.0.1:\(metricsPort)/metrics" }
  let logPath: String
  var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

  /// `up` on a new temporary data directory (or `directory`'s `var`, kept from an earlier run). With `config`
  /// it gets `--config` with that INI text; without, it writes and uses its own starter (`make run`), and
  /// the environment keeps its listener on loopback.
  init(extraArguments: [String] = [], config text: String? = "", directory existing: String? = nil) throws {
    directory = try existing ?? makeTemporaryDirectory("up")
    data = directory + "/var"
    port = try freePort()
    metricsPort = try freePort()
    // The listener must stay on loopback: point it at a port nothing listens on (it backs off and retries).
    let servers = "127.0.0.1:\(try freePort())"
    var configArguments: [String] = []
    if let text {
      let config = directory + "/aprs-cloud.ini"
      try "[aprsis]\nservers = \(servers)\n[messaging.webpush]\nsubject = mailto:ops@example.org\n\(text)"
        .write(
          toFile: config, atomically: true, encoding: .utf8)
      configArguments = ["--config", config]
    }
    logPath = directory + "/up-\(port).log"
    // `exec` keeps the pid: the shell only sets the umask (and the environment).
    process = try TestStack.launch(
      "/bin/sh",
      [
        "-c",
        "umask 022; unset APRS_CLOUD_CONFIG; export APRS_CLOUD_APRSIS_SERVERS=\(servers); exec \"$0\" \"$@\"",
        try TestPaths.executable("aprs-cloud"),
        "up", "--http", "127.0.0.1:\(port)", "--metrics", "127.0.0.1:\(metricsPort)", "--data", data,
        "--nginx-dir", TestPaths.nginxDirectory,
      ] + configArguments + extraArguments,
      output: logPath)
  }

  /// The direct children of `up` named `name` (comm is cut to 15 characters).
  func children(named name: String) -> [Int32] {
    ProcessTable.children(of: process.processIdentifier).filter { ProcessTable.name(of: $0) == name }
  }

  /// Ends `up` if a test left it running, and removes the folder.
  func cleanUp() {
    if process.isRunning { TestStack.terminate(process) }
    try? FileManager.default.removeItem(atPath: directory)
  }
}

@Suite struct UpCommandTests {
  /// The supervisor's lifecycle, whatever state the responder is in: up starts nginx, holds the data
  /// directory, and on SIGTERM stops every process it started and exits 0.
  @Test func upStartsNginxAndStopsEverythingOnSIGTERM() throws {
    let up = try UpRun()
    defer { up.cleanUp() }
    let nginxAnswers = waitUntil(timeout: 30, interval: 0.05) {
      (try? Curl.request("GET", up.url + "/", timeout: 2))?.status == 200
    }
    try #require(nginxAnswers, "nginx did not come up:\n\(up.log)")
    // The web client at /, from the www/ folder beside the templates; other paths are the JSON 404.
    let page = try Curl.request("GET", up.url + "/")
    #expect(page.text.contains("<title>APRS messages</title>"), "\(page.text.prefix(200))")
    expectAPIAnswer(try Curl.request("GET", up.url + "/nothing"), status: 404)
    #expect(FileManager.default.fileExists(atPath: up.data + "/nginx.conf"))
    #expect(FileManager.default.fileExists(atPath: up.data + "/aprs-cloud.sqlite"))
    // Private under umask 022: the data directory, the database and what nginx and up write there.
    #expect(fileMode(up.data) == 0o700)
    for name in ["aprs-cloud.sqlite", "nginx.conf", "up.lock", "nginx-error.log"] {
      #expect(
        fileMode(up.data + "/" + name) == 0o600,
        "\(name): \(String(fileMode(up.data + "/" + name) ?? 0, radix: 8))")
    }
    #expect(up.children(named: "nginx").count == 1)
    #expect(waitUntil(timeout: 10) { up.children(named: "aprs-listener").count == 1 }, "\(up.log)")

    // A second `up` on the same data directory is refused.
    let second = try runProcess(
      try TestPaths.executable("aprs-cloud"),
      [
        "up", "--http", "127.0.0.1:\(try freePort())", "--metrics", "127.0.0.1:\(try freePort())",
        "--data", up.data, "--nginx-dir", TestPaths.nginxDirectory,
      ])
    #expect(second.status == 1)
    #expect(second.stderrText.contains("another `aprs-cloud up`"), "\(second.stderrText)")

    let started = ProcessTable.descendants(of: up.process.processIdentifier)
    #expect(!started.isEmpty)
    kill(up.process.processIdentifier, SIGTERM)
    let exited = waitUntil(timeout: 20) { !up.process.isRunning }
    try #require(exited, "up did not exit after SIGTERM:\n\(up.log)")
    up.process.waitUntilExit()
    #expect(up.process.terminationReason == .exit)
    #expect(up.process.terminationStatus == 0, "\(up.log)")
    let allGone = waitUntil(timeout: 5) { started.allSatisfy { !ProcessTable.isAlive($0) } }
    #expect(allGone, "left running: \(started.filter { ProcessTable.isAlive($0) })")
    #expect((try? Curl.request("GET", up.url + "/", timeout: 2)) == nil, "nothing listens any more")
    #expect(!FileManager.default.fileExists(atPath: up.data + "/fcgi.sock"))
  }

  /// End to end with the real responder: /health through nginx, the banner, a restart after a crash,
  /// and a clean stop.
  @Test func upServesTheAPIRestartsACrashedChildAndStopsOnSIGTERM() throws {
    let up = try UpRun()
    defer { up.cleanUp() }
    let healthy = waitUntil(timeout: 60, interval: 0.1) {
      (try? Curl.request("GET", up.url + "/health", timeout: 2))?.status == 200
    }
    try #require(healthy, "/health did not answer 200:\n\(up.log)")
    let health = try Curl.request("GET", up.url + "/health")
    expectAPIAnswer(health, status: 200, isError: false)
    let bannerShown = waitUntil(timeout: 5) { up.log.contains("aprs-cloud is up at \(up.url)") }
    #expect(bannerShown, "\(up.log)")
    #expect(up.log.contains("curl -s \(up.url)/v1/register"))
    #expect(up.log.contains(#""auth":"13023""#))
    #expect(up.log.contains("\(up.url)/v1/sync"))
    #expect(up.log.contains(up.metricsURL), "the start-up lines name the private metrics URL")
    // The tool as it was started: under `make run` that is .build/release/aprs-cloud, not one on PATH.
    let tool = try TestPaths.executable("aprs-cloud")
    #expect(up.log.contains("`\(tool) passcode CALL` prints yours"), "\(up.log)")

    // /metrics: on the private listener only.
    let scrape = try Curl.request("GET", up.metricsURL)
    #expect(scrape.status == 200 && scrape.text.contains("aprs_cloud_database_up 1"), "\(scrape.text)")
    expectAPIAnswer(try Curl.request("GET", up.url + "/metrics"), status: 404)

    // The banner's register example works.
    let register = try Curl.request(
      "POST", up.url + "/v1/register",
      body: Data(#"{"callsign":"N0CALL","ssid":0,"auth":"13023","wantHistory":true,"since":0}"#.utf8),
      headers: ["content-type: application/json"])
    expectAPIAnswer(register, status: 200, isError: false)

    // nginx's master dies hard: the supervisor logs it, clears its workers and starts a new one.
    let master = try #require(up.children(named: "nginx").first)
    kill(master, SIGKILL)
    let restarted = waitUntil(timeout: 30, interval: 0.1) {
      up.children(named: "nginx").contains { $0 != master }
        && (try? Curl.request("GET", up.url + "/health", timeout: 2))?.status == 200
    }
    #expect(restarted, "nginx was not restarted:\n\(up.log)")
    #expect(up.log.contains("nginx exited (signal 9); restarting"), "\(up.log)")

    // The responder too.
    let responder = try #require(up.children(named: "aprs-cloud-fcgi").first)
    kill(responder, SIGKILL)
    let responderBack = waitUntil(timeout: 30, interval: 0.1) {
      up.children(named: "aprs-cloud-fcgi").contains { $0 != responder }
        && (try? Curl.request("GET", up.url + "/health", timeout: 2))?.status == 200
    }
    #expect(responderBack, "the responder was not restarted:\n\(up.log)")

    let started = ProcessTable.descendants(of: up.process.processIdentifier)
    kill(up.process.processIdentifier, SIGTERM)
    let exited = waitUntil(timeout: 20) { !up.process.isRunning }
    try #require(exited, "up did not exit after SIGTERM:\n\(up.log)")
    up.process.waitUntilExit()
    #expect(up.process.terminationStatus == 0, "\(up.log)")
    let allGone = waitUntil(timeout: 5) { started.allSatisfy { !ProcessTable.isAlive($0) } }
    #expect(allGone, "left running: \(started.filter { ProcessTable.isAlive($0) })")
  }

  /// `make run` on a fresh machine: without --config, `up` writes DIR/aprs-cloud.ini once (private, Web Push on
  /// with this machine's contact), says so, gives it to both processes, and the listener runs with it (its
  /// VAPID key is what /v1/info shows); a second run keeps the file as the operator left it.
  @Test func withoutAConfigUpWritesAStarterOnceAndBothProcessesRunWithIt() throws {
    let first = try UpRun(config: nil)
    defer { first.cleanUp() }
    let starter = first.data + "/aprs-cloud.ini"
    let healthy = waitUntil(timeout: 60, interval: 0.1) {
      (try? Curl.request("GET", first.url + "/health", timeout: 2))?.status == 200
    }
    try #require(healthy, "/health did not answer 200:\n\(first.log)")
    #expect(fileMode(starter) == 0o600, "private under umask 022")
    let text = try String(contentsOfFile: starter, encoding: .utf8)
    #expect(text.contains("[messaging.webpush]\n"), "\(text)")
    let subject = try #require(
      text.split(separator: "\n").first { $0.hasPrefix("subject = mailto:") }.map { String($0.dropFirst(10)) }
    )
    #expect(
      first.log.contains("wrote a starter configuration to \(starter) (Web Push contact \(subject)"),
      "\(first.log)")
    #expect(waitUntil(timeout: 5) { first.log.contains("Configuration: \(starter)") }, "\(first.log)")
    // Both processes get it as --config.
    for name in ["aprs-cloud-fcgi", "aprs-listener"] {
      let pid = try #require(first.children(named: name).first, "\(name):\n\(first.log)")
      let arguments = try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8).split(
        separator: "\0")
      #expect(
        arguments.contains { $0 == "--config" } && arguments.contains { $0 == starter },
        "\(name): \(arguments)")
    }
    // The listener runs with Web Push on: it made the key, and the responder offers it.
    let offered = waitUntil(timeout: 30, interval: 0.1) {
      guard let info = (try? Curl.request("GET", first.url + "/v1/info", timeout: 2))?.jsonObject else {
        return false
      }
      return info.strings("features").contains("webpush") && info.string("vapidPublicKey") != nil
    }
    #expect(offered, "\(first.log)")
    #expect(fileMode(first.data + "/vapid.pem") == 0o600)
    kill(first.process.processIdentifier, SIGTERM)
    try #require(waitUntil(timeout: 20) { !first.process.isRunning }, "up did not stop:\n\(first.log)")
    first.process.waitUntilExit()

    // The operator edits it; the next run keeps every byte and writes nothing.
    let edited = text.replacingOccurrences(
      of: "subject = \(subject)", with: "subject = mailto:ops@example.org")
    try edited.write(toFile: starter, atomically: false, encoding: .utf8)
    let second = try UpRun(config: nil, directory: first.directory)
    defer { if second.process.isRunning { TestStack.terminate(second.process) } }
    let healthyAgain = waitUntil(timeout: 60, interval: 0.1) {
      (try? Curl.request("GET", second.url + "/health", timeout: 2))?.status == 200
    }
    try #require(healthyAgain, "/health did not answer 200:\n\(second.log)")
    #expect(waitUntil(timeout: 10) { second.children(named: "aprs-listener").count == 1 }, "\(second.log)")
    #expect(try String(contentsOfFile: starter, encoding: .utf8) == edited)
    #expect(!second.log.contains("wrote a starter"), "\(second.log)")
    #expect(fileMode(starter) == 0o600)
  }

  /// A configuration the listener would refuse stops `up` before anything starts, with the listener's message.
  @Test func aConfigTheListenerWouldRefuseStopsUpWithItsMessage() throws {
    let directory = try makeTemporaryDirectory("up")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let config = directory + "/aprs-cloud.ini"
    // Web Push asked for by hand without its contact (a file without [messaging.webpush] starts, Web Push off).
    try "[aprsis]\nservers = 127.0.0.1:\(try freePort())\n[messaging.webpush]\nenabled = true\n".write(
      toFile: config, atomically: true, encoding: .utf8)
    let result = try runProcess(
      try TestPaths.executable("aprs-cloud"),
      [
        "up", "--http", "127.0.0.1:\(try freePort())", "--metrics", "127.0.0.1:\(try freePort())", "--data",
        directory + "/var", "--nginx-dir", TestPaths.nginxDirectory, "--config", config,
      ])
    #expect(result.status == 1)
    #expect(
      result.stderrText.contains(
        "aprs-cloud up: the listener would not start: \(config): messaging.webpush.subject is not set: Web Push "
          + "is on by default and needs a contact for the push services: set `subject = mailto:you@example.org` "
          + "(or https://…) in [messaging.webpush], or `enabled = false` there"), "\(result.stderrText)")
    #expect(!FileManager.default.fileExists(atPath: directory + "/var/nginx.conf"), "nothing was started")

    // Named by $APRS_CLOUD_CONFIG instead: the same file, the same stop, and no starter of its own.
    var environment = ProcessInfo.processInfo.environment
    environment["APRS_CLOUD_CONFIG"] = config
    let named = try runProcess(
      try TestPaths.executable("aprs-cloud"),
      [
        "up", "--http", "127.0.0.1:\(try freePort())", "--metrics", "127.0.0.1:\(try freePort())", "--data",
        directory + "/var", "--nginx-dir", TestPaths.nginxDirectory,
      ], environment: environment)
    #expect(named.status == 1)
    #expect(
      named.stderrText.contains(
        "the listener would not start: \(config): messaging.webpush.subject is not set"),
      "\(named.stderrText)")
    #expect(!FileManager.default.fileExists(atPath: directory + "/var/aprs-cloud.ini"))
  }

  @Test func aPortInUseIsAClearErrorAndExit1() throws {
    let held = try HeldPort()
    let directory = try makeTemporaryDirectory("up")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let result = try runProcess(
      try TestPaths.executable("aprs-cloud"),
      [
        "up", "--http", "127.0.0.1:\(held.port)", "--metrics", "127.0.0.1:\(try freePort())", "--data",
        directory + "/var", "--nginx-dir",
        TestPaths.nginxDirectory,
      ])
    #expect(result.status == 1)
    #expect(result.stderrText.contains("127.0.0.1:\(held.port) is already in use"), "\(result.stderrText)")
    // The way out for both ways of starting it: the flag, and make's variable.
    #expect(
      result.stderrText.contains(
        "pick a free port with --http HOST:PORT (under `make run`: `make run HTTP=HOST:PORT`)"),
      "\(result.stderrText)")
    #expect(!FileManager.default.fileExists(atPath: directory + "/var"), "nothing was created")
  }

  @Test func missingNginxIsAClearErrorAndExit1() throws {
    let directory = try makeTemporaryDirectory("up")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var environment = ProcessInfo.processInfo.environment
    environment["APRS_CLOUD_NGINX"] = "/nonexistent/nginx"
    let result = try runProcess(
      try TestPaths.executable("aprs-cloud"),
      [
        "up", "--http", "127.0.0.1:\(try freePort())", "--metrics", "127.0.0.1:\(try freePort())", "--data",
        directory + "/var",
      ], environment: environment)
    #expect(result.status == 1)
    #expect(result.stderrText.contains("no nginx executable at /nonexistent/nginx"), "\(result.stderrText)")
  }

  @Test func badArgumentsAreUsageErrors() throws {
    let cli = try TestPaths.executable("aprs-cloud")
    for arguments in [
      ["up", "--http", "nope"], ["up", "extra"], ["up", "--port", "1"], ["up", "--http", "[::1]"],
      ["up", "--metrics", "0.0.0.0:9180"], ["up", "--http", "127.0.0.1:9000", "--metrics", "127.0.0.1:9000"],
    ] {
      let result = try runProcess(cli, arguments)
      #expect(result.status == 2, "\(arguments)")
      #expect(result.stderrText.contains("usage: aprs-cloud up"), "\(arguments)")
    }
    let help = try runProcess(cli, ["up", "--help"])
    #expect(help.status == 0 && help.stdoutText.contains("usage: aprs-cloud up"))
  }
}

/// The permission bits of a file, or nil when it does not exist.
func fileMode(_ path: String) -> mode_t? {
  var info = stat()
  return stat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
}
