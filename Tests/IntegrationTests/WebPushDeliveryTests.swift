import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// How the real `aprs-listener` reaches push services: over HTTP/2 with one connection per origin where the
/// service offers it (Debian's nginx as a TLS + HTTP/2 front of the HTTP/1.1 fake push service, its access log
/// the witness), and never to a loopback or private address on a public server, whatever name the endpoint
/// uses (refused when the connection would open, the subscription deleted, a warning, the counters).
@Suite(.serialized) struct WebPushDeliveryTests {

  @Test func pushesToOneOriginShareOneHTTP2Connection() throws {
    let pushService = try WebPushServiceProcess()
    defer { pushService.stop() }
    let front = try HTTP2PushFront(pushService)
    defer { front.stop() }
    let aprsis = try FakeAPRSIS()
    defer { aprsis.stop() }
    let (stack, config, configDirectory) = try pushService.stack(aprsis, allowPrivate: true)
    defer { try? FileManager.default.removeItem(atPath: configDirectory) }
    defer { stack.stop() }

    // Six browsers subscribed at one push service (one origin: the HTTP/2 front).
    let ssids = Array(1...6)
    for ssid in ssids {
      var subscription = try pushService.subscribe()
      subscription.endpoint = front.endpoint(for: subscription.endpoint)
      let register = try stack.post("/v1/register", json: subscription.registerBody(ssid: ssid))
      #expect(register.status == 200, "\(register.text)")
    }
    let listener = try ListenerProcess(database: stack.databasePath, config: config)
    defer { listener.stop() }
    #expect(try aprsis.wait("login", count: 1), "no login:\n\(listener.log)")
    #expect(listener.waitForLog("push provider ready\" platform=webpush"), "\(listener.log)")

    #expect(
      try aprsis.inject(ssids.map { "KJ7ABC-7>APRS,TCPIP*::N0CALL-\($0) :Over HTTP/2 \($0){\($0)" }) >= 1)
    #expect(try pushService.wait(count: ssids.count, status: 201), "\(listener.log)\n\(front.log)")

    // The fake decrypted every body and verified every VAPID JWT (201 only then), for the front's origin.
    let requests = try pushService.requests()
    #expect(requests.count == ssids.count && requests.allSatisfy { $0.int("status") == 201 })
    let bodies = requests.compactMap { request -> String? in
      guard case .object(let json)? = request["json"] else { return nil }
      return json.string("body")
    }
    #expect(Set(bodies) == Set(ssids.map { "Over HTTP/2 \($0)" }), "\(requests)")
    let audiences = requests.compactMap { request -> String? in
      guard case .object(let vapid)? = request["vapid"] else { return nil }
      return vapid.string("aud")
    }
    #expect(audiences == Array(repeating: "https://127.0.0.1:\(front.port)", count: ssids.count))

    // nginx saw every push as HTTP/2, all on one connection (streams 1…6 of it).
    #expect(waitUntil(timeout: 5) { front.pushes().count == ssids.count }, "\(front.log)")
    let pushes = front.pushes()
    #expect(pushes.allSatisfy { $0.protocolName == "HTTP/2.0" && $0.status == 201 }, "\(front.log)")
    #expect(Set(pushes.map(\.connection)).count == 1, "\(front.log)")
    #expect(Set(pushes.map(\.connectionRequests)) == Set(ssids), "\(front.log)")
  }

  /// `localhost` is refused by the API at registration, so the device row is written directly, as a name
  /// whose DNS changed after registration would leave it. The listener refuses to open the connection,
  /// deletes the subscription without a retry, logs a warning naming the host and the address, and the
  /// counters reach `/metrics`.
  @Test func anEndpointWhoseNameResolvesToLoopbackIsRefusedAtSendTime() throws {
    let pushService = try WebPushServiceProcess()
    defer { pushService.stop() }
    let aprsis = try FakeAPRSIS()
    defer { aprsis.stop() }
    let (stack, config, configDirectory) = try pushService.stack(aprsis, allowPrivate: false)
    defer { try? FileManager.default.removeItem(atPath: configDirectory) }
    defer { stack.stop() }

    var subscription = try pushService.subscribe()
    subscription.endpoint = subscription.endpoint.replacingOccurrences(
      of: "//127.0.0.1:", with: "//localhost:")
    let refused = try stack.post("/v1/register", json: subscription.registerBody(ssid: 7))
    #expect(refused.status == 400, "\(refused.text)")
    let database = SQLiteFile(path: stack.databasePath)
    try database.register(["N0CALL-7"])
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    try database.run(
      "INSERT INTO devices (token, station, platform, registered_at, refreshed_at, push_p256dh, push_auth) "
        + "VALUES ('\(subscription.endpoint)', 'N0CALL-7', 'webpush', \(now), \(now), "
        + "'\(subscription.p256dh)', '\(subscription.auth)');")

    let listener = try ListenerProcess(database: stack.databasePath, config: config)
    defer { listener.stop() }
    #expect(try aprsis.wait("login", count: 1), "no login:\n\(listener.log)")
    #expect(listener.waitForLog("push provider ready\" platform=webpush"), "\(listener.log)")
    #expect(try aprsis.inject(["KJ7ABC-7>APRS,TCPIP*::N0CALL-7 :Not to loopback{9"]) >= 1)

    #expect(listener.waitForLog("push endpoint refused"), "\(listener.log)")
    #expect(try database.waitUntil { try $0.int("SELECT count(*) FROM devices") == 0 }, "\(listener.log)")
    let line = listener.log.split(separator: "\n").first { $0.contains("push endpoint refused") } ?? ""
    #expect(line.contains("level=warn") && line.contains("host=localhost"), "\(line)")
    #expect(line.contains("address=127.0.0.1") || line.contains("address=::1"), "\(line)")
    #expect(line.contains("a loopback or private address"), "\(line)")
    #expect(!listener.log.contains("will retry"), "\(listener.log)")
    // Nothing reached the push service, not even a TCP connection.
    #expect(try pushService.requests().isEmpty)
    #expect(try pushService.control("GET", "/control/stats").int("connections") == 0)

    var metrics: PrometheusDocument?
    let counted = waitUntil(timeout: 10, interval: 0.1) {
      metrics = (try? stack.metrics()).flatMap { try? PrometheusDocument(parsing: $0.text) }
      return metrics?.value("aprs_cloud_push_tokens_deleted_total", ["provider": "webpush"]) == 1
    }
    #expect(counted, "\(String(describing: metrics))")
    #expect(
      metrics?.value("aprs_cloud_pushes_total", ["provider": "webpush", "outcome": "private_address"]) == 1)
  }
}

/// Debian's nginx (built `--with-http_v2_module`) as a TLS + `http2` front of the Web Push fake, which speaks
/// HTTP/1.1 only: the push sender meets HTTP/2 as at a real push service, and nginx's access log records the
/// protocol, the connection and the request's number on it (`$server_protocol`, `$connection`,
/// `$connection_requests`). The front uses the fake's throwaway certificate (made for the run, never
/// committed) and passes the client's `Host` on, so the fake checks the VAPID audience against the front's
/// origin.
final class HTTP2PushFront: @unchecked Sendable {
  let port: Int
  private let prefix: NginxPrefix
  private let service: WebPushServiceProcess
  private let process: Process
  private var accessLog: String { prefix.directory + "/push-access.log" }

  /// One push as nginx logged it.
  struct Push {
    var protocolName: String
    var connection: String
    var connectionRequests: Int
    var status: Int
  }

  init(_ service: WebPushServiceProcess) throws {
    self.service = service
    prefix = try NginxPrefix("webpush-h2")
    port = try freePort()
    let http = """
          log_format push '$server_protocol $connection $connection_requests $request_method $uri $status';
          server {
              listen 127.0.0.1:\(port) ssl http2;
              ssl_certificate \(service.directory)/server.pem;
              ssl_certificate_key \(service.directory)/server-key.pem;
              access_log \(prefix.directory)/push-access.log push;
              location / {
                  proxy_pass https://127.0.0.1:\(service.port);
                  proxy_http_version 1.1;
                  proxy_set_header Host $http_host;
                  proxy_set_header Connection "";
              }
          }
      """
    let config = try prefix.write("nginx.conf", prefix.mainConfig(http: http))
    process = try prefix.start(
      config, readyURL: "https://127.0.0.1:\(port)/",
      curlArguments: ["--cacert", service.directory + "/ca.pem"])
  }

  /// The fake's endpoint URL with the front's port.
  func endpoint(for endpoint: String) -> String {
    endpoint.replacingOccurrences(of: "//127.0.0.1:\(service.port)/", with: "//127.0.0.1:\(port)/")
  }

  /// The POSTs to `/push/…` nginx logged, oldest first.
  func pushes() -> [Push] {
    log.split(separator: "\n").compactMap { line in
      let fields = line.split(separator: " ").map(String.init)
      guard fields.count == 6, fields[3] == "POST", fields[4].hasPrefix("/push/"),
        let requests = Int(fields[2]), let status = Int(fields[5])
      else { return nil }
      return Push(
        protocolName: fields[0], connection: fields[1], connectionRequests: requests, status: status)
    }
  }

  /// The access log.
  var log: String { (try? String(contentsOfFile: accessLog, encoding: .utf8)) ?? "" }

  func stop() {
    TestStack.terminate(process)
    prefix.remove()
  }
}
