/// Whether a POST comes from a page of another site (docs/protocol.md "Owned stations"): browsers send `Origin` on every
/// POST and `Sec-Fetch-Site` on most, so a form or a `no-cors` fetch from a foreign page is recognised and refused
/// before it changes anything. Requests without either header (the apps, curl, scripts) are not browsers' and
/// pass.
///
/// An origin passes when it is the request's own, scheme, host and port alike (``ownOrigin(host:scheme:serverPort:)``:
/// the scheme and port the web server received the request by, the host of its `Host`), or one of `[server]
/// allowedOrigins` (compared in the normalised form ``normalise(_:)`` gives). A page of the same host by another
/// scheme (`http://` beside `https://`) or on another port is another site.
enum CrossSiteCheck {
  /// An origin: a scheme, a host (lower case) and a port (the scheme's default filled in).
  struct Origin: Equatable {
    var scheme: RequestScheme
    var host: String
    var port: Int

    /// `https://example.org`, `http://127.0.0.1:8080`: the default port left out.
    var normalised: String {
      port == scheme.defaultPort ? "\(scheme.rawValue)://\(host)" : "\(scheme.rawValue)://\(host):\(port)"
    }
  }

  /// Why the request is refused, or nil when it may go on. `own` is the request's own origin (nil when unknown:
  /// then only `allowed` pass).
  static func refusal(origin: String?, fetchSite: String?, own: Origin?, allowed: Set<String>) -> String? {
    if let origin = origin?.trimmingASCIISpaces(), !origin.isEmpty {
      if let parsed = parse(origin) {
        if let own, parsed == own { return nil }
        if allowed.contains(parsed.normalised) { return nil }
      }
      let site = own.map { " (\($0.normalised))" } ?? ""
      return
        "cross-site request refused: Origin \(origin.prefix(100)) is not this server's own site\(site) nor one of"
        + " its allowedOrigins"
    }
    if fetchSite?.trimmingASCIISpaces().lowercased() == "cross-site" {
      return "cross-site request refused (Sec-Fetch-Site: cross-site)"
    }
    return nil
  }

  /// The request's own origin: the scheme the web server received it by, the host of the `Host` it was sent to and
  /// that `Host`'s port (the scheme's default when it names none). Nil when any is unknown, and when the web
  /// server received it on another port (`serverPort`) than the `Host` names: a proxy or a port mapping in between
  /// leaves the origin the browser saw unknown here (list it in `allowedOrigins`).
  static func ownOrigin(host: String?, scheme: RequestScheme?, serverPort: Int?) -> Origin? {
    guard let scheme, let host else { return nil }
    let lowered = Substring(host.trimmingASCIISpaces().lowercased())
    guard let (name, port) = authority(lowered, defaultPort: scheme.defaultPort) else { return nil }
    if let serverPort, serverPort != port { return nil }
    return Origin(scheme: scheme, host: name, port: port)
  }

  /// `origin` in the form `allowedOrigins` are compared in (`https://example.org`, `http://127.0.0.1:8080`:
  /// lower case, the default port left out, no path), or nil when it is not an `http(s)://host[:port]` origin.
  static func normalise(_ origin: String) -> String? { parse(origin)?.normalised }

  private static func parse(_ text: String) -> Origin? {
    let lowered = text.trimmingASCIISpaces().lowercased()
    let scheme: RequestScheme
    if lowered.hasPrefix("https://") {
      scheme = .https
    } else if lowered.hasPrefix("http://") {
      scheme = .http
    } else {
      return nil
    }
    var rest = Substring(lowered.dropFirst(scheme.rawValue.count + 3))
    if rest.hasSuffix("/") { rest = rest.dropLast() }
    guard let (host, port) = authority(rest, defaultPort: scheme.defaultPort) else { return nil }
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
}
