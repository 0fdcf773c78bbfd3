import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The real stack on loopback for one test: nginx with the project's own configuration (rendered by
/// `aprs-cloud nginx-config` into a temporary prefix, listening on a free high port, and its private
/// `/metrics` listener on another) in front of a responder on a unix socket, with a fresh database.
///
/// `stop()` (also run by `deinit`) ends every process it started, SIGTERM then SIGKILL, so a failing
/// test leaves nothing behind. Every wait is bounded.
final class TestStack: @unchecked Sendable {
  /// What answers on the FastCGI socket.
  enum Responder {
    /// The real `aprs-cloud-fcgi`, with a fresh database in the stack's folder.
    case real(arguments: [String] = [])
    /// An in-process fake that records requests and answers as told (nginx-only tests).
    case fake(FakeFastCGI.Handler)
    /// Nothing: nginx answers 502.
    case none
  }

  let directory: String
  private(set) var port = 0
  /// The private listener that alone serves `/metrics`.
  private(set) var metricsPort = 0
  let socketPath: String
  let databasePath: String
  var baseURL: String { "http://127.0.0.1:\(port)" }
  var metricsURL: String { "http://127.0.0.1:\(metricsPort)/metrics" }

  private(set) var fake: FakeFastCGI?
  private var responder: Process?
  private var nginx: Process?
  private let lock = NSLock()
  private var stopped = false

  /// Starts the stack and waits until nginx answers `/health` (200 from a real responder; any
  /// answer otherwise). `readTimeout` is nginx's wait for the responder before a 504; `databasePath` puts the
  /// database elsewhere than the stack's folder (a small file system of its own).
  init(_ responderKind: Responder = .real(), readTimeout: Int = 60, databasePath: String? = nil) throws {
    directory = try makeTemporaryDirectory("stack")
    socketPath = directory + "/fcgi.sock"
    self.databasePath = databasePath ?? directory + "/aprs-cloud.sqlite"
    var lastError: Error?
    var started = false
    // A port found free can be taken by someone else before nginx binds it: try a few.
    for _ in 0..<4 {
      do {
        port = try freePort()
        metricsPort = try freePort()
        try startNginx(port: port, metricsPort: metricsPort, readTimeout: readTimeout)
        started = true
        break
      } catch {
        lastError = error
      }
    }
    guard started else {
      cleanUp()
      throw lastError ?? TestFailure("nginx did not start")
    }
    do {
      switch responderKind {
      case .real(let arguments):
        try startResponder(arguments)
        try waitForHealth { $0 == 200 }
      case .fake(let handler):
        fake = try FakeFastCGI(socketPath: socketPath, handler: handler)
        try waitForHealth { _ in true }
      case .none:
        try waitForHealth { _ in true }
      }
    } catch {
      stop()
      throw error
    }
  }

  deinit { stop() }

  // MARK: Requests

  /// `POST path` with a JSON body.
  func post(_ path: String, json: String, headers: [String] = [], arguments: [String] = []) throws
    -> HTTPResponse
  {
    logged(
      "POST", path,
      try Curl.request(
        "POST", baseURL + path, body: Data(json.utf8), headers: ["content-type: application/json"] + headers,
        arguments: arguments))
  }

  /// `POST path` with raw bytes.
  func post(_ path: String, body: Data, headers: [String] = [], arguments: [String] = []) throws
    -> HTTPResponse
  {
    logged(
      "POST", path,
      try Curl.request("POST", baseURL + path, body: body, headers: headers, arguments: arguments))
  }

  /// `GET /metrics` (or another method) from the private metrics listener.
  func metrics(method: String = "GET", headers: [String] = [], arguments: [String] = []) throws
    -> HTTPResponse
  {
    try Curl.request(method, metricsURL, headers: headers, arguments: arguments)
  }

  /// `GET path` (or another body-less method).
  func get(_ path: String, method: String = "GET", headers: [String] = [], arguments: [String] = []) throws
    -> HTTPResponse
  {
    logged(method, path, try Curl.request(method, baseURL + path, headers: headers, arguments: arguments))
  }

  /// `response`, written down for the check against docs/openapi.yaml (AnswerLog) unless a fake responder
  /// gave it.
  private func logged(_ method: String, _ path: String, _ response: HTTPResponse) -> HTTPResponse {
    if fake == nil { AnswerLog.record(method, baseURL + path, response) }
    return response
  }

  // MARK: Lifecycle

  /// Stops the responder (real or fake) and leaves nginx running: the next API call gets nginx's 502.
  func stopResponder() {
    lock.lock()
    let process = responder
    responder = nil
    let fakeResponder = fake
    lock.unlock()
    if let process { Self.terminate(process) }
    fakeResponder?.stop()
  }

  /// Ends everything and removes the folder (kept when APRS_CLOUD_KEEP_TEST_DIRS is set).
  func stop() {
    lock.lock()
    guard !stopped else {
      lock.unlock()
      return
    }
    stopped = true
    lock.unlock()
    stopResponder()
    if let nginx { Self.terminate(nginx) }
    cleanUp()
  }

  /// The end of nginx's error log and the responder's log, for failure messages.
  var logs: String {
    var text = ""
    for name in ["nginx-error.log", "responder.log", "nginx.out"] {
      let contents = (try? String(contentsOfFile: directory + "/" + name, encoding: .utf8)) ?? ""
      text += "--- \(name)\n" + String(contents.suffix(3000))
    }
    return text
  }

  private func cleanUp() {
    if ProcessInfo.processInfo.environment["APRS_CLOUD_KEEP_TEST_DIRS"] == nil {
      try? FileManager.default.removeItem(atPath: directory)
    }
  }

  private func startNginx(port: Int, metricsPort: Int, readTimeout: Int) throws {
    let rendered = try runProcess(
      try TestPaths.executable("aprs-cloud"),
      [
        "nginx-config", "--http", "127.0.0.1:\(port)", "--metrics", "127.0.0.1:\(metricsPort)",
        "--data", directory, "--socket", socketPath,
        "--nginx-dir", TestPaths.nginxDirectory, "--read-timeout", String(readTimeout),
      ])
    guard rendered.status == 0 else {
      throw TestFailure("aprs-cloud nginx-config failed: \(rendered.stderrText)")
    }
    let config = directory + "/nginx.conf"
    try rendered.stdout.write(to: URL(fileURLWithPath: config))
    let process = try Self.launch(
      try TestPaths.nginx(), ["-p", directory + "/", "-c", config, "-e", directory + "/nginx-error.log"],
      output: directory + "/nginx.out")
    // Up when it answers; gone when it could not bind (a port taken meanwhile).
    let answered = waitUntil(timeout: 15) {
      !process.isRunning || (try? Curl.request("GET", "http://127.0.0.1:\(port)/", timeout: 2)) != nil
    }
    guard answered, process.isRunning else {
      Self.terminate(process)
      throw TestFailure("nginx did not start on port \(port):\n\(logs)")
    }
    nginx = process
  }

  private func startResponder(_ arguments: [String]) throws {
    responder = try Self.launch(
      try TestPaths.executable("aprs-cloud-fcgi"),
      ["--listen", socketPath, "--db", databasePath] + arguments, output: directory + "/responder.log")
  }

  private func waitForHealth(_ accept: (Int) -> Bool) throws {
    var last = "no answer"
    let healthy = waitUntil(timeout: 20, interval: 0.05) {
      guard let response = try? Curl.request("GET", baseURL + "/health", timeout: 5) else { return false }
      last = "\(response.status) \(response.text)"
      return accept(response.status)
    }
    guard healthy else { throw TestFailure("/health did not become ready (last: \(last))\n\(logs)") }
  }

  /// Starts a process with its output appended to `output`.
  static func launch(
    _ path: String, _ arguments: [String], output: String, environment: [String: String]? = nil
  ) throws -> Process {
    _ = FileManager.default.createFile(atPath: output, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if let environment { process.environment = environment }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = handle
    process.standardError = handle
    try process.run()
    return process
  }

  /// SIGTERM, then SIGKILL (to it and whatever it started) if it is still there after 10 s.
  static func terminate(_ process: Process) {
    guard process.isRunning else {
      process.waitUntilExit()
      return
    }
    let pid = process.processIdentifier
    let descendants = ProcessTable.descendants(of: pid).map { ($0, ProcessTable.name(of: $0)) }
    kill(pid, SIGTERM)
    if !waitUntil(timeout: 10, { !process.isRunning }) {
      kill(pid, SIGKILL)
    }
    process.waitUntilExit()
    // Leftovers (nginx workers after a killed master): only if the pid still names the same program.
    for (child, name) in descendants where ProcessTable.isAlive(child) && ProcessTable.name(of: child) == name
    {
      kill(child, SIGKILL)
    }
  }
}
