import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `Tests/fakes/forward_fake.py` for one test: an HTTPS receiver (ntfy topics, webhooks) and an SMTP server over
/// TLS (aiosmtpd) on 127.0.0.1, both with a certificate of the test run's own CA (`make_push_credentials.sh`), and
/// its control API. The fake's header comment documents every control call.
final class ForwardFake: @unchecked Sendable {
  let directory: String
  let httpsPort: Int
  let smtpPort: Int
  let controlPort: Int
  private let fake: FakeServiceProcess

  /// The CA that signed the fake's certificate.
  var caFile: String { directory + "/ca.pem" }
  /// The SMTP login the fake takes.
  static let smtpUser = "aprs"
  static let smtpPassword = "test-password"

  static let tool = packageRoot + "/Tests/fakes/forward_fake.py"

  /// `extraHTTPSPorts`: more HTTPS receivers of the same paths (``extraPorts``).
  init(extraHTTPSPorts: Int = 0) throws {
    directory = try PushFake.credentialsFolder(
      "forward-fake", files: ["ca.pem", "server.pem", "server-key.pem"])
    let extraNames = (0..<extraHTTPSPorts).map { "https_port_\($0 + 1)" }
    let started = try FakeServiceProcess(
      "forward fake", executable: try PythonECE.python(),
      arguments: [Self.tool, "serve", "--dir", directory, "--extra-https-ports", String(extraHTTPSPorts)],
      directory: directory, portNames: ["https_port", "smtp_port", "control_port"] + extraNames)
    fake = started
    (httpsPort, smtpPort, controlPort) = (
      started.port("https_port"), started.port("smtp_port"), started.port("control_port")
    )
    extraPorts = extraNames.map { started.port($0) }
  }

  /// The ports of the extra HTTPS receivers (the same paths and records as ``httpsPort``).
  let extraPorts: [Int]

  func stop() { fake.stop() }

  func removeFiles() { removeDirectory(directory) }

  /// The URL of a receiver path on the fake (`/hook/a`).
  func url(_ path: String) -> String { "https://127.0.0.1:\(httpsPort)\(path)" }

  /// The URL of a receiver path on the fake at `host` (a name or address its certificate holds: `localhost`,
  /// `127.0.0.1`) and `port`.
  func url(_ path: String, host: String, port: Int? = nil) -> String {
    "https://\(host):\(port ?? httpsPort)\(path)"
  }

  @discardableResult
  func control(_ method: String, _ path: String, _ body: String? = nil, timeout: Double = 30) throws
    -> JSONObject
  {
    try fakeControl(port: controlPort, method, path, body, timeout: timeout)
  }

  /// The next `times` requests to `path` are answered `status` (with `Retry-After`, the `answer` body and the
  /// `headers` when given).
  func script(
    _ path: String, status: Int, retryAfter: Int? = nil, times: Int = 1, delayMs: Int = 0,
    answer: String? = nil,
    headers: [(String, String)] = []
  ) throws {
    var body = JSONWriter()
    body.beginObject()
    body.key("path")
    body.string(path)
    body.key("status")
    body.int(status)
    body.key("times")
    body.int(times)
    body.key("delayMs")
    body.int(delayMs)
    if let retryAfter {
      body.key("retryAfter")
      body.int(retryAfter)
    }
    if let answer {
      body.key("body")
      body.string(answer)
    }
    body.key("headers")
    body.beginObject()
    for (name, value) in headers {
      body.key(name)
      body.string(value)
    }
    body.endObject()
    body.endObject()
    try control("POST", "/control/script", String(decoding: body.bytes, as: UTF8.self))
  }

  /// ntfy's error JSON (server/errors.go) for `code` (`42909`), as the fake and ntfy answer it.
  static func ntfyError(_ code: Int, _ message: String) -> String {
    #"{"code":\#(code),"http":\#(code / 100),"error":"\#(message)","link":"https://ntfy.sh/docs/publish/#limitations"}"#
  }

  /// `path` answers as an ntfy topic that takes `token`: 403 without one, 401 for another (counted per client
  /// address), and 429 42909 for every authenticated request once an address had `authFailureLimit` failures.
  func ntfy(_ path: String, token: String, authFailureLimit: Int = 30) throws {
    try control(
      "POST", "/control/ntfy",
      #"{"path":"\#(path)","token":"\#(token)","authFailureLimit":\#(authFailureLimit)}"#)
  }

  /// `path` answers `status` (404 or 410) from now on.
  func gone(_ path: String, status: Int = 410) throws {
    try control("POST", "/control/gone", #"{"path":"\#(path)","status":\#(status)}"#)
  }

  /// `RCPT TO` of `address` is refused with `code` and the `reply` text after it (by default
  /// `<class>.1.1 <address>: mailbox unavailable`); code 0 takes the address again.
  func refuse(_ address: String, code: Int = 550, reply: String? = nil) throws {
    let text = reply.map { #","reply":"\#($0)""# } ?? ""
    try control("POST", "/control/refuse", #"{"address":"\#(address)","code":\#(code)\#(text)}"#)
  }

  /// Waits (bounded, in the fake) until `count` requests (to `path`, answered `status`) arrived.
  func wait(path: String? = nil, count: Int, status: Int? = nil, timeoutMs: Int = 10_000) throws -> Bool {
    var body = #"{"kind":"http","count":\#(count),"timeoutMs":\#(timeoutMs)"#
    if let path { body += #","path":"\#(path)""# }
    if let status { body += #","status":\#(status)"# }
    let answer = try control("POST", "/control/wait", body + "}", timeout: Double(timeoutMs) / 1000 + 5)
    return answer.value(at: ["ok"]) == .bool(true)
  }

  /// Waits (bounded) until `count` mails (to `to`) arrived.
  func waitMail(to: String? = nil, count: Int, timeoutMs: Int = 10_000) throws -> Bool {
    var body = #"{"kind":"mail","count":\#(count),"timeoutMs":\#(timeoutMs)"#
    if let to { body += #","to":"\#(to)""# }
    let answer = try control("POST", "/control/wait", body + "}", timeout: Double(timeoutMs) / 1000 + 5)
    return answer.value(at: ["ok"]) == .bool(true)
  }

  /// The recorded requests (to `path`), oldest first.
  func requests(_ path: String? = nil) throws -> [JSONObject] {
    let answer = try control("GET", "/control/requests" + (path.map { "?path=\($0)" } ?? ""))
    guard case .array(let items)? = answer["requests"] else { return [] }
    return items.compactMap { if case .object(let object) = $0 { object } else { nil } }
  }

  /// The mails taken, oldest first.
  func mails() throws -> [JSONObject] {
    let answer = try control("GET", "/control/mails")
    guard case .array(let items)? = answer["mails"] else { return [] }
    return items.compactMap { if case .object(let object) = $0 { object } else { nil } }
  }

  /// Checks a webhook signature with Python's own `hmac` (an implementation independent of the sender's): the
  /// header `t=<s>,v1=<hex>` against HMAC-SHA256(secret, "<t>." + the raw body as received).
  static func pythonVerifies(signature: String, bodyBase64: String, secret: String) throws -> Bool {
    let script = """
      import base64, hmac, hashlib, sys
      header, body, secret = sys.argv[1], base64.b64decode(sys.argv[2]), sys.argv[3].encode()
      parts = dict(item.split("=", 1) for item in header.split(","))
      expected = hmac.new(secret, parts["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
      print("ok" if hmac.compare_digest(expected, parts["v1"]) else "bad")
      """
    let result = try runProgram(try PythonECE.python(), ["-c", script, signature, bodyBase64, secret])
    guard result.status == 0 else { throw TestFailure("hmac check: \(result.stderr)") }
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "ok"
  }
}
