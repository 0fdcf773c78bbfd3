import Foundation
import Store
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `aprs-cloud push-worker` as a process: the outbox survives `kill -9`.
@Suite(.serialized) struct PushWorkerTests {
  /// The built `aprs-cloud`, found by walking up from the test bundle.
  static func cli() throws -> String {
    var url = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    while url.path != "/" {
      url.deleteLastPathComponent()
      let candidate = url.path + "/aprs-cloud"
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    throw TestFailure("aprs-cloud is not built beside the tests")
  }

  /// Starts `aprs-cloud push-worker --config CONFIG`, its output appended to `log`.
  static func startWorker(config: String, log: String) throws -> Process {
    if !FileManager.default.fileExists(atPath: log) {
      _ = FileManager.default.createFile(atPath: log, contents: nil)
    }
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
    handle.seekToEndOfFile()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try cli())
    process.arguments = ["push-worker", "--config", config, "--log-level", "debug"]
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = handle
    process.standardError = handle
    try process.run()
    return process
  }

  @Test func aKilledWorkerSendsThePendingPushAfterRestartAtMostOnceMore() throws {
    let fake = try PushFake()
    defer {
      fake.stop()
      fake.removeFiles()
    }
    let directory = fake.directory
    let databasePath = directory + "/worker.sqlite"
    let config = directory + "/worker.ini"
    try """
    [server]
    database = \(databasePath)
    [messaging]
    coalesceWindow = 0
    [messaging.android]
    serviceAccountFile = service-account.json
    endpoint = \(fake.fcmEndpoint)
    caFile = ca.pem
    [messaging.webpush]
    enabled = false
    """.write(toFile: config, atomically: true, encoding: .utf8)
    let database = try openMigrated(databasePath)
    defer { database.close() }
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    for number in 0..<3 {
      try registerStation(database, "ST\(number)", token: "token-\(number)", now: now)
      _ = try database.storeMessages([message("ST\(number)", "before start \(number)")], now: now)
    }
    let log = directory + "/worker.log"

    // Pushes queued while no sender ran go out once it starts.
    var worker = try Self.startWorker(config: config, log: log)
    defer { if worker.isRunning { kill(worker.processIdentifier, SIGKILL) } }
    #expect(try fake.wait("fcm", count: 3, status: 200))
    #expect(try eventually { try database.dueOutbox(now: .max).isEmpty })

    // A push on the wire when the worker dies stays pending…
    try fake.script(#"{"role":"fcm","delayMs":20000}"#)
    _ = try database.storeMessages(
      [message("ST0", "in flight")], now: Int64(Date().timeIntervalSince1970 * 1000))
    #expect(try fake.wait("fcm", count: 4, answered: false))
    kill(worker.processIdentifier, SIGKILL)
    worker.waitUntilExit()
    #expect(worker.terminationReason == .uncaughtSignal)
    #expect(try database.dueOutbox(now: .max).count == 1)

    // …and goes out after the restart: repeated once, never lost.
    worker = try Self.startWorker(config: config, log: log)
    #expect(try fake.wait("fcm", count: 4, status: 200))
    #expect(try eventually { try database.dueOutbox(now: .max).isEmpty })
    #expect(try !fake.wait("fcm", count: 6, answered: false, timeoutMs: 1500))
    let requests = try fake.requests("fcm")
    #expect(requests.count == 5)
    // ST0's second push (count 2): once aborted by the kill, once after the restart.
    #expect(requests.filter { $0.string(at: ["body", "message", "data", "count"]) == "2" }.count == 2)
    #expect(requests[3].value(at: ["status"]) == .null)

    // SIGTERM: a clean stop, exit status 0.
    kill(worker.processIdentifier, SIGTERM)
    #expect(eventually(timeout: 10) { !worker.isRunning })
    worker.waitUntilExit()
    #expect(worker.terminationStatus == 0)
    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    #expect(text.contains("push sender stopped"))
    #expect(try database.pushStatus().states[.android]?.description == "ok")
    #expect(try database.pushStatus().states[.ios]?.description == "off")
  }
}
