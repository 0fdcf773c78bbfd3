import Foundation
import Testing

@testable import FastCGI

#if canImport(Glibc)
  import Glibc
#endif

/// The FastCGI server driven over a real unix socket: parameters, bodies, the body limit,
/// several workers at once, and a handler that forgets to answer.
@Suite struct FastCGIServerTests {
  @Test func parametersMethodPathAndRemoteAddressReachTheHandler() throws {
    let recorder = Recorder()
    let rig = try ServerRig(workers: 1) { _ in echoHandler(recorder) }
    let longName = "HTTP_X_" + String(repeating: "N", count: 200)
    let longValue = String(repeating: "v", count: 70_000)  // more than one FCGI_PARAMS record
    let outcome = try rig.exchange(
      FastCGIClient.request(
        FastCGIClient.params(
          "DELETE", "/prefix/v1/thing?x=1",
          extra: [(longName, longValue), ("SHORT", String(repeating: "s", count: 127)), ("EMPTY", "")])))
    let reply = try #require(outcome.reply)
    #expect(reply.status == 200)
    #expect(reply.header("X-Method") == "DELETE")
    #expect(reply.header("X-Path") == "/v1/thing")
    #expect(reply.header("X-Remote") == "192.0.2.7")
    let request = try #require(recorder.requests.first)
    #expect(request.params[longName] == longValue)
    #expect(request.params["SHORT"]?.utf8.count == 127)
    #expect(request.params["EMPTY"] == "")
    #expect(request.params["GATEWAY_INTERFACE"] == "CGI/1.1")
    #expect(try request.body.get() == [])
    #expect(rig.stop() == true)
  }

  @Test func missingMethodIsGetAndMissingAddressIsEmpty() throws {
    let recorder = Recorder()
    let rig = try ServerRig(workers: 1) { _ in echoHandler(recorder) }
    let reply = try #require(
      try rig.exchange(FastCGIClient.request([("REQUEST_METHOD", ""), ("SCRIPT_NAME", "/health")])).reply)
    #expect(reply.header("X-Method") == "GET")
    #expect(reply.header("X-Path") == "/health")
    #expect(recorder.requests.first?.remoteAddress == "")
    #expect(rig.stop() == true)
  }

  @Test(arguments: [1, 7, 4096, 65_535])
  func bodySplitOverSeveralStdinRecords(chunk: Int) throws {
    let recorder = Recorder()
    let rig = try ServerRig(workers: 1, bodyLimit: 300_000) { _ in echoHandler(recorder) }
    let body = (0..<(chunk == 1 ? 50 : 200_000)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    let outcome = try rig.exchange(
      FastCGIClient.request(
        FastCGIClient.params("POST", "/v1/sync", body: body), body: body, bodyChunk: chunk))
    let reply = try #require(outcome.reply)
    #expect(reply.status == 200)
    #expect(reply.body == body)
    #expect(reply.header("Content-Length") == String(body.count))
    #expect(outcome.ended)
    #expect(rig.stop() == true)
  }

  @Test func emptyBodies() throws {
    let recorder = Recorder()
    let rig = try ServerRig(workers: 1) { _ in echoHandler(recorder) }
    // No CONTENT_LENGTH and no body; CONTENT_LENGTH 0; an empty CONTENT_LENGTH.
    for params in [
      FastCGIClient.params("POST", "/v1/sync"),
      FastCGIClient.params("POST", "/v1/sync", contentLength: "0"),
      FastCGIClient.params("POST", "/v1/sync", contentLength: ""),
    ] {
      let reply = try #require(try rig.exchange(FastCGIClient.request(params)).reply)
      #expect(reply.status == 200)
      #expect(reply.body.isEmpty)
    }
    #expect(recorder.requests.map { try? $0.body.get() } == [[], [], []])
    #expect(rig.stop() == true)
  }

  @Test func bodyChecksBeforeTheHandler() throws {
    let recorder = Recorder()
    let rig = try ServerRig(workers: 2) { _ in echoHandler(recorder) }
    let atLimit = [UInt8](repeating: 0x61, count: 1000)
    let overLimit = atLimit + [0x61]
    let cases: [(params: [(String, String)], body: [UInt8], expected: Result<[UInt8], RequestBodyError>)] = [
      (FastCGIClient.params("POST", "/v1/a", body: atLimit), atLimit, .success(atLimit)),
      (FastCGIClient.params("POST", "/v1/a", body: overLimit), overLimit, .failure(.tooLarge(limit: 1000))),
      // Announced but never sent: answered after the empty stdin record.
      (
        FastCGIClient.params("POST", "/v1/a", contentLength: "99999999999999999999"), [],
        .failure(.tooLarge(limit: 1000))
      ),
      (FastCGIClient.params("POST", "/v1/a"), Array("x".utf8), .failure(.lengthRequired)),
      (
        FastCGIClient.params("POST", "/v1/a", contentLength: "500"), Array("short".utf8),
        .failure(.endedEarly(received: 5, expected: 500))
      ),
      (FastCGIClient.params("POST", "/v1/a", contentLength: "-1"), Array("x".utf8), .failure(.invalidLength)),
      (
        FastCGIClient.params("POST", "/v1/a", contentLength: "1.5"), Array("x".utf8), .failure(.invalidLength)
      ),
      (FastCGIClient.params("POST", "/v1/a", contentLength: " 1"), Array("x".utf8), .failure(.invalidLength)),
    ]
    for (params, body, _) in cases {
      let reply = try #require(try rig.exchange(FastCGIClient.request(params, body: body)).reply)
      #expect(reply.status == 200 || reply.status == 413 || reply.status == 400)
    }
    let seen = recorder.requests.map(\.body)
    #expect(seen.count == cases.count)
    for (index, expected) in cases.map(\.expected).enumerated() where index < seen.count {
      #expect(seen[index] == expected, "case \(index)")
    }
    #expect(rig.stop() == true)
  }

  /// A body far over the limit is answered after at most 1 MiB of it was read (and thrown
  /// away), while the client is still sending: the client holds back the rest of its body
  /// until the answer is in.
  @Test func overLimitBodyIsAnsweredBeforeTheClientHasSentIt() throws {
    let recorder = Recorder()
    let rig = try ServerRig(workers: 1) { _ in echoHandler(recorder) }
    let client = try rig.connect()
    let announced = 8 << 20
    try client.send(
      FastCGIClient.begin()
        + FastCGIClient.stream(
          .params,
          FastCGIClient.encodeParams(FastCGIClient.params("POST", "/v1/a", contentLength: String(announced))))
        + FastCGIClient.record(FastCGIClient.RecordType.params.rawValue, []))
    let answered = Gate()
    let fd = client.fd
    let sender = Background { () -> Bool in
      let record = FastCGIClient.record(
        FastCGIClient.RecordType.stdin.rawValue, [UInt8](repeating: 0x62, count: 65_535))
      for _ in 0..<32 {  // 2 MiB
        let written = record.withUnsafeBytes { send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
        if written != record.count { return false }
      }
      let answeredFirst = answered.waitUntilOpen()
      shutdown(fd, Int32(SHUT_WR))
      return answeredFirst
    }
    let outcome = client.receive()
    answered.open()
    let reply = try #require(outcome.reply)
    #expect(reply.status == 413)
    #expect(reply.text == "request body is larger than 1000 bytes")
    #expect(outcome.ended)
    #expect(sender.join() == true, "the answer came only after the client stopped sending")
    #expect(try #require(recorder.requests.first).body == .failure(.tooLarge(limit: 1000)))
    #expect(rig.stop() == true)
  }

  /// Four requests are inside the handlers at the same moment, one on each worker.
  @Test func concurrentRequestsAcrossWorkers() throws {
    let gate = Gate()
    let rig = try ServerRig(workers: 4) { index in
      { _, writer in
        gate.arrive()
        let together = gate.wait(forArrivals: 4)
        writer.send(
          Response(
            status: together ? 200 : 500, reason: together ? "OK" : "Alone", body: Array("\(index)".utf8)))
      }
    }
    let path = rig.socketPath
    let clients = (0..<4).map { _ in
      Background { () -> String in
        do {
          let outcome = try FastCGIClient.exchange(
            path: path, FastCGIClient.request(FastCGIClient.params("GET", "/health")))
          guard let reply = outcome.reply, reply.status == 200 else { return "no answer: \(outcome)" }
          return reply.text
        } catch {
          return "\(error)"
        }
      }
    }
    let workers = try clients.map { try #require($0.join(timeout: 30)) }
    #expect(Set(workers) == ["0", "1", "2", "3"])
    #expect(rig.stop() == true)
  }

  /// Many clients at once, each body answered to its own sender.
  @Test func manyRequestsOverSeveralWorkersKeepTheirBodiesApart() throws {
    let recorder = Recorder()
    let rig = try ServerRig(workers: 3, bodyLimit: 10_000) { _ in echoHandler(recorder) }
    let path = rig.socketPath
    let clients = (0..<6).map { client in
      Background { () -> [String] in
        var problems: [String] = []
        for index in 0..<20 {
          let body =
            Array("client \(client) request \(index) ".utf8)
            + [UInt8](repeating: UInt8(index), count: index * 97)
          do {
            let outcome = try FastCGIClient.exchange(
              path: path,
              FastCGIClient.request(
                FastCGIClient.params("POST", "/v1/echo", body: body), body: body, bodyChunk: 100))
            if outcome.reply?.body != body { problems.append("\(client)/\(index): \(outcome)") }
          } catch {
            problems.append("\(client)/\(index): \(error)")
          }
        }
        return problems
      }
    }
    for client in clients {
      let problems = try #require(client.join(timeout: 60), "a client did not finish")
      #expect(problems.isEmpty, "\(problems)")
    }
    #expect(recorder.requests.count == 120)
    #expect(rig.stop() == true)
  }

  @Test func aHandlerThatSendsNothingIsAnswered500AndASecondSendIsRefused() throws {
    let seconds = Recorder()
    let rig = try ServerRig(workers: 1) { _ in
      { request, writer in
        guard request.path == "/twice" else { return }
        writer.send(Response(status: 200, reason: "OK", body: Array("first".utf8)))
        let second = writer.send(Response(status: 201, reason: "Created", body: Array("second".utf8)))
        if !second.delivered { seconds.record(request) }
      }
    }
    let silent = try #require(
      try rig.exchange(FastCGIClient.request(FastCGIClient.params("GET", "/silent"))).reply)
    #expect(silent.status == 500)
    #expect(silent.body.isEmpty)
    #expect(rig.log.wait(for: "msg=\"the handler sent no answer\" method=GET path=/silent"))
    let twice = try #require(
      try rig.exchange(FastCGIClient.request(FastCGIClient.params("GET", "/twice"))).reply)
    #expect(twice.status == 200)
    #expect(twice.text == "first")
    #expect(seconds.requests.count == 1)
    #expect(rig.stop() == true)
  }

  @Test func requestStartedIsLoggedBeforeTheBodyIsRead() throws {
    let rig = try ServerRig(workers: 1) { _ in echoHandler(Recorder()) }
    let client = try rig.connect()
    let body = Array("0123456789".utf8)
    try client.send(
      FastCGIClient.begin()
        + FastCGIClient.stream(
          .params, FastCGIClient.encodeParams(FastCGIClient.params("PUT", "/v1/x", body: body)))
        + FastCGIClient.record(FastCGIClient.RecordType.params.rawValue, [])
        + FastCGIClient.record(FastCGIClient.RecordType.stdin.rawValue, Array(body[..<4])))
    #expect(rig.log.wait(for: "level=debug msg=\"request started\" method=PUT path=/v1/x"))
    try client.send(
      FastCGIClient.record(FastCGIClient.RecordType.stdin.rawValue, Array(body[4...]))
        + FastCGIClient.record(FastCGIClient.RecordType.stdin.rawValue, []))
    #expect(client.receive().reply?.body == body)
    #expect(rig.stop() == true)
  }
}
