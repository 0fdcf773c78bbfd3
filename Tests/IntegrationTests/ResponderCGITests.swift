import Foundation
import JSON
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `aprs-cloud-fcgi` as a plain CGI program: environment and standard input in, `Status:` +
/// headers + body out, exit 0, one request per process.
@Suite final class ResponderCGITests {
  let directory: String

  init() throws {
    directory = try ResponderPaths.temporaryDirectory("cgi")
  }

  deinit { try? FileManager.default.removeItem(atPath: directory) }

  func run(_ environment: [String: String], body: [UInt8] = [], arguments: [String]? = nil) throws
    -> ResponderCGI.Run
  {
    try ResponderCGI.run(
      directory: directory, environment: environment, body: body,
      arguments: arguments ?? ["--db", directory + "/aprs.sqlite"])
  }

  @Test func healthUnderAPrefixWithAQueryString() throws {
    let run = try run(["REQUEST_METHOD": "GET", "REQUEST_URI": "/cgi-bin/aprs-cloud-fcgi/health?probe=1"])
    #expect(run.exitStatus == 0)
    let reply = try run.reply()
    #expect(reply.status == 200)
    #expect(reply.header("Status") == "200 OK")
    #expect(reply.header("Content-Type") == "application/json")
    #expect(reply.header("Cache-Control") == "no-store")
    #expect(reply.header("Content-Length") == String(reply.body.count))
    guard case .object(let object)? = reply.json else {
      Issue.record("not a JSON object: \(reply.bodyText)")
      return
    }
    #expect(object["status"] != nil)
    #expect(run.stderr.contains("level=info msg=\"request\" method=GET path=/health status=200 us="))
    // A fresh deploy works: the database was created and migrated by this one request.
    #expect(FileManager.default.fileExists(atPath: directory + "/aprs.sqlite"))
  }

  @Test func pathFromScriptNameAndPathInfo() throws {
    let run = try run(
      [
        "REQUEST_METHOD": "POST", "SCRIPT_NAME": "/cgi-bin/aprs-cloud-fcgi", "PATH_INFO": "/v1/sync",
        "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": String(responderSyncBody.count),
        "REMOTE_ADDR": "192.0.2.1",
      ], body: responderSyncBody)
    #expect(run.exitStatus == 0)
    let reply = try run.reply()
    #expect(reply.status == 200, "\(reply.bodyText)")
    #expect(reply.errorText == nil)
    #expect(run.stderr.contains("path=/v1/sync station=N0CALL status=200"))
    #expect(!run.stderr.contains("13023"), "the passcode must never be logged")
  }

  @Test func bodyOverTheLimitIs413() throws {
    let body = [UInt8](repeating: UInt8(ascii: "x"), count: 70_000)
    let run = try run(
      ["REQUEST_METHOD": "POST", "REQUEST_URI": "/v1/sync", "CONTENT_LENGTH": String(body.count)], body: body)
    #expect(run.exitStatus == 0)
    let reply = try run.reply()
    #expect(reply.status == 413)
    #expect(reply.header("Status") == "413 Payload Too Large")
    #expect(reply.errorText == "request body is larger than 65536 bytes")
  }

  @Test func announcedHugeBodyIs413WithoutReadingIt() throws {
    // Nothing on stdin: the length alone decides, nothing waits for 10 GB.
    let run = try run(["REQUEST_METHOD": "POST", "REQUEST_URI": "/v1/sync", "CONTENT_LENGTH": "10000000000"])
    #expect(try run.reply().status == 413)
  }

  @Test func configuredLimitApplies() throws {
    let body = [UInt8](repeating: UInt8(ascii: "x"), count: 5000)
    let run = try run(
      [
        "REQUEST_METHOD": "POST", "REQUEST_URI": "/v1/sync", "CONTENT_LENGTH": String(body.count),
        "APRS_CLOUD_SERVER_MAXBODY": "4096",
      ], body: body)
    let reply = try run.reply()
    #expect(reply.status == 413)
    #expect(reply.errorText == "request body is larger than 4096 bytes")
  }

  @Test func contentLengthLongerThanTheBodyIs400() throws {
    let run = try run(
      ["REQUEST_METHOD": "POST", "REQUEST_URI": "/v1/sync", "CONTENT_LENGTH": "100"],
      body: Array(#"{"callsign":"N0CALL"}"#.utf8))
    #expect(run.exitStatus == 0)
    let reply = try run.reply()
    #expect(reply.status == 400)
    #expect(reply.errorText == "request body ended early (21 of 100 bytes)")
  }

  @Test(arguments: ["-5", "abc", "12abc", " 12", "0x10", "1e3"])
  func garbageContentLengthIs400(length: String) throws {
    let run = try run(
      ["REQUEST_METHOD": "POST", "REQUEST_URI": "/v1/sync", "CONTENT_LENGTH": length], body: responderSyncBody
    )
    let reply = try run.reply()
    #expect(reply.status == 400)
    #expect(reply.errorText == "Content-Length is not a valid length")
  }

  @Test func unknownPathIs404Json() throws {
    let run = try run(["REQUEST_METHOD": "GET", "REQUEST_URI": "/nothing/here"])
    let reply = try run.reply()
    #expect(reply.status == 404)
    #expect(reply.errorText != nil)
  }

  /// CGI never shows /metrics: its parameters are the environment, which anything may set.
  @Test func metricsIs404JsonUnderCGIEvenWithTheMark() throws {
    for extra in [[:], ["APRS_CLOUD_METRICS": "on"], ["HTTP_APRS_CLOUD_METRICS": "on"]] {
      let run = try run(["REQUEST_METHOD": "GET", "REQUEST_URI": "/metrics"].merging(extra) { $1 })
      #expect(run.exitStatus == 0)
      let reply = try run.reply()
      #expect(reply.status == 404, "\(extra)")
      #expect(reply.header("Content-Type") == "application/json")
      #expect(reply.errorText?.isEmpty == false, "\(reply.bodyText)")
      #expect(!reply.bodyText.contains("aprs_cloud_"))
    }
  }

  @Test func configFileEnvironmentAndFlagsInThatOrder() throws {
    let configPath = directory + "/aprs-cloud.ini"
    try """
    ; the responder's settings
    [server]
    maxBody = 2048
    logLevel = warn
    wrokers = 3
    """.write(toFile: configPath, atomically: true, encoding: .utf8)
    let body = [UInt8](repeating: UInt8(ascii: "x"), count: 3000)
    let request = ["REQUEST_METHOD": "POST", "REQUEST_URI": "/v1/sync", "CONTENT_LENGTH": String(body.count)]

    // The file, named by $APRS_CLOUD_CONFIG: its limit, its log level, a warning for the typo.
    let fromFile = try run(
      request.merging(["APRS_CLOUD_CONFIG": configPath]) { $1 }, body: body,
      arguments: ["--db", directory + "/aprs.sqlite"])
    #expect(try fromFile.reply().errorText == "request body is larger than 2048 bytes")
    #expect(fromFile.stderr.contains("unknown key wrokers in [server] is ignored"))
    #expect(!fromFile.stderr.contains("msg=\"request\""))

    // The environment beats the file (the body now reaches the API: not JSON, 400), and a flag
    // beats both (the request line is logged again).
    let overridden = try run(
      request.merging(["APRS_CLOUD_SERVER_MAXBODY": "4096", "APRS_CLOUD_SERVER_LOGLEVEL": "error"]) { $1 },
      body: body,
      arguments: ["--config", configPath, "--db", directory + "/aprs.sqlite", "--log-level", "info"])
    #expect(try overridden.reply().status == 400)
    #expect(overridden.stderr.contains("msg=\"request\" method=POST path=/v1/sync status=400"))
  }

  /// Plain CGI holds a `wait` by reading the database again every 250 ms (the request is the
  /// process): `messages:[]` when the wait runs out, the message as soon as one is stored.
  @Test func aWaitIsServedByReadingTheDatabaseAgain() throws {
    let post = ["REQUEST_METHOD": "POST", "CONTENT_TYPE": "application/json"]
    let register = Array(#"{"callsign":"N0CALL","ssid":0,"auth":"13023","wantHistory":false,"since":0}"#.utf8)
    let registered = try run(
      post.merging(["REQUEST_URI": "/v1/register", "CONTENT_LENGTH": String(register.count)]) { $1 },
      body: register)
    #expect(try registered.reply().status == 200)

    let shortWait = Array(#"{"callsign":"N0CALL","ssid":0,"since":0,"auth":"13023","wait":1}"#.utf8)
    let started = Date()
    let empty = try run(
      post.merging(["REQUEST_URI": "/v1/sync", "CONTENT_LENGTH": String(shortWait.count)]) { $1 },
      body: shortWait)
    let waited = Date().timeIntervalSince(started)
    #expect(waited >= 1 && waited < 5, "\(waited) s")
    #expect(try empty.reply().bodyText == #"{"messages":[],"serverTime":0,"avatars":{}}"#)
    #expect(
      empty.stderr.contains("path=/v1/sync station=N0CALL status=200") && empty.stderr.contains("waitedMs="))

    let database = SQLiteFile(path: directory + "/aprs.sqlite")
    let writer = ResponderThread { () -> String? in
      usleep(500_000)
      return try? database.run(
        """
        BEGIN IMMEDIATE;
        INSERT INTO messages (station, direction, peer, text, msgno, timestamp)
          VALUES ('N0CALL', 'received', 'W5AGO', 'while you waited', '7', 1000);
        UPDATE meta SET value = '1000' WHERE key = 'last_message_ts';
        COMMIT;
        """)
    }
    let longWait = Array(#"{"callsign":"N0CALL","ssid":0,"since":0,"auth":"13023","wait":30}"#.utf8)
    let woken = try run(
      post.merging(["REQUEST_URI": "/v1/sync", "CONTENT_LENGTH": String(longWait.count)]) { $1 },
      body: longWait)
    #expect(writer.join(timeout: 10) != nil)
    #expect(Date().timeIntervalSince(started) - waited < 10)
    let reply = try woken.reply()
    #expect(
      reply.status == 200 && reply.bodyText.contains(#""text":"while you waited""#), "\(reply.bodyText)")
    #expect(reply.bodyText.contains(#""serverTime":1000"#))
  }

  @Test func brokenConfigurationStillAnswersJson() throws {
    let run = try run(
      ["REQUEST_METHOD": "GET", "REQUEST_URI": "/health", "APRS_CLOUD_SERVER_WORKERS": "lots"],
      arguments: ["--db", directory + "/aprs.sqlite"])
    #expect(run.exitStatus == 2)
    let reply = try run.reply()
    #expect(reply.status == 500)
    #expect(reply.errorText != nil)
    #expect(run.stderr.contains("server.workers"))
  }

  @Test func unusableDatabaseIs503Json() throws {
    let run = try run(
      ["REQUEST_METHOD": "GET", "REQUEST_URI": "/health"], arguments: ["--db", "/proc/no/such/dir/a.sqlite"])
    #expect(run.exitStatus == 1)
    let reply = try run.reply()
    #expect(reply.status == 503)
    #expect(reply.errorText != nil)
  }

  @Test func withoutCGIOrSocketItExplainsItself() throws {
    // No GATEWAY_INTERFACE, no --listen, fd 0 a file: nothing to serve.
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try ResponderPaths.responder())
    process.arguments = ["--db", directory + "/aprs.sqlite"]
    process.environment = [:]
    process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    try process.run()
    let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 2)
    #expect(text.contains("nothing to serve"))
  }

  @Test func helpAndUsageErrors() throws {
    for (arguments, status) in [(["--help"], Int32(0)), (["--bogus"], 2), (["--workers"], 2), (["stray"], 2)]
    {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: try ResponderPaths.responder())
      process.arguments = arguments
      process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
      process.standardError = FileHandle(forWritingAtPath: "/dev/null")
      try process.run()
      process.waitUntilExit()
      #expect(process.terminationStatus == status, "\(arguments)")
    }
  }
}
