import Foundation
import Testing

/// The cross-site check through the shell (docs/api.md "Owned stations"): the responder takes its own origin from the
/// scheme and port the web server saw (`REQUEST_SCHEME` or `HTTPS`, and `SERVER_PORT`, as nginx's FastCGI
/// parameters and CGI give them) and the `Host` the request was sent to, so a page of the same host on another
/// scheme or port is another site.
@Suite final class ResponderCrossSiteTests {
  let directory: String

  init() throws {
    directory = try ResponderPaths.temporaryDirectory("xsite")
  }

  deinit { try? FileManager.default.removeItem(atPath: directory) }

  /// A sync through CGI as a browser's page at `origin` sends it to `https://aprs.example.org` (what the web server
  /// passes in `server`); the answer's status.
  func status(origin: String?, server: [String: String]) throws -> Int {
    var environment = [
      "GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "POST", "REQUEST_URI": "/v1/sync",
      "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": String(responderSyncBody.count),
      "REMOTE_ADDR": "192.0.2.1", "HTTP_HOST": "aprs.example.org",
    ].merging(server) { $1 }
    if let origin { environment["HTTP_ORIGIN"] = origin }
    let run = try ResponderCGI.run(
      directory: directory, environment: environment, body: responderSyncBody,
      arguments: ["--db", directory + "/aprs.sqlite"])
    #expect(run.exitStatus == 0)
    return try run.reply().status
  }

  @Test func aPageOnTheSameHostByAnotherSchemeOrPortIsAnotherSite() throws {
    let https = ["REQUEST_SCHEME": "https", "HTTPS": "on", "SERVER_PORT": "443"]
    #expect(try status(origin: "https://aprs.example.org", server: https) == 200)
    #expect(try status(origin: "http://aprs.example.org", server: https) == 403, "plain http is another site")
    #expect(try status(origin: "https://aprs.example.org:8443", server: https) == 403, "another port")
    #expect(try status(origin: nil, server: https) == 200, "the apps and curl send no Origin")
    // CGI without REQUEST_SCHEME: `HTTPS=on` says TLS, its absence plain http (RFC 3875 has SERVER_PORT only).
    #expect(
      try status(origin: "https://aprs.example.org", server: ["HTTPS": "on", "SERVER_PORT": "443"]) == 200)
    #expect(
      try status(origin: "http://aprs.example.org", server: ["HTTPS": "on", "SERVER_PORT": "443"]) == 403)
    #expect(
      try status(origin: "http://aprs.example.org:8080", server: ["SERVER_PORT": "8080"]) == 403,
      "Host has no port")
    let plain = ["REQUEST_SCHEME": "http", "SERVER_PORT": "80"]
    #expect(try status(origin: "http://aprs.example.org", server: plain) == 200)
    #expect(try status(origin: "https://aprs.example.org", server: plain) == 403)
  }

  @Test func overFastCGITheSameParametersDecide() throws {
    let socketPath = directory + "/fcgi.sock"
    let server = try ResponderServer(
      executable: try ResponderPaths.responder(),
      arguments: ["--listen", socketPath, "--db", directory + "/aprs.sqlite", "--workers", "1"],
      directory: directory)
    func status(_ origin: String) throws -> Int {
      let connection = try ResponderFastCGIConnection(unixPath: socketPath, tcpPort: nil)
      try connection.begin(
        ResponderFastCGIConnection.params(
          "POST", "/v1/sync", body: responderSyncBody,
          extra: [
            ("HTTP_HOST", "aprs.example.org"), ("HTTP_ORIGIN", origin), ("REQUEST_SCHEME", "https"),
            ("HTTPS", "on"), ("SERVER_PORT", "443"),
          ]))
      try connection.send(responderSyncBody)
      try connection.endBody()
      return try connection.readReply().reply().status
    }
    #expect(try status("https://aprs.example.org") == 200)
    #expect(try status("http://aprs.example.org") == 403)
    #expect(server.stop() == 0)
  }
}
