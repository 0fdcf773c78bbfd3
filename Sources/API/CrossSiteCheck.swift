/// Whether a POST comes from a page of another site (PROTOCOL.md "Owned stations"): browsers send `Origin` on every
/// POST and `Sec-Fetch-Site` on most, so a form or a `no-cors` fetch from a foreign page is recognised and refused
/// before it changes anything. Requests without either header (the apps, curl, scripts) are not browsers' and
/// pass.
///
/// An origin is the server's own when its host and port are the `Host` the request was sent to (the default port
/// of its scheme when it names none: 80 for `http`, 443 for `https`), or when it is one of `[server]
/// allowedOrigins` (compared in the normalised form ``normalise(_:)`` gives).
enum CrossSiteCheck {
  /// Why the request is refused, or nil when it may go on.
  static func refusal(origin: String?, fetchSite: String?, host: String?, allowed: Set<String>) -> String? {
    if let origin = origin?.trimmingASCIISpaces(), !origin.isEmpty {
      if let parsed = parse(origin) {
        if let host, sameAuthority(parsed, host: host) { return nil }
        if allowed.contains(parsed.normalised) { return nil }
      }
      return
        "cross-site request refused: Origin \(origin.prefix(100)) is not this server's own site nor one of its"
        + " allowedOrigins"
    }
    if fetchSite?.trimmingASCIISpaces().lowercased() == "cross-site" {
      return "cross-site request refused (Sec-Fetch-Site: cross-site)"
    }
    return nil
  }

  /// `origin` in the form `allowedOrigins` are compared in (`https://example.org`, `http://127.0.0.1:8080`:
  /// lower case, the default port left out, no path), or nil when it is not an `http(s)://host[:port]` origin.
  static func normalise(_ origin: String) -> String? { parse(origin)?.normalised }

  private struct Origin {
    var scheme: String
    var host: String
    var port: Int

    var normalised: String {
      port == Self.defaultPort(scheme) ? "\(scheme)://\(host)" : "\(scheme)://\(host):\(port)"
    }

    static func defaultPort(_ scheme: String) -> Int { scheme == "https" ? 443 : 80 }
  }

  private static func parse(_ text: String) -> Origin? {
    let lowered = text.trimmingASCIISpaces().lowercased()
    let scheme: String
    if lowered.hasPrefix("https://") {
      scheme = "https"
    } else if lowered.hasPrefix("http://") {
      scheme = "http"
    } else {
      return nil
    }
    var rest = Substring(lowered.dropFirst(scheme.count + 3))
    if rest.hasSuffix("/") { rest = rest.dropLast() }
    guard let (host, port) = authority(rest, defaultPort: Origin.defaultPort(scheme)) else { return nil }
    return Origin(scheme: scheme, host: host, port: port)
  }

  /// `host[:port]` or `[v6]:port` split, the port defaulted; nil when it is not one.
  private static func authority(_ text: Substring, defaultPort: Int) -> (String, Int)? {
    guard !text.isEmpty, !text.contains("/"), !text.contains("@") else { return nil }
    var host = text
    var port = defaultPort
    if let colon = text.lastIndex(of: ":"), !text[colon...].contains("]") {
      guard let number = Int(text[text.index(after: colon)...]), (1...65535).contains(number) else {
        return nil
      }
      host = text[..<colon]
      port = number
    }
    guard !host.isEmpty else { return nil }
    return (String(host), port)
  }

  private static func sameAuthority(_ origin: Origin, host: String) -> Bool {
    let lowered = Substring(host.trimmingASCIISpaces().lowercased())
    guard let (name, port) = authority(lowered, defaultPort: Origin.defaultPort(origin.scheme)) else {
      return false
    }
    return name == origin.host && port == origin.port
  }
}
