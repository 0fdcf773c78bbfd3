import CCurl

/// One blocking HTTP(S) exchange for the operator's tools (`aprs-cloud conformance`): any method, the
/// answer's every header, nothing followed (a redirect is answered as it came).
public struct PlainHTTPRequest: Sendable {
  /// `GET`, `POST`, `HEAD`, … as sent.
  public var method: String
  /// The full `http://` or `https://` URL.
  public var url: String
  /// Header lines, `name: value`.
  public var headers: [String]
  /// The body, nil for none.
  public var body: [UInt8]?
  /// The whole exchange's limit, ms.
  public var timeoutMs: Int
  /// A CA bundle (PEM) to trust instead of the system's, for `https://`.
  public var caFile: String?

  public init(
    method: String, url: String, headers: [String] = [], body: [UInt8]? = nil, timeoutMs: Int = 20_000,
    caFile: String? = nil
  ) {
    self.method = method
    self.url = url
    self.headers = headers
    self.body = body
    self.timeoutMs = timeoutMs
    self.caFile = caFile
  }
}

/// What a server answered to a ``PlainHTTPRequest``.
public struct PlainHTTPAnswer: Sendable {
  /// The HTTP status.
  public var status: Int
  /// The header fields of the final answer (not of a `100 Continue`), in the order they came, names as sent.
  public var headers: [(name: String, value: String)]
  /// The body, at most ``PlainHTTP/maxBodyBytes`` of it.
  public var body: [UInt8]

  public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
    self.status = status
    self.headers = headers
    self.body = body
  }
}

/// A blocking client over one libcurl easy handle per exchange.
public enum PlainHTTP {
  /// Bytes of an answer's body kept (an avatars answer stays within 256 KB; the rest is dropped).
  public static let maxBodyBytes = 1 << 20

  /// Sends `request` and waits for its answer.
  /// - Throws: ``PushError`` when no answer came (the connection was refused, timed out, TLS failed), with
  ///   libcurl's reason.
  public static func perform(_ request: PlainHTTPRequest) throws(PushError) -> PlainHTTPAnswer {
    CurlGlobal.initialize()
    guard let easy = curl_easy_init() else { throw PushError("curl_easy_init failed") }
    defer { curl_easy_cleanup(easy) }
    let sink = EasySink()
    let user = Unmanaged.passUnretained(sink).toOpaque()
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    defer { errorBuffer.deallocate() }
    var headers: UnsafeMutablePointer<curl_slist>?
    // No `Expect: 100-continue` on a large body: the server answers the whole request.
    for line in request.headers + ["Expect:"] { headers = curl_slist_append(headers, line) }
    defer { curl_slist_free_all(headers) }
    let body = request.body ?? []
    var ok = true
    func check(_ code: CURLcode) { if code != CURLE_OK { ok = false } }
    check(ccurl_easy_setopt_string(easy, CURLOPT_URL, request.url))
    check(ccurl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
    check(ccurl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, max(1_000, request.timeoutMs)))
    check(ccurl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, min(10_000, max(1_000, request.timeoutMs))))
    check(ccurl_easy_setopt_ptr(easy, CURLOPT_ERRORBUFFER, errorBuffer))
    check(ccurl_easy_setopt_write(easy, CURLOPT_WRITEFUNCTION, easyWrite))
    check(ccurl_easy_setopt_ptr(easy, CURLOPT_WRITEDATA, user))
    check(ccurl_easy_setopt_write(easy, CURLOPT_HEADERFUNCTION, easyHeader))
    check(ccurl_easy_setopt_ptr(easy, CURLOPT_HEADERDATA, user))
    check(ccurl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headers))
    check(ccurl_easy_setopt_string(easy, CURLOPT_USERAGENT, "aprs-cloud-conformance/1"))
    check(ccurl_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0))
    if let caFile = request.caFile { check(ccurl_easy_setopt_string(easy, CURLOPT_CAINFO, caFile)) }
    switch request.method {
    case "GET": check(ccurl_easy_setopt_long(easy, CURLOPT_HTTPGET, 1))
    case "HEAD": check(ccurl_easy_setopt_long(easy, CURLOPT_NOBODY, 1))
    default:
      check(ccurl_easy_setopt_long(easy, CURLOPT_POST, 1))
      check(ccurl_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
      if request.method != "POST" {
        check(ccurl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, request.method))
      }
    }
    guard ok else { throw PushError("cannot set up a request to \(CurlMulti.origin(of: request.url))") }
    // libcurl reads the body from this buffer during perform (an empty body still needs a pointer).
    let storage: [UInt8] = body.isEmpty ? [0] : body
    let result = storage.withUnsafeBufferPointer { buffer -> CURLcode in
      if request.method != "GET" && request.method != "HEAD" {
        _ = ccurl_easy_setopt_ptr(easy, CURLOPT_POSTFIELDS, buffer.baseAddress)
      }
      return curl_easy_perform(easy)
    }
    guard result == CURLE_OK else {
      let detail = String(cString: errorBuffer)
      throw PushError(detail.isEmpty ? String(cString: curl_easy_strerror(result)) : detail)
    }
    var status = 0
    _ = ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
    return PlainHTTPAnswer(status: status, headers: sink.headers, body: sink.body)
  }
}

/// The answer's header lines and body as libcurl hands them over.
private final class EasySink {
  var headers: [(name: String, value: String)] = []
  var body: [UInt8] = []
}

/// `CURLOPT_WRITEFUNCTION`: the body, at most `PlainHTTP.maxBodyBytes` of it.
private let easyWrite: ccurl_write_callback = { data, size, count, user in
  let length = size * count
  guard let data, let user else { return length }
  let sink = Unmanaged<EasySink>.fromOpaque(user).takeUnretainedValue()
  let room = PlainHTTP.maxBodyBytes - sink.body.count
  if room > 0 {
    sink.body.append(
      contentsOf: UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: min(room, length)))
  }
  return length
}

/// `CURLOPT_HEADERFUNCTION`: one header line at a time; a status line starts the fields afresh (the final
/// answer's count, not a `100 Continue`'s).
private let easyHeader: ccurl_write_callback = { data, size, count, user in
  let length = size * count
  guard let data, let user else { return length }
  let sink = Unmanaged<EasySink>.fromOpaque(user).takeUnretainedValue()
  let line = String(
    decoding: UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: length), as: UTF8.self)
  if line.hasPrefix("HTTP/") {
    sink.headers.removeAll()
  } else if let colon = line.unicodeScalars.firstIndex(of: ":") {
    // By scalars: "\r\n" is one Character, which a Character comparison with "\r" would not trim.
    let name = String(line.unicodeScalars[..<colon])
    var value = line.unicodeScalars[line.unicodeScalars.index(after: colon)...]
    while let first = value.first, first == " " || first == "\t" { value = value.dropFirst() }
    while let last = value.last, last == "\r" || last == "\n" || last == " " || last == "\t" {
      value = value.dropLast()
    }
    sink.headers.append((name, String(String.UnicodeScalarView(value))))
  }
  return length
}
