/// FastCGI 1.0 records (the specification's section 3 and 8): the constants this server reads and
/// the records it writes.
enum Record {
  /// Every record starts with this header: version, type, request id (2 bytes), content length
  /// (2 bytes), padding length, a reserved byte.
  static let headerLength = 8
  /// `FCGI_VERSION_1`, the only version there is.
  static let version: UInt8 = 1
  /// The largest content one record carries.
  static let maxContent = 65_535

  static let beginRequest: UInt8 = 1
  static let abortRequest: UInt8 = 2
  static let endRequest: UInt8 = 3
  static let params: UInt8 = 4
  static let stdin: UInt8 = 5
  static let stdout: UInt8 = 6
  static let getValues: UInt8 = 9
  static let getValuesResult: UInt8 = 10
  static let unknownType: UInt8 = 11

  /// `FCGI_KEEP_CONN` in FCGI_BEGIN_REQUEST's flags: the web server keeps the connection open for
  /// another request after this one.
  static let keepConnection: UInt8 = 1
  /// The roles a request may take: responder, authorizer, filter (libfcgi accepts all three; the
  /// handler decides what to do with them).
  static let roles: ClosedRange<UInt16> = 1...3

  /// Appends one record header to `bytes`, with the padding that rounds the content up to a
  /// multiple of 8 (the specification's recommendation).
  static func appendHeader(_ type: UInt8, requestID: UInt16, contentLength: Int, to bytes: inout [UInt8]) {
    let padding = (8 - contentLength % 8) % 8
    bytes.append(version)
    bytes.append(type)
    bytes.append(UInt8(truncatingIfNeeded: requestID >> 8))
    bytes.append(UInt8(truncatingIfNeeded: requestID))
    bytes.append(UInt8(truncatingIfNeeded: contentLength >> 8))
    bytes.append(UInt8(truncatingIfNeeded: contentLength))
    bytes.append(UInt8(padding))
    bytes.append(0)
  }

  /// The padding bytes after a content of `contentLength` bytes.
  static func appendPadding(contentLength: Int, to bytes: inout [UInt8]) {
    let padding = (8 - contentLength % 8) % 8
    for _ in 0..<padding { bytes.append(0) }
  }

  /// A whole answer on the wire: `answer` as FCGI_STDOUT records of at most 65,528 bytes each,
  /// the empty record that ends the stream, and FCGI_END_REQUEST (application status 0,
  /// `FCGI_REQUEST_COMPLETE`). One buffer, so one `write(2)` sends it all.
  static func answer(_ answer: [UInt8], requestID: UInt16) -> [UInt8] {
    let chunk = 65_528
    var bytes: [UInt8] = []
    bytes.reserveCapacity(answer.count + (answer.count / chunk + 1) * 16 + 32)
    var start = 0
    while start < answer.count {
      let end = min(answer.count, start + chunk)
      appendHeader(stdout, requestID: requestID, contentLength: end - start, to: &bytes)
      bytes.append(contentsOf: answer[start..<end])
      appendPadding(contentLength: end - start, to: &bytes)
      start = end
    }
    appendHeader(stdout, requestID: requestID, contentLength: 0, to: &bytes)
    appendEnd(requestID: requestID, to: &bytes)
    return bytes
  }

  /// FCGI_END_REQUEST with application status 0 and protocol status `FCGI_REQUEST_COMPLETE`.
  static func appendEnd(requestID: UInt16, to bytes: inout [UInt8]) {
    appendHeader(endRequest, requestID: requestID, contentLength: 8, to: &bytes)
    bytes.append(contentsOf: [0, 0, 0, 0, 0, 0, 0, 0])
  }

  /// The answer to a management record (request id 0): FCGI_GET_VALUES_RESULT for FCGI_GET_VALUES
  /// (one connection per request, no multiplexing), FCGI_UNKNOWN_TYPE for anything else.
  static func managementReply(type: UInt8, content: [UInt8]) -> [UInt8] {
    var bytes: [UInt8] = []
    guard type == getValues else {
      appendHeader(unknownType, requestID: 0, contentLength: 8, to: &bytes)
      bytes.append(contentsOf: [type, 0, 0, 0, 0, 0, 0, 0])
      return bytes
    }
    let known: [String: String] = [
      "FCGI_MAX_CONNS": "10000", "FCGI_MAX_REQS": "10000", "FCGI_MPXS_CONNS": "0",
    ]
    var pairs: [UInt8] = []
    if let asked = try? ParamsDecoder.decodePairs(content[...]) {
      for (name, _) in asked {
        guard let value = known[name] else { continue }
        pairs.append(UInt8(name.utf8.count))
        pairs.append(UInt8(value.utf8.count))
        pairs.append(contentsOf: name.utf8)
        pairs.append(contentsOf: value.utf8)
      }
    }
    appendHeader(getValuesResult, requestID: 0, contentLength: pairs.count, to: &bytes)
    bytes.append(contentsOf: pairs)
    appendPadding(contentLength: pairs.count, to: &bytes)
    return bytes
  }
}
