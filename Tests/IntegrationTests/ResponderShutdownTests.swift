import Foundation
import JSON
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// SIGTERM during load: requests in flight complete with 200, nothing is cut off half-way, the
/// process exits 0. Idle workers blocked waiting for connections wake at once.
@Suite struct ResponderShutdownTests {
  enum Listen: CaseIterable {
    case unix
    case tcp
    case inherited
  }

  @Test(arguments: Listen.allCases)
  func sigtermFinishesRequestsInFlightAndExitsZero(listen: Listen) throws {
    let directory = try ResponderPaths.temporaryDirectory("stop")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let socketPath = directory + "/stop.sock"
    var port: Int?
    var server: ResponderServer?
    let common = ["--db", directory + "/aprs.sqlite", "--workers", "4", "--log-level", "debug"]
    switch listen {
    case .unix:
      server = try ResponderServer(
        executable: try ResponderPaths.responder(), arguments: ["--listen", socketPath] + common,
        directory: directory)
    case .tcp:
      for _ in 0..<4 where server == nil {
        let candidate = try responderFreePort()
        server = try? ResponderServer(
          executable: try ResponderPaths.responder(),
          arguments: ["--listen", "127.0.0.1:\(candidate)"] + common,
          directory: directory)
        port = candidate
      }
    case .inherited:
      server = try ResponderServer(
        executable: try ResponderPaths.tool("spawn-fcgi"),
        arguments: ["-n", "-s", socketPath, "--", try ResponderPaths.responder()] + common,
        directory: directory)
    }
    let responder = try #require(server)
    let tcpPort = port
    let unixPath: String? = tcpPort == nil ? socketPath : nil
    func connect() throws -> ResponderFastCGIConnection {
      try ResponderFastCGIConnection(unixPath: unixPath, tcpPort: tcpPort)
    }

    // Three requests in flight: accepted by a worker, half their body sent.
    var inFlight: [ResponderFastCGIConnection] = []
    let half = responderSyncBody.count / 2
    for _ in 0..<3 {
      let connection = try connect()
      try connection.begin(ResponderFastCGIConnection.params("POST", "/v1/sync", body: responderSyncBody))
      try connection.send(Array(responderSyncBody[..<half]))
      inFlight.append(connection)
    }
    #expect(responderWait(timeout: 20) { responder.count("msg=\"request started\" method=POST") == 3 })

    // Load through the fourth worker while the signal arrives.
    let stopLoad = ResponderFlag()
    let load = ResponderThread { () -> (ok: Int, refused: Int, broken: [String]) in
      var ok = 0
      var refused = 0
      var broken: [String] = []
      for _ in 0..<10_000 {
        if stopLoad.isSet { break }
        guard let connection = try? ResponderFastCGIConnection(unixPath: unixPath, tcpPort: tcpPort) else {
          refused += 1
          break
        }
        do {
          try connection.begin(ResponderFastCGIConnection.params("GET", "/health"))
          try connection.endBody()
        } catch {
          refused += 1
          break
        }
        switch connection.readReply() {
        case .complete(let reply):
          if reply.status == 200 { ok += 1 } else { broken.append("status \(reply.status)") }
        case .noAnswer:
          refused += 1
        case .broken(let reason):
          broken.append(reason)
        }
        if refused > 0 { break }
      }
      return (ok, refused, broken)
    }
    #expect(responderWait(timeout: 20) { responder.count("msg=\"request\" method=GET path=/health") >= 20 })

    kill(responder.pid, SIGTERM)
    #expect(
      responderWait(timeout: 20) { responder.count("msg=\"stopping: finishing requests in flight\"") == 1 })
    // Idle workers have left; the busy ones wait for their clients.
    #expect(responder.exitStatus == nil)

    for connection in inFlight {
      try connection.send(Array(responderSyncBody[half...]))
      try connection.endBody()
    }
    for connection in inFlight {
      let reply = try connection.readReply().reply()
      #expect(reply.status == 200, "\(reply.bodyText)")
      guard case .object(let object)? = reply.json else {
        Issue.record("not JSON: \(reply.bodyText)")
        continue
      }
      #expect(object["serverTime"] != nil)
    }

    #expect(responderWait(timeout: 20) { responder.exitStatus != nil })
    stopLoad.set()
    let result = try #require(load.join(timeout: 30), "the load thread did not finish")
    #expect(responder.exitStatus == 0, "\(responder.log)")
    #expect(result.ok >= 20)
    #expect(result.broken.isEmpty, "answers cut off: \(result.broken)")
    #expect(responder.log.contains("aprs-cloud-fcgi stopped"))
    if listen == .unix { #expect(!FileManager.default.fileExists(atPath: socketPath)) }
  }

  @Test func idleServerStopsAtOnceOnSigint() throws {
    let directory = try ResponderPaths.temporaryDirectory("idle")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let socketPath = directory + "/idle.sock"
    let responder = try ResponderServer(
      executable: try ResponderPaths.responder(),
      arguments: ["--listen", socketPath, "--db", directory + "/aprs.sqlite", "--workers", "16"],
      directory: directory)
    let started = Date()
    #expect(responder.stop(signal: SIGINT, timeout: 10) == 0)
    #expect(Date().timeIntervalSince(started) < 5)
    #expect(responder.log.contains("signal=INT"))
  }
}
