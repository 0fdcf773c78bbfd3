import Foundation
import Testing

@testable import FastCGI

/// Records no web server sends: each connection is answered whole or closed (the fates libfcgi
/// gave them, which `RequestParser` keeps), the process survives, and the one worker goes on
/// serving the next request.
@Suite struct HostileRecordTests {
  typealias Client = FastCGIClient

  static let stdinEnd = Client.record(Client.RecordType.stdin.rawValue, [])
  static let paramsEnd = Client.record(Client.RecordType.params.rawValue, [])
  static let sane = Client.encodeParams(Client.params("GET", "/v1/hostile"))

  /// What the server makes of a hostile connection.
  enum Fate: Sendable {
    /// Closed without a byte from the handler (answers to management records, if any, come first).
    case closed
    /// Tolerated (the stray record is skipped, the end of the stream ends the params) and the
    /// handler gets a request, answered whole.
    case answered
  }

  /// The bytes a hostile client sends before it stops sending, and what becomes of them.
  static let cases: [(name: String, bytes: [UInt8], fate: Fate)] = [
    ("nothing at all", [], .closed),
    ("a truncated header", [1, 1, 0], .closed),
    ("a header without its content", Array(Client.begin().prefix(8)), .closed),
    (
      "a content length of 65535 with ten bytes",
      [1, 1, 0, 1, 0xFF, 0xFF, 0, 0] + [UInt8](repeating: 0, count: 10), .closed
    ),
    (
      "a padding length of 255 with no padding",
      Client.record(1, [0, 1, 0, 0, 0, 0, 0, 0], padding: 0).enumerated().map { $0 == 6 ? 255 : $1 },
      .answered
    ),
    (
      "version 2",
      Client.record(1, [0, 1, 0, 0, 0, 0, 0, 0], version: 2) + Client.stream(.params, sane) + paramsEnd
        + stdinEnd, .closed
    ),
    ("version 0", Client.record(1, [0, 1, 0, 0, 0, 0, 0, 0], version: 0), .closed),
    ("an unknown record type first", Client.record(99, [1, 2, 3]) + Client.begin(), .answered),
    ("an unknown management record", Client.record(99, [1, 2, 3], requestID: 0), .closed),
    (
      "FCGI_GET_VALUES",
      Client.record(
        Client.RecordType.getValues.rawValue, Client.encodeParams([("FCGI_MAX_CONNS", "")]), requestID: 0),
      .closed
    ),
    (
      "stdin before begin", Client.record(Client.RecordType.stdin.rawValue, [1, 2, 3]) + Client.begin(),
      .answered
    ),
    (
      "stdin before the params end",
      Client.begin() + Client.stream(.params, sane) + Client.record(Client.RecordType.stdin.rawValue, [1]),
      .answered
    ),
    ("a BEGIN_REQUEST body of 3 bytes", Client.record(1, [0, 1, 0]), .closed),
    (
      "the authorizer role", Client.begin(role: 2) + Client.stream(.params, sane) + paramsEnd + stdinEnd,
      .answered
    ),
    (
      "an unknown role", Client.begin(role: 0xFFFF) + Client.stream(.params, sane) + paramsEnd + stdinEnd,
      .closed
    ),
    ("params for another request id", Client.begin() + Client.record(4, sane, requestID: 9), .answered),
    (
      "a name length of 2^31-1",
      Client.begin() + Client.record(4, [0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x41, 0x42]), .closed
    ),
    (
      "a value length of 2^31-1",
      Client.begin() + Client.record(4, [0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0x41, 0x42]), .closed
    ),
    (
      "a value length of 1 GiB",
      Client.begin() + Client.record(4, [0x01, 0xC0, 0x00, 0x00, 0x00, 0x41, 0x42]), .closed
    ),
    (
      "a name longer than the params",
      Client.begin() + Client.record(4, [0x20, 0x01, 0x41, 0x42]) + paramsEnd, .closed
    ),
    ("a four-byte length cut short", Client.begin() + Client.record(4, [0x80, 0x00]) + paramsEnd, .closed),
    (
      "an abort during the params",
      Client.begin() + Client.record(4, sane) + Client.record(Client.RecordType.abortRequest.rawValue, []),
      .answered
    ),
  ]

  @Test(arguments: 0..<cases.count)
  func hostileRecordsAreAnsweredOrClosedAndTheServerGoesOn(index: Int) throws {
    let (name, bytes, fate) = Self.cases[index]
    let recorder = Recorder()
    let rig = try ServerRig(workers: 1) { _ in echoHandler(recorder) }

    let client = try rig.connect()
    try client.send(bytes)
    client.finishSending()
    let outcome = client.receive()
    switch fate {
    case .closed:
      #expect(outcome.closedWithoutEnd, "\(name)")
      #expect(outcome.stdout.isEmpty, "\(name)")
      #expect(recorder.requests.isEmpty, "\(name): the handler saw \(recorder.requests.map(\.path))")
    case .answered:
      #expect(outcome.ended, "\(name)")
      #expect(outcome.reply?.status == 200, "\(name)")
      #expect(recorder.requests.count == 1, "\(name)")
    }

    // The one worker serves the next request.
    let reply = try #require(
      try rig.exchange(Client.request(Client.params("GET", "/after"))).reply, "\(name): no answer afterwards")
    #expect(reply.status == 200, "\(name)")
    #expect(recorder.requests.last?.path == "/after", "\(name)")
    #expect(rig.stop() == true)
  }

  /// libfcgi (Debian's 2.4.2-2+deb12u1, which has the CVE-2025-23016 fix) aborted the whole
  /// process when a name length and a value length were each valid but their sum overflowed an
  /// `int`. The server reads its records itself now (`ParamsDecoder` checks lengths in 64 bits):
  /// the connection is closed and the responder serves the next request. Run in a child process,
  /// so a regression shows as a failed exit instead of taking the test runner down.
  @Test func paramLengthsWhoseSumOverflowsAnInt() async {
    await #expect(processExitsWith: .success) {
      signal(SIGABRT, SIG_DFL)
      let rig = try ServerRig(workers: 1) { _ in echoHandler(Recorder()) }
      let client = try rig.connect()
      try client.send(Client.begin() + Client.record(4, [0xC0, 0, 0, 0, 0xC0, 0, 0, 0, 0x41]))
      client.finishSending()
      let outcome = client.receive()
      let reply = try rig.exchange(Client.request(Client.params("GET", "/after"))).reply
      exit(outcome.closedWithoutEnd && reply?.status == 200 && rig.stop() == true ? 0 : 1)
    }
  }

  /// A request whose body is cut off (the client stops sending) is still handed over, with the
  /// body refused, and answered on the connection that is left.
  @Test func bodyCutOffMidRecord() throws {
    let recorder = Recorder()
    let rig = try ServerRig(workers: 1) { _ in echoHandler(recorder) }
    let client = try rig.connect()
    let record = Client.record(Client.RecordType.stdin.rawValue, [UInt8](repeating: 0x63, count: 100))
    try client.send(
      Client.begin()
        + Client.stream(.params, Client.encodeParams(Client.params("POST", "/v1/cut", contentLength: "100")))
        + Self.paramsEnd + Array(record.prefix(50)))
    client.finishSending()
    _ = client.receive()
    #expect(recorder.requests.first?.body == .failure(.endedEarly(received: 42, expected: 100)))
    #expect(try rig.exchange(Client.request(Client.params("GET", "/after"))).reply?.status == 200)
    #expect(rig.stop() == true)
  }
}
