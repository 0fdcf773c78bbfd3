/// What a `#` line from an APRS-IS server says, as far as the connection cares.
enum ServerComment: Equatable, Sendable {
  /// `# logresp LOGIN verified, server T2XXX` (or `unverified`): the answer to the login line.
  case logresp(login: String, verified: Bool, server: String?)
  /// `# filter SPEC active`: the answer to a `#filter` line; `spec` is echoed without surrounding blanks.
  case filterActive(spec: String)
  /// A line containing `invalid` or `not allowed` (any case): before the logresp, a refused login.
  case refusal(String)
  /// Anything else: the banner, keepalives, `# Parse errors on filter spec…`.
  case other

  /// Classifies one `#` line (its bytes, without the line ending).
  static func classify(_ bytes: [UInt8]) -> ServerComment {
    let text = String(decoding: bytes, as: UTF8.self)
    if text.hasPrefix("# logresp ") || text.hasPrefix("#logresp ") {
      let words = text.split(separator: " ").dropFirst(text.hasPrefix("# ") ? 2 : 1)
      let login = words.first.map(String.init) ?? ""
      let status = words.dropFirst().first.map { String($0).lowercased() } ?? ""
      var server: String?
      if let index = words.firstIndex(of: "server"), index + 1 < words.endIndex {
        server = String(words[index + 1])
      }
      return .logresp(login: login, verified: status.hasPrefix("verified"), server: server)
    }
    if text.hasPrefix("# filter ") && text.hasSuffix(" active") {
      let inner = text.dropFirst("# filter ".count).dropLast(" active".count)
      return .filterActive(spec: trimmed(inner))
    }
    if text.hasPrefix("# filter") && text.hasSuffix("active") {
      return .filterActive(spec: "")
    }
    let lower = text.lowercased()
    if lower.contains("invalid") || lower.contains("not allowed") { return .refusal(text) }
    return .other
  }

  private static func trimmed(_ text: Substring) -> String {
    var text = text
    while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
    while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
    return String(text)
  }
}
