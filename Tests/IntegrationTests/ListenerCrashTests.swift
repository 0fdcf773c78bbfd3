import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Starts `path` with `arguments` and extra `environment` (over the test runner's), output to `output`.
private func launch(
  _ path: String, _ arguments: [String], environment: [String: String] = [:], output: String
) throws -> Process {
  _ = FileManager.default.createFile(atPath: output, contents: nil)
  let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
  let process = Process()
  process.executableURL = URL(fileURLWithPath: path)
  process.arguments = arguments
  process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
  process.standardInput = FileHandle.nullDevice
  process.standardOutput = handle
  process.standardError = handle
  try process.run()
  return process
}

/// A listener INI for the fake: verified login, short test timings, and a long lease (60 s), so anything quicker
/// than that after a crash is the lock file's doing.
private func crashConfig(fake: FakeAPRSIS) -> String {
  """
  [aprsis]
  servers = 127.0.0.1:\(fake.port)
  login = N0CALL-10
  passcode = 13023
  reconnectDelay = 100ms
  maxReconnectDelay = 1s

  [listener]
  leaseTtl = 60s
  ackInterval = 300ms
  publishInterval = 100ms
  registrationPoll = 100ms

  [messaging.webpush]
  enabled = false

  [server]
  logLevel = info

  """
}

/// Senders on APRS-IS: each message is sent, and sent again while no ACK for it came back (as real senders retry,
/// here every `retryInterval` seconds; the fake's duplicate window is shorter).
private final class RetryingSenders {
  struct Message {
    let msgno: String
    let line: String
    var lastSent = Date.distantPast
  }

  let fake: FakeAPRSIS
  let retryInterval: Double
  private(set) var messages: [Message] = []
  private(set) var acked = Set<String>()

  init(fake: FakeAPRSIS, retryInterval: Double = 0.6) {
    self.fake = fake
    self.retryInterval = retryInterval
  }

  /// A new message, sent at the next `pump`.
  func add(to station: String) {
    let number = messages.count + 1
    messages.append(
      Message(
        msgno: String(number),
        line: messageLine(
          from: "W\(number % 5)XYZ-\(number % 3 + 1)", to: station, text: "msg \(number)",
          msgno: String(number))))
  }

  /// Reads the ACKs that went out and (re)sends every unACKed message whose retry is due.
  func pump() throws {
    for line in try fake.ackLines() {
      if let range = line.range(of: ":ack") { acked.insert(String(line[range.upperBound...])) }
    }
    let now = Date()
    var lines: [String] = []
    for index in messages.indices
    where !acked.contains(messages[index].msgno)
      && now.timeIntervalSince(messages[index].lastSent) >= retryInterval
    {
      lines.append(messages[index].line)
      messages[index].lastSent = now
    }
    if !lines.isEmpty { _ = try fake.inject(lines) }
  }

  var allAcked: Bool { messages.allSatisfy { acked.contains($0.msgno) } }
}

@Suite struct ListenerCrashTests {
  /// The issue's crash test: 20 `kill -9` in a row of the listener under `aprs-cloud up`, while senders keep
  /// sending and retrying. Every time the new listener is logged in with its filter within 2 s of the kill (its
  /// predecessor's 60 s lease is taken over at once: the lock file says the holder is dead), and in the end every
  /// message is stored exactly once and ACKed. `up`'s crash-loop window is shortened to 1 s so the 20 kills fit
  /// in about half a minute.
  @Test func twentyKillsUnderUpAreEachBackOnAirWithinTwoSecondsAndLoseNothing() throws {
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    try fake.command(["cmd": "set", "dup_window": 0.5])
    let directory = try makeTemporaryDirectory("crash")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let data = directory + "/var"
    #expect(mkdir(data, 0o750) == 0)
    let database = SQLiteFile(path: data + "/aprs-cloud.sqlite")
    let migrated = try runProcess(try TestPaths.executable("aprs-cloud"), ["migrate", "--db", database.path])
    try #require(migrated.status == 0, "\(migrated.stderrText)")
    try database.register(["OH7LZB", "KJ7ABC-7"], ackMessages: true)
    let config = directory + "/aprs-cloud.ini"
    try crashConfig(fake: fake).write(toFile: config, atomically: true, encoding: .utf8)
    let log = directory + "/up.log"
    let up = try launch(
      try TestPaths.executable("aprs-cloud"),
      [
        "up", "--http", "127.0.0.1:\(try freePort())", "--metrics", "127.0.0.1:\(try freePort())", "--data",
        data, "--nginx-dir",
        TestPaths.nginxDirectory,
        "--config", config,
      ],
      environment: ["APRS_CLOUD_UP_CRASH_LOOP_WINDOW": "1"], output: log)
    defer { TestStack.terminate(up) }
    var upLog: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
    func listenerPids() -> [Int32] {
      ProcessTable.children(of: up.processIdentifier).filter { ProcessTable.name(of: $0) == "aprs-listener" }
    }

    try #require(try fake.wait("login", count: 1, timeout: 30), "no first login:\n\(upLog)")
    let filter = try #require(try fake.currentFilter())
    #expect(filter.contains("OH7LZB") && filter.contains("KJ7ABC-7"), "\(filter)")
    let senders = RetryingSenders(fake: fake)
    var lastLoginAt = Date().timeIntervalSince1970
    var restarts: [Double] = []
    var pids = Set<Int32>()
    for kill in 1...20 {
      for index in 0..<3 { senders.add(to: (kill + index) % 2 == 0 ? "OH7LZB" : "KJ7ABC-7") }
      // Let it run past up's crash-loop window (counted from its spawn, which came before its login).
      while Date().timeIntervalSince1970 < lastLoginAt + 1.2 {
        try senders.pump()
        usleep(50_000)
      }
      let running = listenerPids()
      try #require(running.count == 1, "listeners: \(running)\n\(upLog)")
      pids.insert(running[0])
      Glibc.kill(running[0], SIGKILL)
      let killedAt = Date().timeIntervalSince1970
      var loginAt: Double?
      let back = try waitUntil(timeout: 10, interval: 0.01) {
        let client = try fake.clients().first {
          $0.bool("logged_in") == true && ($0.number("logged_in_at") ?? 0) > killedAt
        }
        guard let client, client.string("filter") == filter else { return false }
        loginAt = client.number("logged_in_at")
        return true
      }
      try #require(back, "kill \(kill): not back on air within 10 s\n\(upLog)")
      let restart = (loginAt ?? killedAt) - killedAt
      restarts.append(restart)
      #expect(restart < 2, "kill \(kill): back on air after \(restart) s")
      lastLoginAt = loginAt ?? killedAt
      try senders.pump()
    }
    // The senders keep retrying until everything is ACKed.
    let done = try waitUntil(timeout: 30, interval: 0.1) {
      try senders.pump()
      return senders.allAcked
    }
    let sorted = restarts.sorted()
    print(
      "restart after SIGKILL under up (20): min \(sorted.first ?? -1) s, median \(sorted[sorted.count / 2]) s, "
        + "max \(sorted.last ?? -1) s")
    #expect(done, "never ACKed: \(senders.messages.map(\.msgno).filter { !senders.acked.contains($0) })")
    #expect(pids.count == 20)
    #expect(restarts.count == 20)
    #expect(
      upLog.components(separatedBy: "aprs-listener exited (signal 9); restarting now").count == 21, "\(upLog)"
    )
    #expect(
      upLog.components(separatedBy: "took over the lease of a listener on this host that is gone").count == 21
    )
    // Every message stored exactly once.
    #expect(try database.int("SELECT count(*) FROM messages") == senders.messages.count)
    #expect(
      try database.run("SELECT msgno FROM messages GROUP BY station, peer, msgno HAVING count(*) > 1;")
        .isEmpty)
    #expect(try database.int("SELECT count(*) FROM outbox") == senders.messages.count)

    Glibc.kill(up.processIdentifier, SIGTERM)
    #expect(waitUntil(timeout: 20) { !up.isRunning }, "\(upLog)")
    up.waitUntilExit()
    #expect(up.terminationStatus == 0, "\(upLog)")
  }

  /// Durability: the commit that precedes an ACK is on disk. Under strace, the listener's write-ahead log is
  /// synced (`fdatasync`/`fsync` on the `-wal` file, after its last write) before the ACK line is written to the
  /// socket. With `synchronous=NORMAL` the log would only be synced at checkpoints and this would fail.
  @Test func theCommitBeforeAnAckIsSyncedToDiskFirst() throws {
    let strace = "/usr/bin/strace"
    try #require(
      FileManager.default.isExecutableFile(atPath: strace),
      "strace is missing: `make test` installs it (Makefile DEB_TEST)")
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let (directory, database) = try makeListenerDatabase()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try database.register(["OH7LZB"], ackMessages: true)
    let config = directory + "/listener.ini"
    try crashConfig(fake: fake).write(toFile: config, atomically: true, encoding: .utf8)
    let trace = directory + "/strace.txt"
    let tracer = try launch(
      strace,
      [
        "-f", "-y", "-qq", "-s", "512", "-e", "trace=pwrite64,fdatasync,fsync,write,sendto", "-o", trace,
        try TestPaths.executable("aprs-listener"), "--db", database.path, "--config", config,
      ],
      output: directory + "/listener.log")
    defer { TestStack.terminate(tracer) }
    var listenerLog: String {
      (try? String(contentsOfFile: directory + "/listener.log", encoding: .utf8)) ?? ""
    }
    try #require(try fake.wait("login", count: 1, timeout: 30), "\(listenerLog)")
    try fake.inject([messageLine(from: "OH7AA-1", to: "OH7LZB", text: "on disk first", msgno: "77")])
    #expect(try fake.wait("transmitted", count: 1, timeout: 10), "\(listenerLog)")
    #expect(try fake.ackLines() == ["OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack77"])
    let listener = try #require(ProcessTable.children(of: tracer.processIdentifier).first)
    Glibc.kill(listener, SIGTERM)
    #expect(waitUntil(timeout: 20) { !tracer.isRunning })
    tracer.waitUntilExit()

    let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map(String.init)
    let ackIndex = try #require(
      lines.firstIndex { $0.contains("sendto(") && $0.contains(":ack77") }, "no ACK write in the trace")
    let lastWALWrite = try #require(
      lines[..<ackIndex].lastIndex { $0.contains("pwrite64(") && $0.contains("-wal>") },
      "no write to the -wal file before the ACK")
    // A sync of the -wal file that completed after its last write and before the ACK's write began.
    var unfinished = Set<Substring>()
    var synced: String?
    for line in lines[(lastWALWrite + 1)..<ackIndex] {
      let pid = line.prefix { $0 != " " }
      let isSync = line.contains("fdatasync(") || line.contains("fsync(")
      if isSync && line.contains("-wal>") {
        if line.contains("<unfinished ...>") {
          unfinished.insert(pid)
        } else if line.hasSuffix("= 0") {
          synced = line
        }
      } else if line.contains("sync resumed>"), line.hasSuffix("= 0"), unfinished.contains(pid) {
        synced = line
      }
    }
    let window = lines[lastWALWrite...ackIndex].joined(separator: "\n")
    #expect(synced != nil, "the -wal file was not synced between its last write and the ACK:\n\(window)")
    print(
      "strace: "
        + [lines[lastWALWrite], synced ?? "(no sync)", lines[ackIndex]].map { $0.prefix(150) }.joined(
          separator: "\n        "))
  }

  /// Dedup follows the station, end to end through nginx and the responder: a station unregistered
  /// (/v1/unregister) and registered again gets the sender's next copy stored (sync shows it), then ACKed.
  @Test func aCopyAfterUnregisterAndRegisterIsStoredForTheNewStationThenAcked() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let register =
      #"{"callsign":"OH7LZB","ssid":0,"auth":"\#(aprsPasscode("OH7LZB"))","ackMessages":true,"wantHistory":false,"since":0}"#
    #expect(try stack.post("/v1/register", json: register).status == 200)
    let listener = try ListenerProcess(
      database: stack.databasePath,
      config: ListenerProcess.config(fake: fake, extraListener: "ackInterval = 300ms\n"))
    defer { listener.stop() }
    #expect(try fake.wait("login", count: 1))
    #expect(waitUntil(timeout: 10) { (try? fake.currentFilter())?.contains("OH7LZB") == true })

    let copy = messageLine(from: "OH7AA-1", to: "OH7LZB", text: "are you there?", msgno: "12")
    try fake.inject([copy])
    #expect(try fake.wait("transmitted", count: 1))
    let database = SQLiteFile(path: stack.databasePath)
    #expect(try database.int("SELECT count(*) FROM messages") == 1)

    // The user switches the app off and on again: unregistered (its message and dedup row go), registered anew.
    let identity = #"{"callsign":"OH7LZB","ssid":0,"auth":"\#(aprsPasscode("OH7LZB"))"}"#
    #expect(try stack.post("/v1/unregister", json: identity).status == 200)
    #expect(try database.int("SELECT count(*) FROM messages") == 0)
    #expect(try stack.post("/v1/register", json: register).status == 200)
    #expect(waitUntil(timeout: 10) { (try? fake.currentFilter())?.contains("OH7LZB") == true })
    usleep(400_000)  // past the ACK interval (300 ms) since the first ACK

    // The sender had not seen the first ACK and sends again (past APRS-IS's 30 s duplicate window).
    try fake.advance(31)
    try fake.inject([copy])
    #expect(try fake.wait("transmitted", count: 2), "the copy was not ACKed:\n\(listener.log)")
    #expect(try database.int("SELECT count(*) FROM messages WHERE station = 'OH7LZB' AND msgno = '12'") == 1)
    let sync = try stack.post(
      "/v1/sync", json: #"{"callsign":"OH7LZB","ssid":0,"auth":"\#(aprsPasscode("OH7LZB"))","since":0}"#)
    #expect(sync.text.contains("are you there?"), "\(sync.text)")
    #expect(try fake.ackLines() == Array(repeating: "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack12", count: 2))
    #expect(listener.terminate() == 0)
  }
}

extension JSONObject {
  func number(_ key: String) -> Double? {
    if case .number(let number)? = self[key] { return number.double }
    return nil
  }
}
