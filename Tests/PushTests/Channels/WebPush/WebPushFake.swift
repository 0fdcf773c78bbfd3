import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `Tests/fakes/webpush_fake.py` for one test: a push service over HTTPS (HTTP/1.1, keep-alive) on 127.0.0.1 with
/// the throwaway certificate of `make_push_credentials.sh`, that decrypts every body with http_ece and the
/// subscription's own private key and checks the VAPID JWT and headers; and its control API. The fake's header
/// comment documents every check and control call.
final class WebPushFake: @unchecked Sendable {
  let directory: String
  let port: Int
  let controlPort: Int
  private let fake: FakeServiceProcess

  /// The CA that signed the fake's certificate.
  var caFile: String { directory + "/ca.pem" }

  init() throws {
    directory = try PushFake.credentialsFolder(
      "webpush-fake", files: ["ca.pem", "server.pem", "server-key.pem"])
    fake = try FakeServiceProcess(
      "web push fake", executable: try PythonECE.python(),
      arguments: [PythonECE.tool, "serve", "--dir", directory],
      directory: directory, portNames: ["port", "control_port"])
    (port, controlPort) = (fake.port("port"), fake.port("control_port"))
  }

  func stop() { fake.stop() }

  func removeFiles() { removeDirectory(directory) }

  /// One control call; the JSON answer.
  @discardableResult
  func control(_ method: String, _ path: String, _ body: String? = nil, timeout: Double = 30) throws
    -> JSONObject
  {
    try fakeControl(port: controlPort, method, path, body, timeout: timeout)
  }

  /// A subscription, as a browser (`keys`) or a UnifiedPush distributor (no keys) makes one. `host`:
  /// `127.0.0.1` or `localhost` (two origins on one port). `vapidKey`: bind it to that key, as browsers do.
  struct Subscription {
    var id: String
    var endpoint: String
    var p256dh: String?
    var auth: String?
  }

  func subscribe(keys: Bool = true, host: String = "127.0.0.1", vapidKey: String? = nil) throws
    -> Subscription
  {
    var body = #"{"keys":\#(keys),"host":"\#(host)""#
    if let vapidKey { body += #","vapidKey":"\#(vapidKey)""# }
    let answer = try control("POST", "/control/subscribe", body + "}")
    guard let id = answer.string(at: ["id"]), let endpoint = answer.string(at: ["endpoint"]) else {
      throw TestFailure("subscribe: \(answer)")
    }
    return Subscription(
      id: id, endpoint: endpoint, p256dh: answer.string(at: ["p256dh"]), auth: answer.string(at: ["auth"]))
  }

  /// The subscription answers 404 (410 with `gone`) from now on.
  func unsubscribe(_ subscription: Subscription, gone: Bool = false) throws {
    try control("POST", "/control/unsubscribe", #"{"id":"\#(subscription.id)","gone":\#(gone)}"#)
  }

  /// The next `times` pushes that pass the checks are answered `status` (with `Retry-After` when given).
  func script(_ subscription: Subscription, status: Int, retryAfter: Int? = nil, times: Int = 1) throws {
    var body = #"{"id":"\#(subscription.id)","status":\#(status),"times":\#(times)"#
    if let retryAfter { body += #","retryAfter":\#(retryAfter)"# }
    try control("POST", "/control/script", body + "}")
  }

  /// Waits (bounded, in the fake) until `count` pushes (to `subscription`, with `status`) were answered.
  func wait(_ subscription: Subscription? = nil, count: Int, status: Int? = nil, timeoutMs: Int = 10_000)
    throws
    -> Bool
  {
    var body = #"{"count":\#(count),"timeoutMs":\#(timeoutMs)"#
    if let subscription { body += #","id":"\#(subscription.id)""# }
    if let status { body += #","status":\#(status)"# }
    let answer = try control("POST", "/control/wait", body + "}", timeout: Double(timeoutMs) / 1000 + 5)
    return answer.value(at: ["ok"]) == .bool(true)
  }

  /// The recorded pushes (to `subscription`), oldest first.
  func requests(_ subscription: Subscription? = nil) throws -> [JSONObject] {
    let answer = try control("GET", "/control/requests" + (subscription.map { "?id=\($0.id)" } ?? ""))
    guard case .array(let items)? = answer["requests"] else { return [] }
    return items.compactMap { if case .object(let object) = $0 { object } else { nil } }
  }

  /// TCP connections the fake accepted so far.
  func connections() throws -> Int {
    Int(try control("GET", "/control/stats").int(at: ["connections"]) ?? -1)
  }
}
