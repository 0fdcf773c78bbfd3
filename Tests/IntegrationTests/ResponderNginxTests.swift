import Foundation
import JSON
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The shell behind a minimal nginx of its own (the project's real site config is tested by the
/// nginx suite): the API mounted under a prefix, `fastcgi_keep_conn off`, curl as the client.
@Suite struct ResponderNginxTests {
  @Test func servesThroughNginxUnderAPrefix() throws {
    let directory = try ResponderPaths.temporaryDirectory("ngx")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let socketPath = directory + "/fcgi.sock"
    let responder = try ResponderServer(
      executable: try ResponderPaths.responder(),
      arguments: ["--listen", socketPath, "--db", directory + "/aprs.sqlite", "--workers", "2"],
      directory: directory,
      environment: ["APRS_CLOUD_SERVER_MAXBODY": "4096", "APRS_CLOUD_SERVER_LOGREQUESTS": "true"])
    let nginx = try ResponderNginx(directory: directory, socketPath: socketPath)
    defer { nginx.stop() }

    let health = try nginx.curl(["/aprs/health"])
    #expect(health.status == 200)
    #expect(health.headers["content-type"] == "application/json")
    #expect(health.headers["cache-control"] == "no-store")

    let sync = try nginx.curl(
      ["-X", "POST", "-H", "Content-Type: application/json", "--data-binary", "@-", "/aprs/v1/sync"],
      stdin: responderSyncBody)
    #expect(sync.status == 200, "\(sync.body)")
    #expect(sync.body.contains("\"serverTime\""))

    // A chunked upload has no Content-Length from the client; nginx buffers it and passes one.
    let chunked = try nginx.curl(
      [
        "-X", "POST", "-H", "Content-Type: application/json", "-H", "Transfer-Encoding: chunked",
        "--data-binary", "@-", "/aprs/v1/sync",
      ], stdin: responderSyncBody)
    #expect(chunked.status == 200, "\(chunked.body)")

    // Over the responder's limit (nginx's own is larger here): the responder's 413 JSON.
    let big = [UInt8](repeating: UInt8(ascii: "x"), count: 5000)
    let tooLarge = try nginx.curl(["-X", "POST", "--data-binary", "@-", "/aprs/v1/sync"], stdin: big)
    #expect(tooLarge.status == 413)
    #expect(tooLarge.body == #"{"error":"request body is larger than 4096 bytes"}"#)

    #expect(responder.stop() == 0)
    #expect(responder.count("path=/v1/sync station=N0CALL status=200") == 2)
    #expect(responder.count("path=/health status=200") == 1)
  }
}

/// nginx in a temporary prefix, in front of one FastCGI socket mounted at `/aprs/`.
final class ResponderNginx: @unchecked Sendable {
  let port: Int
  let directory: String

  struct Reply {
    var status: Int
    var headers: [String: String]
    var body: String
  }

  init(directory: String, socketPath: String) throws {
    self.directory = directory
    let nginx = try ResponderPaths.tool("nginx")
    var lastError = ""
    var chosen = 0
    for _ in 0..<4 {
      let port = try responderFreePort()
      let config = """
        daemon off;
        worker_processes 1;
        pid \(directory)/nginx.pid;
        error_log \(directory)/nginx-error.log info;
        \(getuid() == 0 ? "user root root;" : "")
        events { worker_connections 64; }
        http {
          access_log off;
          client_body_temp_path \(directory)/client_body;
          fastcgi_temp_path \(directory)/fastcgi_temp;
          proxy_temp_path \(directory)/proxy_temp;
          uwsgi_temp_path \(directory)/uwsgi_temp;
          scgi_temp_path \(directory)/scgi_temp;
          client_max_body_size 1m;
          server {
            listen 127.0.0.1:\(port);
            location /aprs/ {
              include /etc/nginx/fastcgi_params;
              # libfcgi pins a worker thread to a kept connection: one request per connection.
              fastcgi_keep_conn off;
              fastcgi_pass unix:\(socketPath);
            }
          }
        }
        """
      try config.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
      let candidate = Process()
      candidate.executableURL = URL(fileURLWithPath: nginx)
      candidate.arguments = [
        "-p", directory, "-c", directory + "/nginx.conf", "-e", directory + "/nginx-error.log",
      ]
      candidate.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
      candidate.standardError = FileHandle(forWritingAtPath: "/dev/null")
      try candidate.run()
      let up = responderWait(timeout: 10) { !candidate.isRunning || ResponderNginx.accepts(port: port) }
      if up && candidate.isRunning {
        chosen = port
        self.running = candidate
        break
      }
      if candidate.isRunning { kill(candidate.processIdentifier, SIGKILL) }
      lastError = String(
        decoding: FileManager.default.contents(atPath: directory + "/nginx-error.log") ?? Data(),
        as: UTF8.self)
    }
    guard chosen != 0 else { throw ResponderTestError("nginx did not start: \(lastError)") }
    port = chosen
  }

  private var running: Process?

  deinit { stop() }

  func stop() {
    guard let running, running.isRunning else { return }
    kill(running.processIdentifier, SIGTERM)
    if !responderWait(timeout: 10, { !running.isRunning }) { kill(running.processIdentifier, SIGKILL) }
  }

  static func accepts(port: Int) -> Bool {
    (try? ResponderFastCGIConnection(tcpPort: port, timeoutSeconds: 1)) != nil
  }

  /// Runs curl with `arguments`, the last one a path on this nginx.
  func curl(_ arguments: [String], stdin: [UInt8] = []) throws -> Reply {
    var arguments = arguments
    let path = arguments.removeLast()
    let headersFile = directory + "/curl-\(UUID().uuidString.prefix(8)).headers"
    let bodyFile = headersFile + ".body"
    let inputFile = headersFile + ".in"
    _ = FileManager.default.createFile(atPath: inputFile, contents: Data(stdin))
    defer {
      for file in [headersFile, bodyFile, inputFile] { unlink(file) }
    }
    let curl = Process()
    curl.executableURL = URL(fileURLWithPath: try ResponderPaths.tool("curl"))
    curl.arguments =
      ["-s", "--max-time", "20", "-D", headersFile, "-o", bodyFile] + arguments + [
        "http://127.0.0.1:\(port)\(path)"
      ]
    curl.standardInput = FileHandle(forReadingAtPath: inputFile)
    curl.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    try curl.run()
    curl.waitUntilExit()
    guard curl.terminationStatus == 0 else {
      throw ResponderTestError("curl failed with \(curl.terminationStatus)")
    }
    let head = String(decoding: FileManager.default.contents(atPath: headersFile) ?? Data(), as: UTF8.self)
    var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
    let statusLine = lines.isEmpty ? "" : lines.removeFirst()
    let parts = statusLine.split(separator: " ")
    guard parts.count >= 2, let status = Int(parts[1]) else {
      throw ResponderTestError("no status in \(head)")
    }
    var headers: [String: String] = [:]
    for line in lines {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
        in: .whitespaces)
    }
    let body = String(decoding: FileManager.default.contents(atPath: bodyFile) ?? Data(), as: UTF8.self)
    return Reply(status: status, headers: headers, body: body)
  }
}
