import Foundation
import JSON
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `aprs-cloud-fcgi` as a FastCGI server: on a listening socket inherited on fd 0 (spawn-fcgi)
/// and on its own unix or TCP socket (`--listen`), spoken to with a FastCGI client.
@Suite final class ResponderFastCGITests {
  let directory: String

  init() throws {
    directory = try ResponderPaths.temporaryDirectory("fcgi")
  }

  deinit { try? FileManager.default.removeItem(atPath: directory) }

  var database: String { directory + "/aprs.sqlite" }

  @Test func inheritedSocketThroughSpawnFcgi() throws {
    let socketPath = directory + "/spawned.sock"
    let server = try ResponderServer(
      executable: try ResponderPaths.tool("spawn-fcgi"),
      arguments: [
        "-n", "-s", socketPath, "-M", "0660", "--", try ResponderPaths.responder(), "--db", database,
        "--workers", "2", "--log-level", "debug",
      ],
      directory: directory)
    #expect(server.log.contains("mode=inherited listen=fd:0 workers=2"))

    let health = try ResponderFastCGIConnection.request(unixPath: socketPath, "GET", "/health").reply()
    #expect(health.status == 200)
    #expect(health.header("Content-Type") == "application/json")
    #expect(health.header("Cache-Control") == "no-store")
    let sync = try ResponderFastCGIConnection.request(
      unixPath: socketPath, "POST", "/aprs/v1/sync", body: responderSyncBody
    ).reply()
    #expect(sync.status == 200, "\(sync.bodyText)")
    #expect(server.count("path=/v1/sync station=N0CALL status=200") == 1)

    #expect(server.stop() == 0)
    // The inherited socket is not ours to remove.
    #expect(FileManager.default.fileExists(atPath: socketPath))
  }

  @Test func ownUnixSocketReplacesAStaleOneWithMode0660AndRemovesItAtExit() throws {
    let socketPath = directory + "/own.sock"
    try makeStaleSocket(socketPath)
    let server = try ResponderServer(
      executable: try ResponderPaths.responder(),
      arguments: ["--listen", socketPath, "--db", database, "--workers", "3"], directory: directory)
    #expect(server.log.contains("mode=unix listen=\(socketPath) workers=3 database=\(database)"))
    var info = stat()
    #expect(lstat(socketPath, &info) == 0)
    #expect(info.st_mode & S_IFMT == S_IFSOCK)
    #expect(info.st_mode & 0o777 == 0o660)

    #expect(
      try ResponderFastCGIConnection.request(unixPath: socketPath, "GET", "/health").reply().status == 200)

    // A second instance must not steal a live socket.
    let second = Process()
    second.executableURL = URL(fileURLWithPath: try ResponderPaths.responder())
    second.arguments = ["--listen", socketPath, "--db", database]
    second.standardError = FileHandle(forWritingAtPath: "/dev/null")
    try second.run()
    second.waitUntilExit()
    #expect(second.terminationStatus == 1)
    #expect(
      try ResponderFastCGIConnection.request(unixPath: socketPath, "GET", "/health").reply().status == 200)

    #expect(server.stop() == 0)
    #expect(!FileManager.default.fileExists(atPath: socketPath))
  }

  @Test func ownTCPSocket() throws {
    var server: ResponderServer?
    var port = 0
    // A port found free can be taken before the responder binds it: try a few.
    for _ in 0..<4 where server == nil {
      port = try responderFreePort()
      server = try? ResponderServer(
        executable: try ResponderPaths.responder(),
        arguments: ["--listen", "127.0.0.1:\(port)", "--db", database], directory: directory)
    }
    let running = try #require(server)
    #expect(running.log.contains("mode=tcp listen=127.0.0.1:\(port)"))
    #expect(try ResponderFastCGIConnection.request(tcpPort: port, "GET", "/health").reply().status == 200)
    let sync = try ResponderFastCGIConnection.request(
      tcpPort: port, "POST", "/v1/sync", body: responderSyncBody)
    #expect(try sync.reply().status == 200)
    #expect(running.stop() == 0)
  }

  /// /metrics only for a request marked `APRS_CLOUD_METRICS=on` (nginx's private listener sends it);
  /// without it, empty, or as a header (`HTTP_…`), 404 JSON.
  @Test func metricsOnlyWithThePrivateListenersMark() throws {
    let socketPath = directory + "/metrics.sock"
    let server = try ResponderServer(
      executable: try ResponderPaths.responder(),
      arguments: ["--listen", socketPath, "--db", database, "--workers", "2"], directory: directory)
    func scrape(_ extra: [(String, String)]) throws -> ResponderReply {
      let connection = try ResponderFastCGIConnection(unixPath: socketPath)
      try connection.begin(ResponderFastCGIConnection.params("GET", "/metrics", extra: extra))
      try connection.endBody()
      return try connection.readReply().reply()
    }
    let marked = try scrape([("APRS_CLOUD_METRICS", "on")])
    #expect(marked.status == 200)
    #expect(marked.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
    #expect(marked.bodyText.contains("aprs_cloud_database_up 1"))
    for extra in [
      [], [("APRS_CLOUD_METRICS", "")], [("HTTP_APRS_CLOUD_METRICS", "on")], [("APRS_CLOUD_METRICS", "1")],
    ] {
      let reply = try scrape(extra)
      #expect(reply.status == 404, "\(extra)")
      #expect(reply.header("Content-Type") == "application/json")
      #expect(
        reply.errorText?.isEmpty == false && !reply.bodyText.contains("aprs_cloud_"), "\(reply.bodyText)")
    }
    #expect(server.stop() == 0)
  }

  @Test func bodyChecksBeforeTheHandler() throws {
    let socketPath = directory + "/checks.sock"
    let server = try ResponderServer(
      executable: try ResponderPaths.responder(),
      arguments: ["--listen", socketPath, "--db", database, "--workers", "2"], directory: directory,
      environment: ["APRS_CLOUD_SERVER_LOGREQUESTS": "true"])

    // Over the limit: 413, whether the body follows or not.
    let big = [UInt8](repeating: UInt8(ascii: "x"), count: 70_000)
    let tooLarge = try ResponderFastCGIConnection.request(unixPath: socketPath, "POST", "/v1/sync", body: big)
      .reply()
    #expect(tooLarge.status == 413)
    #expect(tooLarge.errorText == "request body is larger than 65536 bytes")
    let announced = try ResponderFastCGIConnection.request(
      unixPath: socketPath, "POST", "/v1/sync", contentLength: "99999999999"
    ).reply()
    #expect(announced.status == 413)

    // A body without a length.
    let connection = try ResponderFastCGIConnection(unixPath: socketPath)
    try connection.begin(ResponderFastCGIConnection.params("POST", "/v1/sync"))
    try connection.send(responderSyncBody)
    try connection.endBody()
    let unannounced = try connection.readReply().reply()
    #expect(unannounced.status == 400)
    #expect(unannounced.errorText == "a request body needs a Content-Length")

    // A length that lies.
    let short = try ResponderFastCGIConnection.request(
      unixPath: socketPath, "POST", "/v1/sync", body: responderSyncBody, contentLength: "500"
    ).reply()
    #expect(short.status == 400)
    #expect(short.errorText == "request body ended early (\(responderSyncBody.count) of 500 bytes)")

    // Garbage lengths.
    for length in ["-1", "ten", "1.5"] {
      let reply = try ResponderFastCGIConnection.request(
        unixPath: socketPath, "POST", "/v1/sync", body: responderSyncBody, contentLength: length
      ).reply()
      #expect(reply.status == 400)
      #expect(reply.errorText == "Content-Length is not a valid length")
    }

    // After all of that the workers still answer.
    #expect(
      try ResponderFastCGIConnection.request(unixPath: socketPath, "GET", "/health").reply().status == 200)
    #expect(server.stop() == 0)
    #expect(server.count("status=413") == 2)
    #expect(server.count("status=400") == 5)
  }

  @Test func concurrentRequestsAcrossWorkers() throws {
    let socketPath = directory + "/busy.sock"
    let server = try ResponderServer(
      executable: try ResponderPaths.responder(),
      arguments: ["--listen", socketPath, "--db", database, "--workers", "4"], directory: directory,
      environment: ["APRS_CLOUD_SERVER_LOGREQUESTS": "true"])
    let clients = (0..<8).map { _ in
      ResponderThread { () -> [String] in
        var seen: [String] = []
        for index in 0..<25 {
          do {
            let outcome =
              index % 2 == 0
              ? try ResponderFastCGIConnection.request(unixPath: socketPath, "GET", "/health")
              : try ResponderFastCGIConnection.request(
                unixPath: socketPath, "POST", "/v1/sync", body: responderSyncBody)
            seen.append(String(try outcome.reply().status))
          } catch {
            seen.append("\(error)")
          }
        }
        return seen
      }
    }
    var statuses: [String] = []
    for client in clients { statuses += try #require(client.join(timeout: 60), "a client did not finish") }
    #expect(statuses.count == 200)
    #expect(statuses.filter { $0 != "200" }.isEmpty, "\(statuses.filter { $0 != "200" })")
    #expect(server.stop() == 0)
    #expect(server.count("msg=\"request\"") == 200)
  }

  /// A socket file with nobody listening, as a crashed responder leaves it.
  private func makeStaleSocket(_ path: String) throws {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: Array(path.utf8.prefix(raw.count - 1)))
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    close(fd)
    guard bound == 0 else { throw ResponderTestError("cannot make a stale socket at \(path)") }
  }
}
