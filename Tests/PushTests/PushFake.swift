import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `Tests/fakes/push_fake.mjs` for one test: FCM (with its OAuth token endpoint) and APNs over
/// HTTP/2 + TLS on one port (APNs production), the APNs sandbox on a second port, a control API
/// on a third. Credentials are generated once per test run (`make_push_credentials.sh`) and
/// copied into each fake's own folder, whose `service-account.json` points `token_uri` at that
/// fake. The fake's header comment documents every control call and named answer.
final class PushFake: @unchecked Sendable {
  let directory: String
  let port: Int
  let controlPort: Int
  /// The APNs sandbox environment (same records, scripts and settings as `port`).
  let sandboxPort: Int
  private let fake: FakeServiceProcess

  /// FCM's base URL (`127.0.0.1`, its own HTTP/2 connection).
  var fcmEndpoint: String { "https://127.0.0.1:\(port)" }
  /// APNs's base URL (`localhost`, a separate connection, as with the real hosts): production.
  var apnsEndpoint: String { "https://localhost:\(port)" }
  /// The APNs sandbox's base URL: tokens given to `tokens(sandbox:)` work only here, tokens given
  /// to `tokens(production:)` only at `apnsEndpoint` (the other one answers 400 BadDeviceToken).
  var apnsSandboxEndpoint: String { "https://localhost:\(sandboxPort)" }

  static let script = packageRoot + "/Tests/fakes/make_push_credentials.sh"
  static let fake = packageRoot + "/Tests/fakes/push_fake.mjs"

  /// Keys and certificates made once for the whole run.
  static let sharedCredentials: String = {
    let directory = makeSharedDirectory("credentials")
    let result = try! runProgram("/bin/sh", [script, directory])
    precondition(result.status == 0, "make_push_credentials.sh failed: \(result.stderr)")
    return directory
  }()

  /// A new folder for one fake with `files` of ``sharedCredentials`` (nil: all of them) copied in.
  static func credentialsFolder(_ label: String, files: [String]? = nil) throws -> String {
    let directory = try makeTemporaryDirectory(label)
    for file in try files ?? FileManager.default.contentsOfDirectory(atPath: sharedCredentials) {
      try FileManager.default.copyItem(atPath: sharedCredentials + "/" + file, toPath: directory + "/" + file)
    }
    return directory
  }

  static func node() throws -> String {
    for candidate in ["/usr/bin/node", "/usr/local/bin/node"]
    where FileManager.default.isExecutableFile(atPath: candidate) {
      return candidate
    }
    throw TestFailure("node is not installed (make deps)")
  }

  init() throws {
    directory = try Self.credentialsFolder("push-fake")
    fake = try FakeServiceProcess(
      "push fake", executable: try PushFake.node(),
      arguments: [PushFake.fake, "--dir", directory, "--port", "0", "--sandbox-port", "0"],
      directory: directory, portNames: ["port", "control_port", "sandbox_port"])
    (port, controlPort, sandboxPort) = (
      fake.port("port"), fake.port("control_port"), fake.port("sandbox_port")
    )
    let rewrite = try runProgram("/bin/sh", [PushFake.script, directory, "https://127.0.0.1:\(port)"])
    guard rewrite.status == 0 else { throw TestFailure("credentials: \(rewrite.stderr)") }
  }

  func stop() { fake.stop() }

  func removeFiles() { removeDirectory(directory) }

  // MARK: Control API

  /// One control call (curl as the client); the JSON answer.
  @discardableResult
  func control(_ method: String, _ path: String, _ body: String? = nil, timeout: Double = 70) throws
    -> JSONObject
  {
    try fakeControl(port: controlPort, method, path, body, timeout: timeout)
  }

  /// Queues scripted answers (`POST /control/script`).
  func script(_ json: String) throws { try control("POST", "/control/script", json) }

  /// Scripts a named answer for `role` (`fcm`, `apns`, `oauth`), for one device `token` or (nil)
  /// any: `script("fcm", token: "t1", answer: "INVALID_TOKEN_MESSAGE")`,
  /// `script("apns", token: hex, answer: "Unregistered", #""timestampRaw":"1e400""#)`.
  /// `fields`: more members of the script entry as JSON text (`"times":3`, `"fuzz":7`), which
  /// win over the answer's own.
  func script(_ role: String, token: String? = nil, answer: String, _ fields: String = "") throws {
    var writer = JSONWriter()
    writer.beginObject()
    writer.key("role")
    writer.string(role)
    if let token {
      writer.key("token")
      writer.string(token)
    }
    writer.key("answer")
    writer.string(answer)
    writer.endObject()
    var json = writer.string
    if !fields.isEmpty { json = String(json.dropLast()) + "," + fields + "}" }
    try script(json)
  }

  /// Says which APNs environment each token belongs to (`POST /control/tokens`); a clear forgets.
  func tokens(production: [String] = [], sandbox: [String] = []) throws {
    var writer = JSONWriter()
    writer.beginObject()
    for (environment, list) in [("production", production), ("sandbox", sandbox)] {
      writer.key(environment)
      writer.beginArray()
      for token in list { writer.string(token) }
      writer.endArray()
    }
    writer.endObject()
    try control("POST", "/control/tokens", writer.string)
  }

  /// Changes settings (`POST /control/set`).
  func set(_ json: String) throws { try control("POST", "/control/set", json) }

  /// Waits (bounded, in the fake) until `count` requests of `role` were answered (with
  /// `status` when given); false at the timeout.
  func wait(_ role: String, count: Int, status: Int? = nil, answered: Bool = true, timeoutMs: Int = 10_000)
    throws -> Bool
  {
    var body = #"{"role":"\#(role)","count":\#(count),"timeoutMs":\#(timeoutMs),"answered":\#(answered)"#
    if let status { body += #","status":\#(status)"# }
    body += "}"
    let answer = try control("POST", "/control/wait", body, timeout: Double(timeoutMs) / 1000 + 5)
    if case .bool(let ok)? = answer["ok"] { return ok }
    return false
  }

  /// The recorded requests of `role` (`any` for all), oldest first; only those for one device
  /// `token` and (`production`, `sandbox`) `environment` when given. A record has the request's
  /// `headers` (`apns-collapse-id`, `apns-push-type`, …), its `body` (the APNs payload, so
  /// `["body", "gcm.message_id"]`; FCM's `{"message":…}`), `status`, `response`, `environment`.
  func requests(_ role: String = "any", token: String? = nil, environment: String? = nil) throws
    -> [JSONObject]
  {
    var query = "role=\(role)"
    let plain = CharacterSet.alphanumerics
    if let token { query += "&token=" + (token.addingPercentEncoding(withAllowedCharacters: plain) ?? token) }
    if let environment { query += "&environment=\(environment)" }
    let answer = try control("GET", "/control/requests?\(query)")
    guard case .array(let items)? = answer["requests"] else { return [] }
    return items.compactMap { if case .object(let object) = $0 { object } else { nil } }
  }

  /// `GET /control/stats`.
  func stats() throws -> JSONObject { try control("GET", "/control/stats") }
}

extension JSONObject {
  /// A nested member by path (`["body", "message", "data"]`).
  func value(at path: [String]) -> JSONValue? {
    var current: JSONValue = .object(self)
    for key in path {
      guard case .object(let object) = current, let next = object[key] else { return nil }
      current = next
    }
    return current
  }

  /// A nested string by path.
  func string(at path: [String]) -> String? {
    if case .string(let text)? = value(at: path) { return text }
    return nil
  }

  /// A nested integer by path.
  func int(at path: [String]) -> Int64? {
    if case .number(let number)? = value(at: path) { return number.int64 }
    return nil
  }
}

/// Polls `condition` every 20 ms for at most `timeout` seconds.
@discardableResult
func eventually(timeout: Double = 5, _ condition: () throws -> Bool) rethrows -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while true {
    if try condition() { return true }
    if Date() > deadline { return false }
    usleep(20_000)
  }
}

/// One call to a fake's JSON control API on `127.0.0.1:port` (curl as the client, `timeout` seconds); the JSON
/// answer. Shared by the FCM/APNs fake and the Web Push fake.
func fakeControl(port: Int, _ method: String, _ path: String, _ body: String?, timeout: Double) throws
  -> JSONObject
{
  var arguments = ["-s", "-S", "--max-time", String(Int(timeout)), "-X", method]
  if let body { arguments += ["-H", "content-type: application/json", "--data-binary", body] }
  arguments.append("http://127.0.0.1:\(port)\(path)")
  let result = try runProgram("/usr/bin/curl", arguments, timeout: timeout + 5)
  guard result.status == 0 else { throw TestFailure("control \(path): \(result.stderr)") }
  return try parseObject(Array(result.stdout.utf8))
}
