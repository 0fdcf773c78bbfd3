import Testing

@testable import Push

/// What errors and logs name of a request's URL: its origin, never the path or query that may be a secret.
@Suite struct CurlOriginTests {
  @Test func onlyTheSchemeHostAndPortAreKept() {
    #expect(CurlMulti.origin(of: "https://ntfy.example.org/secret-topic") == "https://ntfy.example.org")
    #expect(CurlMulti.origin(of: "https://h.example.org:8443/hook?token=abc") == "https://h.example.org:8443")
    #expect(CurlMulti.origin(of: "https://push.example.net/wpush/v2/gAAAA#x") == "https://push.example.net")
    #expect(CurlMulti.origin(of: "smtps://smtp.example.org:465") == "smtps://smtp.example.org:465")
    #expect(CurlMulti.origin(of: "not a url/with/path") == "not a url")
  }
}
