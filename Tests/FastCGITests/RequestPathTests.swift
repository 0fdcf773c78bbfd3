import Testing

@testable import FastCGI

/// The pure parts: the path the application routes on, `CONTENT_LENGTH` classification, and
/// the bytes of an answer.
@Suite struct RequestPathTests {
  @Test(
    arguments: [
      // (DOCUMENT_URI, REQUEST_URI, SCRIPT_NAME, PATH_INFO) → path
      ("/v1/sync", nil, nil, nil, "/v1/sync"),
      ("/aprs/v1/sync", "/ignored", nil, nil, "/v1/sync"),
      (nil, "/aprs/v1/register?x=1#f", nil, nil, "/v1/register"),
      ("", "/health?verbose", nil, nil, "/health"),
      (nil, nil, "/cgi-bin/aprs-cloud-fcgi", "/v1/sync", "/v1/sync"),
      (nil, nil, "/cgi-bin/aprs-cloud-fcgi", nil, "/cgi-bin/aprs-cloud-fcgi"),
      (nil, nil, nil, nil, "/"),
      ("/a/v1/b/v1/c", nil, nil, nil, "/v1/c"),
      ("/prefix/v1", nil, nil, nil, "/v1"),
      ("/prefix/metrics", nil, nil, nil, "/metrics"),
      ("/unknown", nil, nil, nil, "/unknown"),
      ("?only=query", nil, nil, nil, "/"),
    ] as [(String?, String?, String?, String?, String)])
  func resolve(
    documentURI: String?, requestURI: String?, scriptName: String?, pathInfo: String?, expected: String
  ) {
    #expect(
      RequestPath.resolve(
        documentURI: documentURI, requestURI: requestURI, scriptName: scriptName, pathInfo: pathInfo)
        == expected)
  }

  @Test func contentLengthClassification() {
    #expect(BodyLength.classify(nil, limit: 10) == .absent)
    #expect(BodyLength.classify("", limit: 10) == .absent)
    #expect(BodyLength.classify("0", limit: 10) == .exact(0))
    #expect(BodyLength.classify("10", limit: 10) == .exact(10))
    #expect(BodyLength.classify("0010", limit: 10) == .exact(10))
    #expect(BodyLength.classify("11", limit: 10) == .tooLarge(11))
    #expect(BodyLength.classify("999999999999999999", limit: 10) == .tooLarge(999_999_999_999_999_999))
    #expect(BodyLength.classify(String(repeating: "9", count: 40), limit: 10) == .tooLarge(Int.max))
    for garbage in ["-1", "+1", " 1", "1 ", "1.5", "0x10", "1e3", "ten", "١"] {
      #expect(BodyLength.classify(garbage, limit: 10) == .invalid, "\(garbage)")
    }
  }

  @Test func responseBytes() {
    let response = Response(
      status: 429, reason: "Too Many\r\nRequests",
      headers: [("Retry-After", "30"), ("STATUS", "200"), ("X-\u{0}A", "b\u{1F}c")], body: Array("{}".utf8))
    #expect(
      String(decoding: response.encoded(), as: UTF8.self)
        == "Status: 429 Too ManyRequests\r\nRetry-After: 30\r\nX-A: bc\r\nContent-Length: 2\r\n\r\n{}")
  }

  @Test func bodyRefusalSentences() {
    #expect(RequestBodyError.tooLarge(limit: 65536).description == "request body is larger than 65536 bytes")
    #expect(RequestBodyError.invalidLength.description == "Content-Length is not a valid length")
    #expect(RequestBodyError.lengthRequired.description == "a request body needs a Content-Length")
    #expect(
      RequestBodyError.endedEarly(received: 3, expected: 500).description
        == "request body ended early (3 of 500 bytes)")
  }
}
