import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Where the project and its built executables are.
enum TestPaths {
  /// The package root (the folder with Package.swift), from this file's path.
  static let packageRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
  }()

  /// The project's nginx folder: the real templates, never a test copy.
  static var nginxDirectory: String { packageRoot + "/nginx" }

  /// The folder with the built executables: found by walking up from the test bundle's executable
  /// (whatever scratch path the tests were built in) to the first folder holding `aprs-cloud`.
  static let buildDirectory: String? = {
    var candidates: [String] = []
    if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
      candidates.append(exe)
    }
    if let first = CommandLine.arguments.first { candidates.append(first) }
    for start in candidates {
      var url = URL(fileURLWithPath: start).standardizedFileURL
      while url.path != "/" {
        url.deleteLastPathComponent()
        if FileManager.default.isExecutableFile(atPath: url.path + "/aprs-cloud") { return url.path }
      }
    }
    return nil
  }()

  /// A built executable (`aprs-cloud`, `aprs-cloud-fcgi`), or a test failure saying it is missing.
  static func executable(_ name: String) throws -> String {
    let directory = try #require(buildDirectory, "no folder with a built aprs-cloud above the test bundle")
    let path = directory + "/" + name
    try #require(FileManager.default.isExecutableFile(atPath: path), "\(path) is not built")
    return path
  }

  /// `nginx`, from $PATH or /usr/sbin.
  static func nginx() throws -> String {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    for directory in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin"] {
      let candidate = directory + "/nginx"
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    throw TestFailure("nginx is not installed (apt-get install nginx-light)")
  }
}

/// A TCP port that was free a moment ago (bind to port 0 and ask the kernel which it chose).
func freePort() throws -> Int {
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  guard fd >= 0 else { throw TestFailure("socket failed") }
  defer { close(fd) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = 0
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  let bound = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
    }
  }
  guard bound == 0 else { throw TestFailure("bind to port 0 failed") }
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  let named = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
  }
  guard named == 0 else { throw TestFailure("getsockname failed") }
  return Int(UInt16(bigEndian: address.sin_port))
}

/// Polls `condition` every few milliseconds until it holds or `timeout` seconds passed.
@discardableResult
func waitUntil(timeout: Double, interval: Double = 0.02, _ condition: () throws -> Bool) rethrows -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while true {
    if try condition() { return true }
    if Date() > deadline { return false }
    usleep(useconds_t(interval * 1_000_000))
  }
}

/// The result of a finished process.
struct ProcessOutput {
  var status: Int32
  var stdout: Data
  var stderr: Data
  var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
  var stderrText: String { String(decoding: stderr, as: UTF8.self) }
}

/// Runs a program to completion (killed after `timeout` seconds), its output captured in files so a
/// chatty program can never block on a full pipe.
func runProcess(
  _ path: String, _ arguments: [String], environment: [String: String]? = nil, timeout: Double = 30
) throws -> ProcessOutput {
  let directory = try makeTemporaryDirectory("run")
  defer { try? FileManager.default.removeItem(atPath: directory) }
  let outPath = directory + "/out"
  let errPath = directory + "/err"
  _ = FileManager.default.createFile(atPath: outPath, contents: nil)
  _ = FileManager.default.createFile(atPath: errPath, contents: nil)
  // posix_spawn, not Foundation's Process: see SpawnedProcess (a crash of Process.run on Linux).
  let process = try SpawnedProcess(
    path, arguments, environment: environment, stdout: outPath, stderr: errPath)
  guard let status = process.wait(timeoutSeconds: timeout) else {
    process.kill()
    throw TestFailure("\(path) \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
  }
  return ProcessOutput(
    status: status,
    stdout: FileManager.default.contents(atPath: outPath) ?? Data(),
    stderr: FileManager.default.contents(atPath: errPath) ?? Data())
}

/// One HTTP answer as curl saw it.
struct HTTPResponse: JSONAnswer {
  var status: Int
  /// Header names in lower case, values in order of appearance.
  var headers: [(name: String, value: String)]
  var body: Data
  /// The protocol of the status line (`HTTP/1.1`, `HTTP/2`).
  var version: String

  var text: String { String(decoding: body, as: UTF8.self) }

  /// Every value of header `name` (case-insensitive).
  func values(_ name: String) -> [String] {
    headers.filter { $0.name == name.lowercased() }.map(\.value)
  }

  /// The single value of header `name`, or nil.
  func header(_ name: String) -> String? { values(name).first }

}

/// An answer whose body may be a JSON object (one request's, or one of a curl batch's).
protocol JSONAnswer {
  var body: Data { get }
}

extension JSONAnswer {
  /// The body as a JSON object, or nil when it is not one.
  var jsonObject: JSONObject? {
    guard case .object(let object)? = try? JSONParser.parse(Array(body)) else { return nil }
    return object
  }

  /// The `error` string of a JSON error body.
  var errorMessage: String? {
    guard case .string(let message)? = jsonObject?["error"] else { return nil }
    return message
  }
}

/// curl as the HTTP client.
enum Curl {
  /// Sends one request to `url`. `body` is sent as-is (`--data-binary`); `arguments` go to curl
  /// before the URL (`--http2`, `-k`, `-H …`).
  static func request(
    _ method: String, _ url: String, body: Data? = nil, headers: [String] = [], arguments: [String] = [],
    timeout: Double = 20
  ) throws -> HTTPResponse {
    let directory = try makeTemporaryDirectory("curl")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var args = ["-s", "-S", "-X", method, "-D", directory + "/headers", "-o", directory + "/body"]
    args += ["-w", "%{http_code}", "--max-time", String(Int(timeout))]
    if let body {
      _ = FileManager.default.createFile(atPath: directory + "/request", contents: body)
      args += ["--data-binary", "@" + directory + "/request"]
    }
    for header in headers { args += ["-H", header] }
    args += arguments + [url]
    let output = try runProcess("/usr/bin/curl", args, timeout: timeout + 5)
    guard output.status == 0, let status = Int(output.stdoutText) else {
      throw TestFailure("curl \(method) \(url) failed (\(output.status)): \(output.stderrText)")
    }
    let rawHeaders = String(
      decoding: FileManager.default.contents(atPath: directory + "/headers") ?? Data(), as: UTF8.self)
    // With `100 Continue` there are several header blocks; the last one belongs to the answer.
    let blocks = rawHeaders.components(separatedBy: "\r\n\r\n").filter { !$0.isEmpty }
    let lines = (blocks.last ?? "").components(separatedBy: "\r\n")
    let version = lines.first?.split(separator: " ").first.map(String.init) ?? ""
    var headerList: [(name: String, value: String)] = []
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      let name = line[..<colon].lowercased()
      let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      headerList.append((name, value))
    }
    // A HEAD answer has no body; with `--head` curl writes the header block where the body goes.
    let body = method == "HEAD" ? Data() : FileManager.default.contents(atPath: directory + "/body") ?? Data()
    return HTTPResponse(status: status, headers: headerList, body: body, version: version)
  }

  /// Sends the same request `count` times over one curl process (one connection, sequentially) and
  /// returns the status codes in order.
  static func statuses(
    _ method: String, _ url: String, count: Int, body: Data? = nil, arguments: [String] = [],
    timeout: Double = 60
  ) throws -> [Int] {
    let directory = try makeTemporaryDirectory("curl")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var args = ["-s", "-S", "-X", method, "-w", "%{http_code}\\n", "--max-time", String(Int(timeout))]
    if let body {
      _ = FileManager.default.createFile(atPath: directory + "/request", contents: body)
      args += ["--data-binary", "@" + directory + "/request", "-H", "content-type: application/json"]
    }
    args += arguments
    for _ in 0..<count { args += [url, "-o", "/dev/null"] }
    let output = try runProcess("/usr/bin/curl", args, timeout: timeout + 5)
    return output.stdoutText.split(separator: "\n").compactMap { Int($0) }
  }
}

/// Processes as /proc shows them.
enum ProcessTable {
  /// The pids whose parent is `parent`.
  static func children(of parent: Int32) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { Int32($0) }.filter { parentPid(of: $0) == parent }
  }

  /// A process and all its descendants' pids.
  static func descendants(of pid: Int32) -> [Int32] {
    var result: [Int32] = []
    var queue = children(of: pid)
    while let next = queue.popLast() {
      result.append(next)
      queue += children(of: next)
    }
    return result
  }

  /// True while `pid` exists and is not a zombie.
  static func isAlive(_ pid: Int32) -> Bool {
    guard let stat = statFields(pid) else { return false }
    return stat.state != "Z" && stat.state != "X"
  }

  static func parentPid(of pid: Int32) -> Int32? { statFields(pid)?.parent }

  /// The command name (`comm`) of a process.
  static func name(of pid: Int32) -> String? {
    (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(
      in: .whitespacesAndNewlines)
  }

  private static func statFields(_ pid: Int32) -> (state: String, parent: Int32)? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = text.lastIndex(of: ")")
    else { return nil }
    // "pid (comm) S ppid …": the comm may contain spaces and parentheses; fields follow the last ')'.
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count >= 2, let parent = Int32(fields[1]) else { return nil }
    return (String(fields[0]), parent)
  }
}

/// The script that makes the test run's throwaway CA, server certificate and push credentials in a folder.
let fakeCredentialsScript = TestPaths.packageRoot + "/Tests/fakes/make_push_credentials.sh"

/// A new folder named after `label` with fresh credentials for a fake service (``fakeCredentialsScript``).
func makeFakeCredentials(_ label: String) throws -> String {
  let directory = try makeTemporaryDirectory(label)
  let made = try runProcess("/bin/sh", [fakeCredentialsScript, directory])
  guard made.status == 0 else { throw TestFailure("credentials: \(made.stderrText)") }
  return directory
}

/// The test venv's python (`make deps-test`), which has the fakes' PyPI packages.
func testPython() throws -> String {
  let python = TestPaths.packageRoot + "/.build/pyenv-test/bin/python"
  guard FileManager.default.isExecutableFile(atPath: python) else {
    throw TestFailure("\(python) is missing: run `make deps-test`")
  }
  return python
}
