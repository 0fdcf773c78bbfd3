import Foundation
import Testing

@testable import FastCGI

/// `stop()`: idle workers leave at once, requests in flight (in the handler, or with half their
/// body still to come) finish and are answered whole, connections that come after are not served.
@Suite struct StopTests {
  @Test func idleServerStopsAtOnce() throws {
    let rig = try ServerRig(workers: 16) { _ in echoHandler(Recorder()) }
    // One answered request first, so the workers are known to be up and waiting.
    #expect(
      try rig.exchange(FastCGIClient.request(FastCGIClient.params("GET", "/health"))).reply?.status == 200)
    #expect(rig.stop(timeout: 10) == true)
    #expect(rig.log.count("msg=\"stopping: finishing requests in flight\"") == 1)
  }

  @Test func requestsInFlightFinishAndLaterConnectionsAreNotServed() throws {
    let gate = Gate()
    let recorder = Recorder()
    let rig = try ServerRig(workers: 2) { _ in
      { request, writer in
        recorder.record(request)
        if request.path == "/slow" {
          gate.arrive()
          _ = gate.waitUntilOpen()
        }
        writer.send(Response(status: 200, reason: "OK", body: (try? request.body.get()) ?? []))
      }
    }

    // Worker 1: inside the handler.
    let slow = try rig.connect()
    try slow.send(FastCGIClient.request(FastCGIClient.params("GET", "/slow")))
    #expect(gate.wait(forArrivals: 1))

    // Worker 2: accepted, half the body read.
    let body = Array("the whole body, in two halves".utf8)
    let half = try rig.connect()
    try half.send(
      FastCGIClient.begin()
        + FastCGIClient.stream(
          .params, FastCGIClient.encodeParams(FastCGIClient.params("POST", "/half", body: body)))
        + FastCGIClient.record(FastCGIClient.RecordType.params.rawValue, [])
        + FastCGIClient.record(FastCGIClient.RecordType.stdin.rawValue, Array(body[..<10])))
    #expect(rig.log.wait(for: "msg=\"request started\" method=POST path=/half"))

    rig.server.stop()
    rig.server.stop()
    #expect(rig.log.wait(for: "msg=\"stopping: finishing requests in flight\""))
    #expect(rig.log.wait(for: "msg=\"already stopping; waiting for requests in flight\""))
    #expect(!rig.hasFinished)

    // Queued in the backlog after the stop: never accepted.
    let late = try rig.connect()
    try late.send(FastCGIClient.request(FastCGIClient.params("GET", "/late")))

    try half.send(
      FastCGIClient.record(FastCGIClient.RecordType.stdin.rawValue, Array(body[10...]))
        + FastCGIClient.record(FastCGIClient.RecordType.stdin.rawValue, []))
    let halfOutcome = half.receive()
    #expect(halfOutcome.ended)
    #expect(halfOutcome.reply?.body == body)
    #expect(!rig.hasFinished)

    gate.open()
    let slowOutcome = slow.receive()
    #expect(slowOutcome.ended)
    #expect(slowOutcome.reply?.status == 200)

    #expect(rig.stop() == true)
    let lateOutcome = late.receive()
    #expect(lateOutcome.records.isEmpty)
    #expect(lateOutcome.closedWithoutEnd)
    #expect(recorder.requests.map(\.path) == ["/slow", "/half"])
  }
}
