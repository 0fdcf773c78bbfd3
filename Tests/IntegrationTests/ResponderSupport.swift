import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

// Helpers for the responder's process tests (ResponderCGITests, ResponderFastCGITests,
// ResponderShutdownTests): finding the binary, running it as CGI, starting it as a FastCGI
// server, and a small FastCGI client that can stop half-way through a request.

/// Where the built responder and the system tools are.
enum ResponderPaths {
  /// The folder holding `aprs-cloud-fcgi`, found by walking up from the test bundle's executable,
  /// so it is whatever scratch path the tests were built with.
  static let buildDirectory: String? = {
    var starts: [String] = []
    if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
      starts.append(exe)
    }
    if let first = CommandLine.arguments.first { starts.append(first) }
    starts.append(Bundle.main.bundleURL.path)
    for start in starts {
      var url = URL(fileURLWithPath: start).standardizedFileURL
      while url.path != "/" {
        url.deleteLastPathComponent()
        if FileManager.default.isExecutableFile(atPath: url.path + "/aprs-cloud-fcgi") { return url.path }
      }
    }
    return nil
  }()

  /// The responder executable.
  static func responder() throws -> String {
    let directory = try #require(
      buildDirectory, "no folder with a built aprs-cloud-fcgi above the test bundle")
    return directory + "/aprs-cloud-fcgi"
  }

  /// A tool from $PATH, /usr/bin or /usr/sbin.
  static func tool(_ name: String) throws -> String {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    for directory in path.split(separator: ":").map(String.init) + [
      "/usr/bin", "/usr/sbin", "/usr/local/bin",
    ] {
      let candidate = directory + "/" + name
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    throw ResponderTestError("\(name) is not installed")
  }

  /// A fresh, short (unix socket paths are limited to 107 bytes) temporary folder.
  static func temporaryDirectory(_ label: String) throws -> String {
    var template = Array("/tmp/aprs-\(label)-XXXXXX".utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
      throw ResponderTestError("mkdtemp failed")
    }
    return String(cString: made)
  }
}

struct ResponderTestError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// Polls `condition` every 10 ms until it holds or `timeout` seconds pass.
func responderWait(timeout: Double, _ condition: () throws -> Bool) rethrows -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while true {
    if try condition() { return true }
    if Date() >= deadline { return false }
    usleep(10_000)
  }
}

/// A CGI-style answer (`Status:` line, headers, blank line, body), from CGI stdout or FastCGI stdout.
struct ResponderReply {
  var status: Int
  var headers: [(name: String, value: String)]
  var body: [UInt8]

  func header(_ name: String) -> String? {
    headers.first { $0.name.lowercased() == name.lowercased() }?.value
  }

  var json: JSONValue? { try? JSONParser.parse(body) }

  /// The `error` text of a `{"error": …}` body.
  var errorText: String? {
    guard case .object(let object)? = json, case .string(let text)? = object["error"] else { return nil }
    return text
  }

  var bodyText: String { String(decoding: body, as: UTF8.self) }

  static func parse(_ output: [UInt8]) throws -> ResponderReply {
    let separator: [UInt8] = Array("\r\n\r\n".utf8)
    guard let end = output.indices.first(where: { output[$0...].starts(with: separator) }) else {
      throw ResponderTestError(
        "no blank line after the headers in \(String(decoding: output, as: UTF8.self))")
    }
    let head = String(decoding: output[..<end], as: UTF8.self)
    var headers: [(name: String, value: String)] = []
    for line in head.components(separatedBy: "\r\n") {
      guard let colon = line.firstIndex(of: ":") else { throw ResponderTestError("bad header line \(line)") }
      headers.append(
        (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
    }
    guard let statusLine = headers.first(where: { $0.name == "Status" })?.value,
      let status = Int(statusLine.prefix(3))
    else {
      throw ResponderTestError("no Status header in \(head)")
    }
    return ResponderReply(status: status, headers: headers, body: Array(output[(end + 4)...]))
  }
}

/// Runs the responder as a web server runs a CGI program: a clean environment, the body on
/// standard input, the answer on standard output.
enum ResponderCGI {
  struct Run {
    var exitStatus: Int32
    var stdout: [UInt8]
    var stderr: String
    func reply() throws -> ResponderReply { try ResponderReply.parse(stdout) }
  }

  static func run(
    directory: String, environment: [String: String], body: [UInt8] = [], arguments: [String] = []
  ) throws -> Run {
    let input = directory + "/stdin-\(UUID().uuidString)"
    let output = input + ".out"
    let errors = input + ".err"
    _ = FileManager.default.createFile(atPath: input, contents: Data(body))
    _ = FileManager.default.createFile(atPath: output, contents: nil)
    _ = FileManager.default.createFile(atPath: errors, contents: nil)
    defer {
      for path in [input, output, errors] { unlink(path) }
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try ResponderPaths.responder())
    process.arguments = arguments
    process.environment = ["GATEWAY_INTERFACE": "CGI/1.1", "SERVER_PROTOCOL": "HTTP/1.1"].merging(
      environment, uniquingKeysWith: { $1 })
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    process.standardInput = FileHandle(forReadingAtPath: input)
    process.standardOutput = FileHandle(forWritingAtPath: output)
    process.standardError = FileHandle(forWritingAtPath: errors)
    try process.run()
    guard responderWait(timeout: 30, { !process.isRunning }) else {
      process.interrupt()
      kill(process.processIdentifier, SIGKILL)
      throw ResponderTestError("the CGI run did not finish within 30 s")
    }
    process.waitUntilExit()
    return Run(
      exitStatus: process.terminationReason == .exit
        ? process.terminationStatus : 128 + process.terminationStatus,
      stdout: Array(FileManager.default.contents(atPath: output) ?? Data()),
      stderr: String(decoding: FileManager.default.contents(atPath: errors) ?? Data(), as: UTF8.self))
  }
}

/// The responder (or spawn-fcgi exec'ing it) as a long-running FastCGI server, its stderr in a file.
final class ResponderServer: @unchecked Sendable {
  let process = Process()
  let logPath: String

  /// Starts `executable arguments` in `directory` and waits for the start line in the log.
  init(executable: String, arguments: [String], directory: String, environment: [String: String] = [:]) throws
  {
    logPath = directory + "/responder-\(UUID().uuidString.prefix(8)).log"
    _ = FileManager.default.createFile(atPath: logPath, contents: nil)
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ["PATH": "/usr/bin:/bin"].merging(environment, uniquingKeysWith: { $1 })
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
    process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    process.standardError = FileHandle(forWritingAtPath: logPath)
    try process.run()
    guard responderWait(timeout: 30, { log.contains("aprs-cloud-fcgi started") || !process.isRunning }),
      process.isRunning
    else {
      stop()
      throw ResponderTestError("the responder did not start:\n\(log)")
    }
  }

  deinit { stop() }

  var pid: Int32 { process.processIdentifier }

  var log: String {
    String(decoding: FileManager.default.contents(atPath: logPath) ?? Data(), as: UTF8.self)
  }

  /// How many log lines contain `text`.
  func count(_ text: String) -> Int {
    log.split(separator: "\n").filter { $0.contains(text) }.count
  }

  /// Sends `signal` and waits (bounded) for the exit; the exit status, or nil if it did not exit.
  func stop(signal: Int32 = SIGTERM, timeout: Double = 20) -> Int32? {
    guard process.isRunning else { return exitStatus }
    kill(process.processIdentifier, signal)
    guard responderWait(timeout: timeout, { !process.isRunning }) else { return nil }
    return exitStatus
  }

  /// The exit status once exited (128 + signal for a signal death).
  var exitStatus: Int32? {
    guard !process.isRunning else { return nil }
    return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
  }

  private func stop() {
    if process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      _ = responderWait(timeout: 5) { !process.isRunning }
    }
  }
}

/// A FastCGI client connection that sends one request in as many steps as a test wants.
final class ResponderFastCGIConnection {
  enum Outcome {
    /// A whole answer, up to FCGI_END_REQUEST.
    case complete(ResponderReply)
    /// The connection ended before a single byte came back (refused while stopping).
    case noAnswer
    /// Some bytes, then the connection ended: a truncated answer.
    case broken(String)
  }

  let fd: Int32

  /// Connects to a unix socket path, or to `127.0.0.1:PORT` when `tcpPort` is given.
  init(unixPath: String? = nil, tcpPort: Int? = nil, timeoutSeconds: Int = 20) throws {
    if let tcpPort {
      fd = try connectLoopbackTCP(port: tcpPort)
    } else {
      let path = try #require(unixPath)
      fd = try connectUnixSocket(path)
    }
    var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
  }

  deinit { close(fd) }

  /// BEGIN_REQUEST (responder role, close when done) and the parameters.
  func begin(_ params: [(String, String)]) throws {
    try record(1, [0, 1, 0, 0, 0, 0, 0, 0])
    var encoded: [UInt8] = []
    for (name, value) in params {
      for length in [name.utf8.count, value.utf8.count] {
        if length < 128 {
          encoded.append(UInt8(length))
        } else {
          encoded += [
            UInt8(0x80 | (length >> 24)), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF),
            UInt8(length & 0xFF),
          ]
        }
      }
      encoded += Array(name.utf8) + Array(value.utf8)
    }
    try chunks(4, encoded)
    try record(4, [])
  }

  /// Part of the body (FCGI_STDIN).
  func send(_ body: [UInt8]) throws { try chunks(5, body) }

  /// The end of the body (an empty FCGI_STDIN record).
  func endBody() throws { try record(5, []) }

  /// Reads FCGI_STDOUT until FCGI_END_REQUEST or the end of the connection.
  func readReply() -> Outcome {
    var received: [UInt8] = []
    var stdout: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      // Whole records first.
      while received.count >= 8 {
        let length = Int(received[4]) << 8 | Int(received[5])
        let total = 8 + length + Int(received[6])
        guard received.count >= total else { break }
        let type = received[1]
        let content = received[8..<(8 + length)]
        received.removeFirst(total)
        if type == 6 { stdout += content }
        if type == 3 {
          do {
            return .complete(try ResponderReply.parse(stdout))
          } catch {
            return .broken("\(error)")
          }
        }
      }
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 {
        let reason = count == 0 ? "end of stream" : String(cString: strerror(errno))
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
          return .broken("timed out waiting for the answer")
        }
        return received.isEmpty && stdout.isEmpty
          ? .noAnswer : .broken("\(reason) after \(stdout.count) bytes")
      }
      received += buffer[0..<count]
    }
  }

  private func chunks(_ type: UInt8, _ bytes: [UInt8]) throws {
    var offset = 0
    while offset < bytes.count {
      let end = min(bytes.count, offset + 65_535)
      try record(type, Array(bytes[offset..<end]))
      offset = end
    }
  }

  private func record(_ type: UInt8, _ content: [UInt8]) throws {
    let header: [UInt8] = [1, type, 0, 1, UInt8(content.count >> 8), UInt8(content.count & 0xFF), 0, 0]
    try sendAll(fd, header + content)
  }

  /// The parameters nginx would pass for `method path` with `body`.
  static func params(
    _ method: String, _ path: String, body: [UInt8] = [], contentLength: String? = nil,
    extra: [(String, String)] = []
  ) -> [(String, String)] {
    var params: [(String, String)] = [
      ("GATEWAY_INTERFACE", "CGI/1.1"), ("SERVER_PROTOCOL", "HTTP/1.1"), ("REQUEST_METHOD", method),
      ("REQUEST_URI", path), ("DOCUMENT_URI", path.components(separatedBy: "?")[0]),
      ("SCRIPT_NAME", path.components(separatedBy: "?")[0]), ("REMOTE_ADDR", "127.0.0.1"),
    ]
    if let length = contentLength ?? (body.isEmpty ? nil : String(body.count)) {
      params.append(("CONTENT_LENGTH", length))
      params.append(("CONTENT_TYPE", "application/json"))
    }
    return params + extra
  }

  /// One whole request on a new connection.
  static func request(
    unixPath: String? = nil, tcpPort: Int? = nil, _ method: String, _ path: String, body: [UInt8] = [],
    contentLength: String? = nil
  ) throws -> Outcome {
    let connection = try ResponderFastCGIConnection(unixPath: unixPath, tcpPort: tcpPort)
    try connection.begin(params(method, path, body: body, contentLength: contentLength))
    try connection.send(body)
    try connection.endBody()
    let outcome = connection.readReply()
    if case .complete(let reply) = outcome { AnswerLog.record(method, path: path, reply) }
    return outcome
  }
}

extension ResponderFastCGIConnection.Outcome {
  /// The answer, or a test failure describing what came instead.
  func reply(sourceLocation: SourceLocation = #_sourceLocation) throws -> ResponderReply {
    switch self {
    case .complete(let reply): return reply
    case .noAnswer: throw ResponderTestError("no answer")
    case .broken(let reason): throw ResponderTestError("broken answer: \(reason)")
    }
  }
}

/// The body of a sync for a station nobody registered: always 200 with an empty list.
let responderSyncBody = Array(#"{"callsign":"N0CALL","ssid":0,"since":0,"auth":"13023"}"#.utf8)

/// A TCP port nobody listens on right now.
func responderFreePort() throws -> Int {
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  defer { close(fd) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = 0
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  let bound = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
    }
  }
  guard bound else { throw ResponderTestError("cannot find a free port") }
  return Int(UInt16(bigEndian: address.sin_port))
}

/// A flag one task sets and another reads.
final class ResponderFlag: @unchecked Sendable {
  private let lock = NSLock()
  private var value = false

  var isSet: Bool { lock.withLock { value } }
  func set() { lock.withLock { value = true } }
}

/// A body run on its own thread (blocking socket clients must not sit on the few threads of the
/// concurrency pool, which the test bodies share), with a bounded wait for its result.
final class ResponderThread<Result: Sendable>: @unchecked Sendable {
  private let condition = NSCondition()
  private var result: Result?

  init(_ body: @escaping @Sendable () -> Result) {
    let thread = Thread { [self] in
      let value = body()
      condition.lock()
      result = value
      condition.broadcast()
      condition.unlock()
    }
    thread.start()
  }

  /// The result, or nil if the body has not finished within `timeout` seconds.
  func join(timeout: Double = 60) -> Result? {
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while result == nil {
      if !condition.wait(until: deadline) { break }
    }
    return result
  }
}
