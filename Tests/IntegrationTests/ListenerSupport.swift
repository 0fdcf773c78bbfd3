import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The fake APRS-IS server (`Tests/fakes/aprsis_fake.py`) for one test, with a client for its control API.
/// `stop()` (also run by `deinit`) ends it.
final class FakeAPRSIS: @unchecked Sendable {
  let directory: String
  private(set) var port = 0
  private(set) var controlPort = 0
  private let process: Process
  private var control: Int32 = -1
  private var pending: [UInt8] = []
  private let lock = NSLock()

  /// Starts the fake (user port and control port) and waits (at most 15 s) until it is ready.
  init(keepalive: Int = 20, arguments: [String] = []) throws {
    directory = try makeTemporaryDirectory("aprsis")
    let ready = directory + "/ready.json"
    process = try TestStack.launch(
      "/usr/bin/env",
      [
        "python3", TestPaths.packageRoot + "/Tests/fakes/aprsis_fake.py", "--port", "0", "--control-port",
        "0", "--keepalive", String(keepalive), "--ready-file", ready,
      ] + arguments, output: directory + "/fake.log")
    guard
      waitUntil(timeout: 15, { FileManager.default.fileExists(atPath: ready) || !process.isRunning }),
      let data = FileManager.default.contents(atPath: ready),
      case .object(let object)? = try? JSONParser.parse(Array(data))
    else {
      stop()
      throw TestFailure("the APRS-IS fake did not start:\n\(log)")
    }
    port = object.int("port") ?? 0
    controlPort = object.int("control_port") ?? 0
    try connectControl()
  }

  deinit { stop() }

  var log: String { (try? String(contentsOfFile: directory + "/fake.log", encoding: .utf8)) ?? "" }

  func stop() {
    lock.lock()
    if control >= 0 { close(control) }
    control = -1
    lock.unlock()
    // The fake keeps nothing worth a graceful exit, and a process started by the test runner may inherit a
    // blocked SIGTERM (asyncio then never sees it): SIGKILL at once.
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    try? FileManager.default.removeItem(atPath: directory)
  }

  private func connectControl() throws {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(controlPort).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close(fd)
      throw TestFailure("cannot connect to the fake's control port \(controlPort)")
    }
    var timeout = timeval(tv_sec: 150, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    control = fd
  }

  /// Sends one control command and returns its answer (an `{"ok":false}` answer is returned too).
  @discardableResult
  func command(_ request: [String: Any]) throws -> JSONObject {
    lock.lock()
    defer { lock.unlock() }
    var line = try JSONSerialization.data(withJSONObject: request)
    line.append(0x0A)
    let written = line.withUnsafeBytes { send(control, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    guard written == line.count else { throw TestFailure("control write failed") }
    while !pending.contains(0x0A) {
      var buffer = [UInt8](repeating: 0, count: 65_536)
      let count = buffer.withUnsafeMutableBytes { recv(control, $0.baseAddress, $0.count, 0) }
      guard count > 0 else {
        throw TestFailure("the fake's control connection ended (\(request["cmd"] ?? ""))")
      }
      pending += buffer[0..<count]
    }
    let end = pending.firstIndex(of: 0x0A)!
    let answer = Array(pending[..<end])
    pending.removeSubrange(...end)
    guard case .object(let object) = try JSONParser.parse(answer) else {
      throw TestFailure("bad control answer")
    }
    return object
  }

  /// Injects packets as if they arrived from the network; returns how many deliveries were made.
  @discardableResult
  func inject(_ lines: [String]) throws -> Int {
    let answer = try command(["cmd": "inject", "lines": lines])
    guard answer.bool("ok") == true else { throw TestFailure("inject failed: \(answer)") }
    return answer.int("delivered") ?? 0
  }

  /// Waits (up to `timeout` s) until the fake's counter `what` reaches `count`; false on timeout.
  func wait(_ what: String, count: Int, timeout: Double = 10) throws -> Bool {
    try command(["cmd": "wait", "what": what, "count": count, "timeout": timeout]).bool("ok") == true
  }

  /// The connected clients.
  func clients() throws -> [JSONObject] { try command(["cmd": "clients"]).objects("clients") }

  /// The logged-in client's current filter (the last one that logged in).
  func currentFilter() throws -> String? {
    try clients().last { $0.bool("logged_in") == true }?.string("filter")
  }

  /// Every packet line clients sent.
  func transmitted() throws -> [JSONObject] { try command(["cmd": "transmitted"]).objects("transmitted") }

  /// The ACK lines clients sent (as text), in order.
  func ackLines() throws -> [String] {
    try transmitted().compactMap { $0.string("line") }.filter { $0.contains(":ack") }
  }

  func advance(_ seconds: Int) throws { try command(["cmd": "advance", "seconds": seconds]) }

  /// Logresps sent so far.
  func logins() throws -> Int {
    try command(["cmd": "wait", "what": "login", "count": 0, "timeout": 1]).int("count") ?? 0
  }
}

extension JSONObject {
  func int(_ key: String) -> Int? {
    if case .number(let number)? = self[key] { return number.int64.map { Int($0) } }
    return nil
  }
  func bool(_ key: String) -> Bool? {
    if case .bool(let value)? = self[key] { return value }
    return nil
  }
  func string(_ key: String) -> String? {
    if case .string(let value)? = self[key] { return value }
    return nil
  }
  func objects(_ key: String) -> [JSONObject] {
    guard case .array(let values)? = self[key] else { return [] }
    return values.compactMap { if case .object(let object) = $0 { object } else { nil } }
  }
  func strings(_ key: String) -> [String] {
    guard case .array(let values)? = self[key] else { return [] }
    return values.compactMap { if case .string(let text) = $0 { text } else { nil } }
  }
}

/// One `aprs-listener` process on a database, with its config in a temporary folder and its log captured.
final class ListenerProcess: @unchecked Sendable {
  let directory: String
  let database: String
  let configPath: String
  let logPath: String
  private let process: Process

  /// Starts `aprs-listener --db DATABASE --config CONFIG` (+ `arguments`); `config` is INI text.
  /// `environment` (nil: the test's own) is the whole environment of the process.
  init(
    database: String, config: String, arguments: [String] = [], label: String = "listener",
    environment: [String: String]? = nil
  ) throws {
    directory = try makeTemporaryDirectory(label)
    self.database = database
    configPath = directory + "/listener.ini"
    logPath = directory + "/listener.log"
    try config.write(toFile: configPath, atomically: true, encoding: .utf8)
    process = try TestStack.launch(
      try TestPaths.executable("aprs-listener"), ["--db", database, "--config", configPath] + arguments,
      output: logPath, environment: environment)
  }

  deinit { stop() }

  var pid: Int32 { process.processIdentifier }
  var isRunning: Bool { process.isRunning }
  var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

  /// Waits until the log contains `text`.
  func waitForLog(_ text: String, timeout: Double = 10) -> Bool {
    waitUntil(timeout: timeout, interval: 0.02) { log.contains(text) }
  }

  /// SIGTERM, then waits (at most `timeout` s) for the exit; returns the status, nil when it had to be killed.
  @discardableResult
  func terminate(timeout: Double = 15) -> Int32? {
    guard process.isRunning else { return process.terminationStatus }
    kill(process.processIdentifier, SIGTERM)
    if waitUntil(timeout: timeout, { !process.isRunning }) {
      process.waitUntilExit()
      return process.terminationStatus
    }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    return nil
  }

  /// `kill -9`.
  func killHard() {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
  }

  /// Waits for the exit on its own; the status, or nil on timeout.
  func waitForExit(timeout: Double) -> Int32? {
    guard waitUntil(timeout: timeout, { !process.isRunning }) else { return nil }
    process.waitUntilExit()
    return process.terminationStatus
  }

  func stop() {
    if process.isRunning { _ = terminate(timeout: 10) }
    if ProcessInfo.processInfo.environment["APRS_CLOUD_KEEP_TEST_DIRS"] == nil {
      try? FileManager.default.removeItem(atPath: directory)
    }
  }

  /// The listener's INI for a fake server (tests' short timings). `webPush` is the body of `[messaging.webpush]`:
  /// off unless a test pushes through it (on by default, Web Push without its `subject` is off with a warning).
  static func config(
    fake: FakeAPRSIS, login: String? = "N0CALL-10", passcode: Int? = 13023, extraAPRSIS: String = "",
    extraListener: String = "", webPush: String = "enabled = false\n"
  ) -> String {
    config(
      aprsisPort: fake.port, login: login, passcode: passcode, extraAPRSIS: extraAPRSIS,
      extraListener: extraListener, webPush: webPush)
  }

  /// The listener's INI for an APRS-IS server on `127.0.0.1:aprsisPort` (the fake or the real aprsc).
  /// `reconnect` sets the backoff keys (tests' short ones by default; "" for the production defaults).
  static func config(
    aprsisPort: Int, login: String? = "N0CALL-10", passcode: Int? = 13023, extraAPRSIS: String = "",
    extraListener: String = "", webPush: String = "enabled = false\n",
    reconnect: String = "reconnectDelay = 100ms\nmaxReconnectDelay = 1s\n"
  ) -> String {
    var text = "[aprsis]\nservers = 127.0.0.1:\(aprsisPort)\n"
    if let login { text += "login = \(login)\n" }
    if let passcode { text += "passcode = \(passcode)\n" }
    text += reconnect + extraAPRSIS
    text += "\n[listener]\npublishInterval = 100ms\nregistrationPoll = 100ms\nleaseTtl = 2s\n" + extraListener
    text += "\n[messaging.webpush]\n" + webPush
    return text + "\n[server]\nlogLevel = debug\n"
  }
}

/// The database through the `sqlite3` command-line tool (the test bundle does not link the store).
struct SQLiteFile {
  let path: String

  /// Runs SQL (with a busy timeout) and returns the output, one row a line, columns separated by `|`.
  @discardableResult
  func run(_ sql: String) throws -> String {
    let directory = try makeTemporaryDirectory("sql")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let script = directory + "/script.sql"
    try (".timeout 10000\n" + sql + "\n").write(toFile: script, atomically: true, encoding: .utf8)
    let output = try runProcess("/usr/bin/sqlite3", [path, ".read " + script], timeout: 60)
    guard output.status == 0 else { throw TestFailure("sqlite3 failed: \(output.stderrText)") }
    return output.stdoutText
  }

  func int(_ sql: String) throws -> Int {
    Int(try run(sql).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
  }

  /// `listener.<key>` from the meta table.
  func meta(_ key: String) throws -> String? {
    let value = try run("SELECT value FROM meta WHERE key = 'listener.\(key)';")
    return value.isEmpty ? nil : value.trimmingCharacters(in: .newlines)
  }

  /// Registers stations directly (as /v1/register would: registered and heard from now).
  func register(_ addresses: [String], ackMessages: Bool = false) throws {
    guard !addresses.isEmpty else { return }
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    var sql = "BEGIN IMMEDIATE;\n"
    for address in addresses {
      let parts = address.split(separator: "-")
      let ssid = parts.count > 1 ? String(parts[1]) : "0"
      sql +=
        "INSERT INTO stations (address, base, ssid, platform, ack_messages, registered_at, heartbeat_at) VALUES "
        + "('\(address)', '\(parts[0])', \(ssid), NULL, \(ackMessages ? 1 : 0), \(now), \(now)) "
        + "ON CONFLICT (address) DO UPDATE SET ack_messages = excluded.ack_messages, heartbeat_at = excluded.heartbeat_at;\n"
    }
    try run(sql + "COMMIT;")
    wakeListener()
  }

  /// Unregisters a station (as /v1/unregister would).
  func unregister(_ address: String) throws {
    try run("PRAGMA foreign_keys=ON; DELETE FROM stations WHERE address = '\(address)';")
    wakeListener()
  }

  /// Wakes the listener of this database as the responder does after a commit the listener acts on: one datagram
  /// to its wake socket, `<database>.listener-wake` (`ListenerWake`: 1 registrations, 2 sends, 3 device ACKs).
  /// Nothing happens when no listener runs.
  func wakeListener(_ kind: UInt8 = 1) {
    var resolved = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let base = realpath(path, &resolved) != nil ? String(cString: resolved) : path
    let socketPath = Array((base + ".listener-wake").utf8)
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return }
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    guard socketPath.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: socketPath)
      raw[socketPath.count] = 0
    }
    var byte = kind
    _ = withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        sendto(fd, &byte, 1, 0, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
  }

  /// Waits until `condition` holds on this database.
  func waitUntil(timeout: Double = 10, _ condition: (SQLiteFile) throws -> Bool) rethrows -> Bool {
    try IntegrationTests.waitUntil(timeout: timeout, interval: 0.05) { try condition(self) }
  }
}

/// A fresh database file made by the listener's own migrations (`aprs-cloud migrate`).
func makeListenerDatabase(_ label: String = "listener-db") throws -> (directory: String, file: SQLiteFile) {
  let directory = try makeTemporaryDirectory(label)
  let path = directory + "/aprs-cloud.sqlite"
  let migrated = try runProcess(try TestPaths.executable("aprs-cloud"), ["migrate", "--db", path])
  guard migrated.status == 0 else { throw TestFailure("aprs-cloud migrate failed: \(migrated.stderrText)") }
  return (directory, SQLiteFile(path: path))
}

/// The APRS-IS passcode (docs/protocol.md), for `auth` in API calls.
func aprsPasscode(_ callsign: String) -> Int {
  let base = Array(callsign.uppercased().split(separator: "-").first.map(String.init)?.utf8 ?? "".utf8)
  var hash = 0x73E2
  var index = 0
  while index < base.count {
    hash ^= Int(base[index]) << 8
    if index + 1 < base.count { hash ^= Int(base[index + 1]) }
    index += 2
  }
  return hash & 0x7FFF
}

/// `count` station addresses `KJ0000-1`, `KJ0001-2`, … (8–9 characters, each with an SSID, like real ones).
func listenerStations(_ count: Int, prefix: String = "KJ", offset: Int = 0) -> [String] {
  (offset..<(offset + count)).map { index in
    let number = String(index)
    return prefix + String(repeating: "0", count: max(0, 4 - number.count)) + number + "-\(index % 15 + 1)"
  }
}

/// `count` distinct random station addresses shaped like amateur calls (a one- or two-letter prefix, a digit, a
/// suffix of one to three letters, SSID 0–15), as the world's registered stations might be.
func realisticStations(_ count: Int, using generator: inout SplitMix64) -> [String] {
  let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
  var seen = Set<String>()
  var result: [String] = []
  result.reserveCapacity(count)
  while result.count < count {
    var call = ""
    for _ in 0...Int.random(in: 0...1, using: &generator) {
      call.append(letters.randomElement(using: &generator)!)
    }
    call += String(Int.random(in: 0...9, using: &generator))
    for _ in 0...Int.random(in: 0...2, using: &generator) {
      call.append(letters.randomElement(using: &generator)!)
    }
    let ssid = Int.random(in: 0...15, using: &generator)
    let address = ssid == 0 ? call : "\(call)-\(ssid)"
    if seen.insert(address).inserted { result.append(address) }
  }
  return result
}

/// A message line as a sender would put it on APRS-IS.
func messageLine(from sender: String, to addressee: String, text: String, msgno: String?) -> String {
  let padded = addressee.padding(toLength: 9, withPad: " ", startingAt: 0)
  return "\(sender)>APDR16,TCPIP*,qAC,T2TEST::\(padded):\(text)" + (msgno.map { "{\($0)" } ?? "")
}

/// `/v1/sync` for many stations through one curl process (one connection), station → messages.
func syncMany(_ stack: TestStack, stations: [String]) throws -> [String: [JSONObject]] {
  let directory = try makeTemporaryDirectory("syncs")
  defer { try? FileManager.default.removeItem(atPath: directory) }
  var config = ""
  for (index, station) in stations.enumerated() {
    let parts = station.split(separator: "-")
    let ssid = parts.count > 1 ? String(parts[1]) : "0"
    let body = #"{"callsign":"\#(parts[0])","ssid":\#(ssid),"auth":"\#(aprsPasscode(station))","since":0}"#
    try body.write(toFile: directory + "/body-\(index)", atomically: false, encoding: .utf8)
    if index > 0 { config += "next\n" }
    config += "url = \"\(stack.baseURL)/v1/sync\"\nheader = \"content-type: application/json\"\n"
    config += "data-binary = \"@\(directory)/body-\(index)\"\noutput = \"\(directory)/out-\(index)\"\n"
  }
  try config.write(toFile: directory + "/curl.cfg", atomically: false, encoding: .utf8)
  let output = try runProcess("/usr/bin/curl", ["-s", "-S", "-K", directory + "/curl.cfg"], timeout: 120)
  guard output.status == 0 else { throw TestFailure("curl failed: \(output.stderrText)") }
  var result: [String: [JSONObject]] = [:]
  for (index, station) in stations.enumerated() {
    let data = FileManager.default.contents(atPath: directory + "/out-\(index)") ?? Data()
    guard case .object(let object)? = try? JSONParser.parse(Array(data)) else {
      throw TestFailure("sync of \(station) answered \(String(decoding: data, as: UTF8.self))")
    }
    result[station] = object.objects("messages")
  }
  return result
}
