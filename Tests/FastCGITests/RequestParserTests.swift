import Testing

@testable import FastCGI

/// `RequestParser` without sockets: the same records whole, byte by byte, cut by the end of the
/// stream; management records; kept connections; aborts after the hand-over.
@Suite struct RequestParserTests {
  typealias Client = FastCGIClient

  static func parameters(_ parser: inout RequestParser) -> [String: String] {
    (try? ParamsDecoder.decodeParameters(parser.takeParameters()[...])) ?? [:]
  }

  static func feed(_ parser: inout RequestParser, _ bytes: [UInt8]) -> RequestParser.Event {
    bytes.withUnsafeBytes { parser.feed($0) }
  }

  /// Feeds `bytes` in pieces of `chunk`, following `started` with `next()`, and returns every
  /// event other than `needMore`.
  static func events(_ bytes: [UInt8], chunk: Int, bodyLimit: Int = 1000) -> [RequestParser.Event] {
    var parser = RequestParser(bodyLimit: bodyLimit)
    var seen: [RequestParser.Event] = []
    var start = 0
    while start < bytes.count {
      var event = feed(&parser, Array(bytes[start..<min(bytes.count, start + chunk)]))
      while event != .needMore {
        seen.append(event)
        if case .ready = event { break }
        event = parser.next()
      }
      start += chunk
    }
    return seen
  }

  @Test(arguments: [1, 3, 8, 9, 1000])
  func aRequestInPiecesOfAnySize(chunk: Int) {
    let body = Array("{\"callsign\":\"N0CALL\"}".utf8)
    let bytes = Client.request(Client.params("POST", "/v1/sync", body: body), body: body, bodyChunk: 5)
    #expect(Self.events(bytes, chunk: chunk) == [.started, .ready(.success(body))])
  }

  @Test func parametersAndTheEndOfTheBody() throws {
    var parser = RequestParser(bodyLimit: 1000)
    let body = Array("abc".utf8)
    let bytes = Client.request(Client.params("PUT", "/v1/x", body: body), body: body)
    #expect(Self.feed(&parser, bytes) == .started)
    let parameters = try ParamsDecoder.decodeParameters(parser.takeParameters()[...])
    #expect(parameters["REQUEST_METHOD"] == "PUT" && parameters["CONTENT_LENGTH"] == "3")
    #expect(parser.next() == .ready(.success(body)))
    #expect(parser.stdinEnded)
    #expect(parser.phase == .complete)
    #expect(!parser.keepConnection)
  }

  @Test func aBodyOverTheLimitIsRefusedRightAfterTheParameters() {
    var parser = RequestParser(bodyLimit: 10)
    let head =
      Client.begin()
      + Client.stream(.params, Client.encodeParams(Client.params("POST", "/", contentLength: "11")))
      + Client.record(Client.RecordType.params.rawValue, [])
    #expect(Self.feed(&parser, head) == .started)
    #expect(parser.next() == .ready(.failure(.tooLarge(limit: 10))))
    #expect(!parser.stdinEnded)
    // The body that follows is skipped; its end is noted.
    let rest =
      Client.stream(.stdin, [UInt8](repeating: 1, count: 11))
      + Client.record(Client.RecordType.stdin.rawValue, [])
    #expect(Self.feed(&parser, rest) == .needMore)
    #expect(parser.stdinEnded)
  }

  @Test func theEndOfTheStreamEndsParametersAndBody() {
    var parser = RequestParser(bodyLimit: 1000)
    let params = Client.encodeParams(Client.params("POST", "/cut", contentLength: "10"))
    #expect(
      Self.feed(&parser, Client.begin() + Client.record(Client.RecordType.params.rawValue, params))
        == .needMore)
    #expect(parser.endOfInput() == .started)
    #expect(Self.parameters(&parser)["DOCUMENT_URI"] == "/cut")
    #expect(parser.endOfInput() == .ready(.failure(.endedEarly(received: 0, expected: 10))))
    #expect(parser.endOfInput() == .ended)
  }

  @Test func managementRecordsAreAnswered() {
    var parser = RequestParser(bodyLimit: 1000)
    let values = Client.record(
      Client.RecordType.getValues.rawValue, Client.encodeParams([("FCGI_MPXS_CONNS", ""), ("OTHER", "")]),
      requestID: 0)
    #expect(Self.feed(&parser, values + Client.record(99, [1], requestID: 0)) == .needMore)
    let replies = parser.takeReplies()
    let expected =
      Client.record(10, Client.encodeParams([("FCGI_MPXS_CONNS", "0")]), requestID: 0)
      + Client.record(11, [99, 0, 0, 0, 0, 0, 0, 0], requestID: 0)
    #expect(replies == expected)
    #expect(parser.takeReplies().isEmpty)
  }

  @Test func aKeptConnectionReadsTheNextRequestAfterReset() {
    var parser = RequestParser(bodyLimit: 1000)
    let one =
      Client.begin(flags: 1) + Client.stream(.params, Client.encodeParams(Client.params("GET", "/1")))
      + Client.record(Client.RecordType.params.rawValue, [])
      + Client.record(Client.RecordType.stdin.rawValue, [])
    let two =
      Client.begin(flags: 1, requestID: 2)
      + Client.record(
        Client.RecordType.params.rawValue, Client.encodeParams(Client.params("GET", "/2")), requestID: 2)
      + Client.record(Client.RecordType.params.rawValue, [], requestID: 2)
      + Client.record(Client.RecordType.stdin.rawValue, [], requestID: 2)
    #expect(Self.feed(&parser, one + two) == .started)
    #expect(parser.keepConnection)
    #expect(Self.parameters(&parser)["DOCUMENT_URI"] == "/1")
    #expect(parser.next() == .ready(.success([])))
    #expect(parser.hasBufferedInput)
    parser.reset()
    #expect(parser.next() == .started)
    #expect(parser.requestID == 2)
    #expect(Self.parameters(&parser)["DOCUMENT_URI"] == "/2")
    #expect(parser.next() == .ready(.success([])))
  }

  @Test func anAbortAfterTheHandOverIsReported() {
    var parser = RequestParser(bodyLimit: 1000)
    #expect(Self.feed(&parser, Client.request(Client.params("GET", "/held"))) == .started)
    #expect(parser.next() == .ready(.success([])))
    #expect(
      Self.feed(&parser, Client.record(Client.RecordType.abortRequest.rawValue, [], requestID: 9))
        == .needMore)
    #expect(Self.feed(&parser, Client.record(Client.RecordType.abortRequest.rawValue, [])) == .aborted)
  }

  @Test func parametersOverTheirLimitEndTheConnection() {
    var parser = RequestParser(bodyLimit: 1000)
    var event = Self.feed(&parser, Client.begin())
    let chunk = Client.record(Client.RecordType.params.rawValue, [UInt8](repeating: 0x41, count: 65_535))
    var sent = 0
    while event == .needMore && sent <= RequestParser.paramsLimit {
      event = Self.feed(&parser, chunk)
      sent += 65_535
    }
    #expect(event == .invalid("the parameters are larger than 1048576 bytes"))
  }

  /// A request over FastCGI keeps its parameters as bytes: the dictionary and single lookups agree,
  /// the first of a name sent twice wins.
  @Test func parametersFromBytesAsADictionaryOrOneByOne() {
    let raw = Client.encodeParams([("CONTENT_TYPE", "application/json"), ("X", "1"), ("X", "2"), ("É", "ü")])
    let request = Request(rawParams: raw, method: "POST", path: "/", body: .success([]), remoteAddress: "")
    #expect(request.params == ["CONTENT_TYPE": "application/json", "X": "1", "É": "ü"])
    #expect(request.contentType == "application/json" && request.parameter("X") == "1")
    #expect(request.parameter("É") == "ü" && request.parameter("MISSING") == nil)
    var changed = request
    changed.params["X"] = "3"
    #expect(changed.parameter("X") == "3" && changed.params.count == 3)
  }

  @Test func headersLoseControlCharactersAndServerHeaders() {
    let response = Response(
      status: 200, reason: "O\r\nK",
      headers: [("X-A", "v\u{7F}1\n"), ("content-LENGTH", "9"), ("STATUS", "1")],
      body: Array("hi".utf8))
    #expect(
      String(decoding: response.encoded(), as: UTF8.self)
        == "Status: 200 OK\r\nX-A: v1\r\nContent-Length: 2\r\n\r\nhi")
  }

  @Test func namesAndValuesOfEveryLength() throws {
    let pairs = [
      ("A", ""), (String(repeating: "n", count: 127), String(repeating: "v", count: 128)), ("É", "ü"),
    ]
    let decoded = try ParamsDecoder.decodePairs(Client.encodeParams(pairs)[...])
    #expect(decoded.map(\.0) == pairs.map(\.0) && decoded.map(\.1) == pairs.map(\.1))
    #expect(throws: ParamsDecoder.Malformed.self) { try ParamsDecoder.decodePairs([0x80, 0, 0][...]) }
    #expect(throws: ParamsDecoder.Malformed.self) {
      try ParamsDecoder.decodePairs([0xC0, 0, 0, 0, 0xC0, 0, 0, 0, 0x41][...])
    }
  }
}

/// The keeper's bookkeeping of parked requests.
@Suite struct ParkedSetTests {
  @Test func wakeTakesOnlyWhatItsKeyPassed() {
    var set = ParkedSet()
    set.insert(.init(key: "A", after: 10, deadline: 100), id: 1)
    set.insert(.init(key: "A", after: 20, deadline: 100), id: 2)
    set.insert(.init(key: "B", after: 0, deadline: 100), id: 3)
    #expect(set.wake(key: "A", newest: 10).isEmpty)
    #expect(set.wake(key: "A", newest: 15) == [1])
    #expect(set.wake(key: "C", newest: 99).isEmpty)
    #expect(set.count == 2)
    #expect(set.wake(key: "A", newest: 21) == [2])
    #expect(set[3] == .init(key: "B", after: 0, deadline: 100))
  }

  @Test func deadlinesInOrderSkippingWhatLeft() {
    var set = ParkedSet()
    for (id, deadline) in [(1, 50), (2, 10), (3, 30), (4, 20)] as [(UInt64, Int64)] {
      set.insert(.init(key: "K\(id)", after: 0, deadline: deadline), id: id)
    }
    set.remove(2)
    #expect(set.nextDeadline() == 20)
    #expect(set.expired(now: 29) == [4])
    #expect(set.expired(now: 60) == [3, 1])
    #expect(set.nextDeadline() == nil)
    #expect(set.isEmpty)
  }

  @Test func parkedAgainUnderTheSameIDKeepsOneEntry() {
    var set = ParkedSet()
    set.insert(.init(key: "A", after: 0, deadline: 10), id: 7)
    #expect(set.wake(key: "A", newest: 1) == [7])
    set.insert(.init(key: "A", after: 1, deadline: 10), id: 7)
    #expect(set.expired(now: 10) == [7])
    #expect(set.expired(now: 10).isEmpty)
    set.insert(.init(key: "B", after: 0, deadline: 10), id: 8)
    set.insert(.init(key: "B", after: 0, deadline: 10), id: 9)
    #expect(Set(set.removeAll()) == [8, 9])
    #expect(set.isEmpty && set.wake(key: "B", newest: 5).isEmpty)
  }
}
