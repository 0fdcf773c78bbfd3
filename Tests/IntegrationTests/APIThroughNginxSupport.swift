import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

// Helpers for APIThroughNginxTests: many requests through one curl process, a listener fed by the
// APRS-IS fake, and checks of the wire contract (docs/protocol.md) on raw answers.

// MARK: Many requests, one curl process

/// One request of a batch sent by `CurlBatch`.
struct NginxAPIRequest {
  var label: String
  var method = "POST"
  var path: String
  /// nil: no body at all; otherwise sent as-is (`--data-binary @file`).
  var body: Data?
  var headers = ["content-type: application/json"]

  init(_ label: String, _ path: String, body: Data?, method: String = "POST") {
    self.label = label
    self.path = path
    self.body = body
    self.method = method
    if body == nil { headers = [] }
  }

  init(_ label: String, _ path: String, json: String) {
    self.init(label, path, body: Data(json.utf8))
  }
}

/// What curl saw for one request of a batch.
struct NginxAPIAnswer: JSONAnswer {
  var status: Int
  var contentType: String
  var cacheControl: String
  var retryAfter: String
  var allow: String
  var body: Data

  var text: String { String(decoding: body, as: UTF8.self) }
}

/// Sends many requests through ONE curl process (`-K config`, optionally `--parallel`), each with its
/// own body and output file; the status and the headers that matter come from `--write-out`, mapped back
/// to the request by the output file's name (parallel transfers finish in any order).
enum CurlBatch {
  static func run(
    _ requests: [NginxAPIRequest], baseURL: String, parallel: Int = 8, interface: String? = nil,
    rate: String? = nil, timeout: Double = 120
  ) throws -> [NginxAPIAnswer] {
    guard !requests.isEmpty else { return [] }
    let directory = try makeTemporaryDirectory("batch")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var config = ""
    for (index, request) in requests.enumerated() {
      if index > 0 { config += "next\n" }
      config += "url = \"\(baseURL)\(request.path)\"\n"
      if let body = request.body {
        let bodyPath = "\(directory)/body-\(index)"
        guard FileManager.default.createFile(atPath: bodyPath, contents: body) else {
          throw TestFailure("cannot write \(bodyPath)")
        }
        config += "data-binary = \"@\(bodyPath)\"\n"
      }
      if request.method != "POST" || request.body == nil { config += "request = \"\(request.method)\"\n" }
      for header in request.headers { config += "header = \"\(header)\"\n" }
      if let interface { config += "interface = \"\(interface)\"\n" }
      config += "globoff\nmax-time = 30\n"
      config += "output = \"\(directory)/out-\(index)\"\n"
      config +=
        "write-out = \"%{http_code}\\t%{content_type}\\t%header{cache-control}\\t%header{retry-after}"
        + "\\t%header{allow}\\t%{filename_effective}\\n\"\n"
    }
    try config.write(toFile: directory + "/curl.cfg", atomically: false, encoding: .utf8)
    var arguments = ["-s", "-S"]
    if parallel > 1 { arguments += ["--parallel", "--parallel-max", String(parallel)] }
    if let rate { arguments += ["--rate", rate] }  // at most this many transfers started, e.g. "12/s"
    arguments += ["-K", directory + "/curl.cfg"]
    let output = try runProcess("/usr/bin/curl", arguments, timeout: timeout)
    var answers = [NginxAPIAnswer?](repeating: nil, count: requests.count)
    for line in output.stdoutText.split(separator: "\n", omittingEmptySubsequences: true) {
      let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
      guard fields.count == 6, let dash = fields[5].lastIndex(of: "-"),
        let index = Int(fields[5][fields[5].index(after: dash)...]), answers.indices.contains(index)
      else { continue }
      answers[index] = NginxAPIAnswer(
        status: Int(fields[0]) ?? 0, contentType: fields[1], cacheControl: fields[2], retryAfter: fields[3],
        allow: fields[4], body: FileManager.default.contents(atPath: "\(directory)/out-\(index)") ?? Data())
    }
    // A transfer curl could not complete (connection refused or reset) has status 0 and no body.
    return answers.map {
      $0
        ?? NginxAPIAnswer(
          status: 0, contentType: "", cacheControl: "", retryAfter: "", allow: "", body: Data())
    }
  }
}

/// Every API answer from a batch: JSON object, `application/json`, `no-store`, `error` exactly when it failed.
func expectBatchAnswer(
  _ answer: NginxAPIAnswer, _ label: String, sourceLocation: SourceLocation = #_sourceLocation
) {
  #expect(
    answer.contentType.hasPrefix("application/json"), "\(label): content-type '\(answer.contentType)'",
    sourceLocation: sourceLocation)
  #expect(
    answer.cacheControl == "no-store", "\(label): cache-control '\(answer.cacheControl)'",
    sourceLocation: sourceLocation)
  let object = answer.jsonObject
  #expect(
    object != nil, "\(label): not a JSON object: \(answer.text.prefix(200))", sourceLocation: sourceLocation)
  if answer.status == 200 {
    #expect(
      object?["error"] == nil, "\(label): 200 with error \(answer.text)", sourceLocation: sourceLocation)
  } else {
    #expect(
      answer.errorMessage?.isEmpty == false,
      "\(label): \(answer.status) without an error string: \(answer.text)",
      sourceLocation: sourceLocation)
  }
}

// MARK: A listener on the stack's database, fed by the APRS-IS fake

/// The APRS-IS fake and a real `aprs-listener` writing into the stack's database (no push credentials:
/// the outbox just fills up). `stop()` ends both.
final class NginxAPIListenerRig: @unchecked Sendable {
  let fake: FakeAPRSIS
  let listener: ListenerProcess

  /// Starts both and waits (bounded) until the listener is logged in with a filter that names `station`
  /// (`g/A/B/…`: every registered station).
  init(stack: TestStack, station: String, serverSettings: String = "") throws {
    fake = try FakeAPRSIS()
    do {
      listener = try ListenerProcess(
        database: stack.databasePath, config: ListenerProcess.config(fake: fake) + serverSettings)
    } catch {
      fake.stop()
      throw error
    }
    let fake = self.fake
    let loggedIn = try waitUntil(timeout: 15, interval: 0.05) {
      guard try fake.logins() >= 1, let filter = try fake.currentFilter(), filter.hasPrefix("g/") else {
        return false
      }
      return filter.dropFirst(2).split(separator: "/").contains { $0 == station }
    }
    guard loggedIn else {
      let seen = (try? fake.currentFilter()).flatMap { $0 } ?? "none"
      stop()
      throw TestFailure(
        "the listener did not log in with \(station) in its filter (saw \(seen)):\n\(listener.log)")
    }
  }

  deinit { stop() }

  func stop() {
    listener.stop()
    fake.stop()
  }

  /// Injects message lines to `station` and waits (bounded) until the station has `expectedTotal`
  /// messages in the database.
  func deliver(_ lines: [String], database: SQLiteFile, station: String, expectedTotal: Int) throws {
    let delivered = try fake.inject(lines)
    guard delivered == lines.count else {
      throw TestFailure("the fake delivered \(delivered) of \(lines.count) lines")
    }
    let stored = try database.waitUntil(timeout: 15) {
      try $0.int("SELECT count(*) FROM messages WHERE station = '\(station)'") == expectedTotal
    }
    guard stored else {
      let count = try database.int("SELECT count(*) FROM messages WHERE station = '\(station)'")
      throw TestFailure(
        "\(station) has \(count) messages, expected \(expectedTotal):\n\(listener.log.suffix(3000))")
    }
  }
}

// MARK: The contract on answers

/// An integer JSON number (no fraction, no exponent) that fits in 64 bits, or nil.
func nginxAPIInteger(_ value: JSONValue?) -> Int64? {
  guard case .number(let number)? = value, !number.literal.contains(where: { ".eE+".contains($0) }) else {
    return nil
  }
  return number.int64
}

/// A string member, or nil when absent or another type.
func nginxAPIString(_ value: JSONValue?) -> String? {
  if case .string(let text)? = value { return text }
  return nil
}

/// The raw text after each `"key":` in `text` (whitespace skipped), up to the next `,` `}` or `]`
/// outside a string: what the server literally wrote for that key.
func nginxAPIRawValues(of key: String, in text: String) -> [String] {
  let needle = Array("\"\(key)\"".utf8)
  let bytes = Array(text.utf8)
  var results: [String] = []
  var index = 0
  while index + needle.count <= bytes.count {
    guard Array(bytes[index..<(index + needle.count)]) == needle else {
      index += 1
      continue
    }
    var cursor = index + needle.count
    while cursor < bytes.count, bytes[cursor] == 0x20 || bytes[cursor] == 0x0A || bytes[cursor] == 0x09 {
      cursor += 1
    }
    guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: ":") else {
      index += 1
      continue
    }
    cursor += 1
    while cursor < bytes.count, bytes[cursor] == 0x20 || bytes[cursor] == 0x0A || bytes[cursor] == 0x09 {
      cursor += 1
    }
    let start = cursor
    var inString = false
    while cursor < bytes.count {
      let byte = bytes[cursor]
      if inString {
        if byte == UInt8(ascii: "\\") {
          cursor += 1
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
      } else if byte == UInt8(ascii: "\"") {
        inString = true
      } else if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
        break
      }
      cursor += 1
    }
    results.append(String(decoding: bytes[start..<min(cursor, bytes.count)], as: UTF8.self))
    index = cursor
  }
  return results
}

/// One message of a `messages` array, checked against docs/protocol.md ("Messages").
struct NginxAPIMessage: Equatable {
  var direction: String
  var peer: String
  var text: String
  var timestamp: Int64
  var seqId: String?
}

/// Decodes `messages` and records an issue for every breach of the message contract: exactly the six keys,
/// `type` "message", strings where strings belong, `timestamp` an integer, `seqId` a string or null, text
/// never empty; and in the raw text, no `seqId` written as a number and every `timestamp` written as digits.
func nginxAPIMessages(
  _ object: JSONObject, raw: String, sourceLocation: SourceLocation = #_sourceLocation
) -> [NginxAPIMessage] {
  guard case .array(let items)? = object["messages"] else {
    Issue.record("messages is not an array: \(raw.prefix(300))", sourceLocation: sourceLocation)
    return []
  }
  for value in nginxAPIRawValues(of: "seqId", in: raw) {
    #expect(
      value == "null" || value.hasPrefix("\""), "seqId written as \(value): never a JSON number",
      sourceLocation: sourceLocation)
  }
  for value in nginxAPIRawValues(of: "timestamp", in: raw) {
    #expect(
      !value.isEmpty && value.allSatisfy(\.isASCII) && value.allSatisfy(\.isNumber),
      "timestamp written as \(value)", sourceLocation: sourceLocation)
  }
  var messages: [NginxAPIMessage] = []
  for item in items {
    guard case .object(let message) = item else {
      Issue.record("a message is not an object: \(item)", sourceLocation: sourceLocation)
      continue
    }
    #expect(
      Set(message.keys) == ["direction", "type", "peer", "text", "timestamp", "seqId"]
        && message.keys.count == 6, "message keys \(message.keys)", sourceLocation: sourceLocation)
    #expect(nginxAPIString(message["type"]) == "message", "\(message)", sourceLocation: sourceLocation)
    let direction = nginxAPIString(message["direction"])
    #expect(direction == "received" || direction == "sent", "\(message)", sourceLocation: sourceLocation)
    let peer = nginxAPIString(message["peer"])
    #expect(peer?.isEmpty == false, "peer: \(message)", sourceLocation: sourceLocation)
    let text = nginxAPIString(message["text"])
    #expect(text?.isEmpty == false, "text: \(message)", sourceLocation: sourceLocation)
    let timestamp = nginxAPIInteger(message["timestamp"])
    #expect(timestamp != nil, "timestamp is not an integer: \(message)", sourceLocation: sourceLocation)
    var seqId: String?
    switch message["seqId"] {
    case .string(let text)?: seqId = text
    case .null?: seqId = nil
    default: Issue.record("seqId is neither a string nor null: \(message)", sourceLocation: sourceLocation)
    }
    messages.append(
      NginxAPIMessage(
        direction: direction ?? "", peer: peer ?? "", text: text ?? "", timestamp: timestamp ?? -1,
        seqId: seqId))
  }
  return messages
}

/// `serverTime` as an integer (an issue when it is missing or not an integer, also in the raw text).
func nginxAPIServerTime(
  _ object: JSONObject, raw: String, sourceLocation: SourceLocation = #_sourceLocation
) -> Int64 {
  let raws = nginxAPIRawValues(of: "serverTime", in: raw)
  #expect(
    raws.count == 1 && raws[0].allSatisfy { $0.isASCII && $0.isNumber },
    "serverTime written as \(raws)", sourceLocation: sourceLocation)
  guard let value = nginxAPIInteger(object["serverTime"]) else {
    Issue.record("serverTime is not an integer: \(raw.prefix(300))", sourceLocation: sourceLocation)
    return -1
  }
  return value
}

/// The `avatars` map (peer → hash): an issue unless it is an object of strings.
func nginxAPIAvatarMap(
  _ object: JSONObject, sourceLocation: SourceLocation = #_sourceLocation
) -> [String: String] {
  guard case .object(let avatars)? = object["avatars"] else {
    Issue.record("avatars is not an object: \(object)", sourceLocation: sourceLocation)
    return [:]
  }
  var map: [String: String] = [:]
  for (peer, value) in avatars.members {
    guard case .string(let hash) = value else {
      Issue.record("avatars[\(peer)] is not a string: \(value)", sourceLocation: sourceLocation)
      continue
    }
    map[peer] = hash
  }
  return map
}

// MARK: Small things

/// Lowercase hex SHA-256 of `text` (UTF-8), computed by coreutils, independently of the server.
func nginxAPISHA256(_ text: String) throws -> String {
  let directory = try makeTemporaryDirectory("sha")
  defer { try? FileManager.default.removeItem(atPath: directory) }
  try text.write(toFile: directory + "/input", atomically: false, encoding: .utf8)
  let output = try runProcess("/usr/bin/sha256sum", [directory + "/input"])
  guard output.status == 0 else { throw TestFailure("sha256sum failed: \(output.stderrText)") }
  return String(output.stdoutText.prefix(64))
}

/// A JSON text from a dictionary (values: String, Int, Bool, NSNull, arrays), keys sorted.
func nginxAPIJSON(_ fields: [String: Any]) -> String {
  let data = try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
  return String(decoding: data, as: UTF8.self)
}

/// A one-pixel PNG (a real image: signature, IHDR, IDAT, IEND), base64.
let nginxAPITinyPNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

/// The base64 of the PNG signature followed by `padding` bytes: PNG-shaped data of a chosen length
/// (`padding` 17_992 gives exactly 24000 characters).
func nginxAPIPNGShaped(padding: Int) -> String {
  let bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: padding)
  return Data(bytes).base64EncodedString()
}

/// Thread-safe counters shared by a test and its background writer.
final class NginxAPIWriterState: @unchecked Sendable {
  private let lock = NSLock()
  private var syncs = 0
  private var finished = false
  private var cancelled = false
  private var failure: String?
  private var bursts: [Int] = []

  var syncCount: Int { lock.withLock { syncs } }
  var isFinished: Bool { lock.withLock { finished } }
  var isCancelled: Bool { lock.withLock { cancelled } }
  var failureText: String? { lock.withLock { failure } }
  var burstSizes: [Int] { lock.withLock { bursts } }

  func syncDone() { lock.withLock { syncs += 1 } }
  func finish() { lock.withLock { finished = true } }
  func cancel() { lock.withLock { cancelled = true } }
  func fail(_ text: String) {
    lock.withLock {
      if failure == nil { failure = text }
      finished = true
    }
  }
  func burst(_ size: Int) { lock.withLock { bursts.append(size) } }
}

/// One phone in the cursor test: syncs N0CALL-7 back to back on its own thread, sending the last `serverTime`
/// as `since`, until the writer is done and it has `total` messages (or its time is up). It records what it
/// received and every breach of the contract as text (issues are asserted by the test on its own thread).
final class NginxAPIPhone: @unchecked Sendable {
  struct Result {
    var received: [NginxAPIMessage] = []
    var problems: [String] = []
    var syncs = 0
    var nonEmptySyncs = 0
    var since: Int64 = 0
  }

  private let lock = NSLock()
  private var current = Result()

  var result: Result { lock.withLock { current } }

  func follow(stack: TestStack, state: NginxAPIWriterState, total: Int, timeout: Double) {
    var result = Result()
    defer { lock.withLock { current = result } }
    let deadline = Date().addingTimeInterval(timeout)
    var failures = 0
    while Date() < deadline && state.failureText == nil {
      let writerDone = state.isFinished
      let body = #"{"callsign":"N0CALL","ssid":7,"since":\#(result.since),"auth":"13023"}"#
      let response: HTTPResponse
      do {
        response = try stack.post("/v1/sync", json: body)
      } catch {
        result.problems.append("sync \(result.syncs + 1): \(error)")
        failures += 1
        if failures >= 5 { return }
        continue
      }
      result.syncs += 1
      state.syncDone()
      let decoded = nginxAPIDecodeSync(response)
      guard decoded.problems.isEmpty, let serverTime = decoded.serverTime else {
        result.problems += decoded.problems.map { "sync \(result.syncs): \($0)" }
        failures += 1
        if failures >= 5 { return }
        continue
      }
      if serverTime < result.since {
        result.problems.append("serverTime \(serverTime) went back from \(result.since)")
      }
      for message in decoded.messages {
        if message.timestamp <= result.since {
          result.problems.append("timestamp \(message.timestamp) not after since \(result.since)")
        }
        if let previous = result.received.last, message.timestamp <= previous.timestamp {
          result.problems.append("timestamps not increasing: \(previous.timestamp) then \(message.timestamp)")
        }
        if message.timestamp > serverTime {
          result.problems.append("timestamp \(message.timestamp) newer than serverTime \(serverTime)")
        }
        result.received.append(message)
      }
      if !decoded.messages.isEmpty { result.nonEmptySyncs += 1 }
      result.since = max(result.since, serverTime)
      if writerDone && result.received.count >= total { return }
    }
  }
}

/// A sync answer checked like `nginxAPIMessages` and `nginxAPIServerTime`, but returning the breaches as
/// text instead of recording issues (for use off the test's own thread).
func nginxAPIDecodeSync(_ response: HTTPResponse) -> (
  messages: [NginxAPIMessage], serverTime: Int64?, problems: [String]
) {
  var problems: [String] = []
  guard response.status == 200, let object = response.jsonObject else {
    return ([], nil, ["\(response.status): \(response.text.prefix(300))"])
  }
  if response.header("content-type")?.hasPrefix("application/json") != true {
    problems.append("content-type \(response.header("content-type") ?? "none")")
  }
  if response.values("cache-control") != ["no-store"] {
    problems.append("cache-control \(response.values("cache-control"))")
  }
  let raw = response.text
  for value in nginxAPIRawValues(of: "seqId", in: raw) where !(value == "null" || value.hasPrefix("\"")) {
    problems.append("seqId written as \(value)")
  }
  for value in nginxAPIRawValues(of: "timestamp", in: raw)
  where value.isEmpty || !value.allSatisfy({ $0.isASCII && $0.isNumber }) {
    problems.append("timestamp written as \(value)")
  }
  let serverTimeRaw = nginxAPIRawValues(of: "serverTime", in: raw)
  if serverTimeRaw.count != 1 || !serverTimeRaw[0].allSatisfy({ $0.isASCII && $0.isNumber }) {
    problems.append("serverTime written as \(serverTimeRaw)")
  }
  let serverTime = nginxAPIInteger(object["serverTime"])
  if serverTime == nil { problems.append("serverTime is not an integer") }
  guard case .array(let items)? = object["messages"] else {
    return ([], serverTime, problems + ["messages is not an array"])
  }
  var messages: [NginxAPIMessage] = []
  for item in items {
    guard case .object(let message) = item,
      Set(message.keys) == ["direction", "type", "peer", "text", "timestamp", "seqId"],
      message.keys.count == 6,
      nginxAPIString(message["type"]) == "message", let direction = nginxAPIString(message["direction"]),
      let peer = nginxAPIString(message["peer"]), !peer.isEmpty,
      let text = nginxAPIString(message["text"]), !text.isEmpty,
      let timestamp = nginxAPIInteger(message["timestamp"])
    else {
      problems.append("message breaks the contract: \(item)")
      continue
    }
    let seqId: String?
    switch message["seqId"] {
    case .string(let number)?: seqId = number
    case .null?: seqId = nil
    default:
      problems.append("seqId neither a string nor null: \(item)")
      continue
    }
    messages.append(
      NginxAPIMessage(direction: direction, peer: peer, text: text, timestamp: timestamp, seqId: seqId))
  }
  return (messages, serverTime, problems)
}
