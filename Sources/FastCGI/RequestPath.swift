/// The API path of a request, whatever prefix the web server mounted the responder under.
///
/// The path comes from `DOCUMENT_URI` (nginx, already normalised) or `REQUEST_URI` (query
/// string stripped), else `SCRIPT_NAME` + `PATH_INFO` (CGI). Under a prefix
/// (`/aprs/v1/sync`, `/cgi-bin/aprs-cloud-fcgi/v1/sync`) the part from the last `/v1/` on is
/// kept; failing that, a last segment `/health` or `/metrics`. Anything else is passed through
/// unchanged so the API answers 404 with the path the client sent.
enum RequestPath {
  static func resolve(
    documentURI: String?, requestURI: String?, scriptName: String?, pathInfo: String?
  ) -> String {
    var raw: Substring
    if let documentURI, !documentURI.isEmpty {
      raw = Substring(documentURI)
    } else if let requestURI, !requestURI.isEmpty {
      raw = Substring(requestURI)
    } else {
      raw = Substring((scriptName ?? "") + (pathInfo ?? ""))
    }
    if let query = raw.firstIndex(where: { $0 == "?" || $0 == "#" }) { raw = raw[..<query] }
    if raw.isEmpty { return "/" }
    return String(apiPart(of: raw))
  }

  static func apiPart(of path: Substring) -> Substring {
    if let range = lastRange(of: "/v1/", in: path) { return path[range.lowerBound...] }
    if path.hasSuffix("/v1") { return path[path.index(path.endIndex, offsetBy: -3)...] }
    for tail in ["/health", "/metrics"] where path.hasSuffix(tail) {
      return path[path.index(path.endIndex, offsetBy: -tail.count)...]
    }
    return path
  }

  private static func lastRange(of needle: String, in text: Substring) -> Range<Substring.Index>? {
    let needle = Array(needle.utf8)
    let found: Int?? = text.utf8.withContiguousStorageIfAvailable { bytes -> Int? in
      guard bytes.count >= needle.count else { return nil }
      var start = bytes.count - needle.count
      while start >= 0 {
        if bytes[start] == needle[0] && bytes[start..<start + needle.count].elementsEqual(needle) {
          return start
        }
        start -= 1
      }
      return nil
    }
    let start: Int?
    if let found {
      start = found
    } else {
      // Not contiguous (a bridged string): the same search over a copy.
      let bytes = Array(text.utf8)
      start =
        bytes.count >= needle.count
        ? (0...(bytes.count - needle.count)).last { bytes[$0..<$0 + needle.count].elementsEqual(needle) }
        : nil
    }
    guard let start else { return nil }
    let lower = text.utf8.index(text.startIndex, offsetBy: start)
    let upper = text.utf8.index(lower, offsetBy: needle.count)
    return lower..<upper
  }
}

/// What `CONTENT_LENGTH` says about the body, decided before reading any of it.
enum BodyLength: Equatable {
  /// No `CONTENT_LENGTH` (or an empty one).
  case absent
  /// A valid length within the limit.
  case exact(Int)
  /// A valid length over the limit: 413 without reading the body.
  case tooLarge(Int)
  /// Negative, not a number, or absurd: 400.
  case invalid

  static func classify(_ contentLength: String?, limit: Int) -> BodyLength {
    guard let contentLength, !contentLength.isEmpty else { return .absent }
    guard contentLength.utf8.count <= 18, contentLength.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
      let length = Int(contentLength)
    else {
      // Digits only: no sign, spaces, hex or exponent. Over 18 digits is over any limit.
      if contentLength.utf8.count > 18, contentLength.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
        return .tooLarge(Int.max)
      }
      return .invalid
    }
    return length > limit ? .tooLarge(length) : .exact(length)
  }
}
