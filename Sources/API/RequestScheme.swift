/// The scheme a request reached the web server by, as the web server says it (never a header a client chose):
/// half of the request's own origin, which ``CrossSiteCheck`` compares a browser's `Origin` with.
public enum RequestScheme: String, Sendable, Equatable {
  case http
  case https

  /// The port a URL of this scheme means when it names none: 80, 443.
  public var defaultPort: Int { self == .https ? 443 : 80 }

  /// The scheme from the web server's variables: `REQUEST_SCHEME` (nginx's `$scheme` in its FastCGI parameters,
  /// Apache's CGI environment) and `HTTPS` (`on` over TLS, the CGI convention: nginx passes it `if_not_empty`).
  /// `REQUEST_SCHEME` names it when given; without it `HTTPS` `on` (or `1`) is https and its absence http, as RFC
  /// 3875 servers leave it. Nil when the two disagree or `REQUEST_SCHEME` is neither scheme: the origin is unknown
  /// then, and only `[server] allowedOrigins` pass.
  public init?(requestScheme: String?, https: String?) {
    let tls = https.map { ["on", "1"].contains($0.trimmingASCIISpaces().lowercased()) }
    guard let named = requestScheme?.trimmingASCIISpaces().lowercased(), !named.isEmpty else {
      self = tls == true ? .https : .http
      return
    }
    guard let scheme = RequestScheme(rawValue: named) else { return nil }
    if let tls, tls != (scheme == .https) { return nil }
    self = scheme
  }

  /// A `SERVER_PORT` value (RFC 3875: the port the request was received on), or nil when it is not a decimal
  /// port number from 1 to 65535.
  public static func port(_ text: String?) -> Int? {
    guard let digits = text?.trimmingASCIISpaces(), (1...5).contains(digits.utf8.count),
      digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let port = Int(digits),
      (1...65535).contains(port)
    else { return nil }
    return port
  }
}
