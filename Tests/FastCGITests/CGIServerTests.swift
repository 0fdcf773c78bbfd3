import Foundation
import Logging
import Testing

@testable import FastCGI

#if canImport(Glibc)
  import Glibc
#endif

/// Plain CGI with the environment passed in and pipes for standard input and output.
@Suite struct CGIServerTests {
  /// Runs one CGI request: `input` is all standard input holds; returns what the handler saw,
  /// the bytes written to standard output and what was left unread on standard input.
  func run(
    _ environment: [String: String], input: [UInt8], bodyLimit: Int = 1000,
    handler: @escaping Handler = { request, writer in
      writer.send(Response(status: 200, reason: "OK", body: (try? request.body.get()) ?? []))
    }
  ) throws -> (request: Request?, output: [UInt8], unread: [UInt8]) {
    var stdin: [Int32] = [-1, -1]
    var stdout: [Int32] = [-1, -1]
    try #require(pipe(&stdin) == 0 && pipe(&stdout) == 0)
    defer {
      close(stdin[0])
      close(stdout[0])
    }
    try #require(input.count < 60_000, "must fit in a pipe")
    input.withUnsafeBytes { _ = write(stdin[1], $0.baseAddress, $0.count) }
    close(stdin[1])
    var seen: Request?
    let logCapture = LogCapture()
    defer { logCapture.close() }
    CGIServer(
      environment: environment, bodyLimit: bodyLimit,
      logger: Logger(level: .debug, fileDescriptor: logCapture.writeFd), input: stdin[0], output: stdout[1]
    ).serve { request, writer in
      seen = request
      handler(request, &writer)
    }
    close(stdout[1])
    return (seen, readAll(stdout[0]), readAll(stdin[0]))
  }

  func readAll(_ fd: Int32) -> [UInt8] {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count <= 0 { return bytes }
      bytes += buffer[0..<count]
    }
  }

  @Test func environmentAndStdinInStatusHeadersAndBodyOut() throws {
    let environment = [
      "GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "POST", "SCRIPT_NAME": "/cgi-bin/aprs-cloud-fcgi",
      "PATH_INFO": "/v1/sync", "CONTENT_LENGTH": "5", "CONTENT_TYPE": "application/json",
      "REMOTE_ADDR": "198.51.100.4", "PATH": "/usr/bin",
    ]
    let run = try run(environment, input: Array("hello, and more than CONTENT_LENGTH".utf8)) {
      request, writer in
      writer.send(
        Response(
          status: 201, reason: "Created",
          headers: [
            ("Content-Type", "text/plain"), ("X-Evil\r\nSet-Cookie", "a\nb\u{7F}c"), ("Status", "200"),
            ("content-length", "99"),
          ],
          body: (try? request.body.get()) ?? []))
    }
    let request = try #require(run.request)
    #expect(request.method == "POST")
    #expect(request.path == "/v1/sync")
    #expect(request.contentType == "application/json")
    #expect(request.remoteAddress == "198.51.100.4")
    #expect(request.params == environment)
    #expect(try request.body.get() == Array("hello".utf8))
    #expect(
      String(decoding: run.output, as: UTF8.self)
        == "Status: 201 Created\r\nContent-Type: text/plain\r\nX-EvilSet-Cookie: abc\r\nContent-Length: 5\r\n\r\nhello"
    )
    // CGI promises CONTENT_LENGTH bytes only: the rest stays unread.
    #expect(run.unread == Array(", and more than CONTENT_LENGTH".utf8))
  }

  @Test func withoutContentLengthStdinIsNotRead() throws {
    let run = try run(
      ["REQUEST_METHOD": "POST", "SCRIPT_NAME": "/v1/sync"], input: Array("unannounced".utf8))
    #expect(try #require(run.request).body == .success([]))
    #expect(run.unread == Array("unannounced".utf8))
  }

  @Test func overTheLimitIsRefusedAndOnlyTheAnnouncedBytesAreDrained() throws {
    let input = [UInt8](repeating: 0x78, count: 5000) + Array("next".utf8)
    let run = try run(["CONTENT_LENGTH": "5000", "SCRIPT_NAME": "/v1/sync"], input: input)
    #expect(try #require(run.request).body == .failure(.tooLarge(limit: 1000)))
    #expect(run.unread == Array("next".utf8))
  }

  @Test func aBodyThatEndsEarlyOrAnInvalidLengthIsRefused() throws {
    let early = try run(["CONTENT_LENGTH": "10"], input: Array("abc".utf8))
    #expect(early.request?.body == .failure(.endedEarly(received: 3, expected: 10)))
    let invalid = try run(["CONTENT_LENGTH": "ten"], input: Array("abc".utf8))
    #expect(invalid.request?.body == .failure(.invalidLength))
    #expect(invalid.unread == Array("abc".utf8))
  }

  @Test func aHandlerThatSendsNothingIsAnswered500() throws {
    let run = try run(["SCRIPT_NAME": "/v1/sync"], input: []) { _, _ in }
    #expect(
      String(decoding: run.output, as: UTF8.self)
        == "Status: 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n")
  }

  @Test func answerWithoutARequest() throws {
    var fds: [Int32] = [-1, -1]
    try #require(pipe(&fds) == 0)
    #expect(
      CGIServer.answer(
        Response(status: 503, reason: "Service Unavailable", body: Array("{}".utf8)), output: fds[1]))
    close(fds[1])
    #expect(
      String(decoding: readAll(fds[0]), as: UTF8.self)
        == "Status: 503 Service Unavailable\r\nContent-Length: 2\r\n\r\n{}")
    close(fds[0])
  }
}
