import API
import CompanionFiles
import Foundation
import JSON
import Store
import Synchronization
import Testing

/// A clock tests move by hand.
final class ManualClock: Sendable {
  private let value: Mutex<Int64>
  init(_ start: Int64 = 1_800_000_000_000) { value = Mutex(start) }
  var now: Int64 { value.withLock { $0 } }
  func advance(ms: Int64) { value.withLock { $0 += ms } }
}

/// The listener wakes a handler asked for, in order.
final class WakeLog: Sendable {
  private let kinds = Mutex<[ListenerWake]>([])
  func append(_ kind: ListenerWake) { kinds.withLock { $0.append(kind) } }
  /// What was asked for since the last call (and forgets it).
  func take() -> [ListenerWake] {
    kinds.withLock { kinds in
      defer { kinds = [] }; return kinds
    }
  }
}

/// A handler over a fresh database file in its own temp directory.
final class APIFixture {
  let directory: String
  let path: String
  let database: Database
  let clock = ManualClock()
  let handler: APIHandler
  /// The listener wakes the handler asked for.
  let wakes = WakeLog()

  init(config: APIConfig = APIConfig(), ringSize: Int = 50) throws {
    directory = NSTemporaryDirectory() + "api-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    path = directory + "/test.sqlite"
    var options = StoreOptions()
    options.ringSize = ringSize
    database = try Database(path: path, options: options)
    _ = try database.migrate()
    let clock = self.clock
    let wakes = self.wakes
    handler = APIHandler(
      database: database, config: config, clock: { clock.now }, wakeListener: { wakes.append($0) })
  }

  deinit {
    database.close()
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// The station key every request presents (`Authorization: Bearer`), once `claim` set it; nil: none.
  var stationKey: String?
  /// Keys of stations claimed by tests that speak for several stations, by the callsign they were claimed with.
  var claimedKeys: [String: String] = [:]

  /// POSTs a JSON text to `path`, with `stationKey` (when set) as its bearer token.
  func post(_ path: String, _ body: String) -> Reply {
    Reply(
      handler.handle(
        APIRequest(
          method: "POST", path: path, contentType: "application/json", body: Array(body.utf8),
          authorization: stationKey.map { "Bearer \($0)" })))
  }

  /// POSTs `fields` with the headers given (and no fixture key unless `authorization` says so): for the claim's
  /// and the cross-site checks' tests.
  func post(
    _ path: String, _ fields: [String: Any], authorization: String?, origin: String? = nil,
    fetchSite: String? = nil, host: String? = nil, scheme: RequestScheme? = nil, serverPort: Int? = nil,
    remoteAddress: String = "", method: String = "POST"
  ) -> Reply {
    let data = try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
    return Reply(
      handler.handle(
        APIRequest(
          method: method, path: path, contentType: "application/json", body: Array(data),
          remoteAddress: remoteAddress, authorization: authorization, origin: origin, fetchSite: fetchSite,
          host: host, scheme: scheme, serverPort: serverPort)))
  }

  /// Claims the station `identity` names (`callsign`, `ssid`, `auth`) and keeps its key for every later request.
  @discardableResult
  func claim(_ identity: [String: Any]) -> String {
    let reply = post("/v1/claim", identity)
    precondition(reply.status == 200, "claim failed: \(reply.text)")
    stationKey = reply["stationKey"]?.stringValue
    return stationKey!
  }

  /// POSTs an object built from a dictionary (values: String, Int, Bool, NSNull, arrays).
  func post(_ path: String, _ fields: [String: Any]) -> Reply {
    let data = try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
    return post(path, String(decoding: data, as: UTF8.self))
  }

  /// Stores a received message for `station` as the listener would.
  @discardableResult
  func deliver(to station: String, from peer: String, text: String, msgno: String? = nil) throws
    -> [StoreOutcome]
  {
    let key = "\(peer)|\(station)|\(msgno ?? "")|\(text)"
    let message = IncomingMessage(
      station: station, direction: .received, peer: peer, text: text, msgno: msgno, dedupKey: key,
      dedupWindowMs: 3_600_000)
    clock.advance(ms: 1)
    return try database.storeMessages([message], now: clock.now)
  }
}

extension APIFixture {
  /// N0CALL-7 and its passcode: the station the settings tests change.
  nonisolated(unsafe) static let settingsIdentity: [String: Any] = [
    "callsign": "N0CALL", "ssid": 7, "auth": "13023",
  ]

  /// A fixture with N0CALL-7 registered (without history) and claimed, its key kept: settings need the key.
  static func withClaimedStation() throws -> APIFixture {
    let fixture = try APIFixture()
    let reply = fixture.post("/v1/register", registerBody(["wantHistory": false]))
    #expect(reply.status == 200, "\(reply.text)")
    fixture.claim(settingsIdentity)
    return fixture
  }

  /// `POST /v1/settings` for N0CALL-7 with `fields`.
  func settings(_ fields: [String: Any] = [:]) -> Reply {
    post("/v1/settings", Self.settingsIdentity.merging(fields) { $1 })
  }
}

/// A response decoded for assertions.
struct Reply {
  let status: Int
  let headers: [(name: String, value: String)]
  let text: String
  let json: JSONValue?

  init(_ response: APIResponse) {
    status = response.status
    headers = response.headers
    text = String(decoding: response.body, as: UTF8.self)
    json = try? JSONParser.parse(response.body)
  }

  var object: JSONObject? {
    if case .object(let object)? = json { return object }
    return nil
  }

  subscript(key: String) -> JSONValue? { object?[key] }

  var error: String? {
    if case .string(let text)? = self["error"] { return text }
    return nil
  }

  func header(_ name: String) -> String? {
    headers.first { $0.name.lowercased() == name.lowercased() }?.value
  }

  var messages: [JSONObject] {
    guard case .array(let items)? = self["messages"] else { return [] }
    return items.compactMap { if case .object(let object) = $0 { object } else { nil } }
  }

  var serverTime: Int64? {
    if case .number(let number)? = self["serverTime"] { return number.int64 }
    return nil
  }
}

extension JSONValue {
  var stringValue: String? { if case .string(let text) = self { text } else { nil } }
  var intValue: Int64? { if case .number(let number) = self { number.int64 } else { nil } }
  var arrayValue: [JSONValue]? { if case .array(let items) = self { items } else { nil } }
}

/// A one-pixel PNG, base64.
let tinyPNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

/// A register body for N0CALL-7 the way the app sends it.
func registerBody(_ extra: [String: Any] = [:]) -> [String: Any] {
  var body: [String: Any] = [
    "callsign": "n0call", "ssid": 7, "platform": "android", "pushToken": "fcm-token:APA91b-test",
    "ackMessages": false, "wantHistory": true, "since": 0, "auth": "13023",
  ]
  body.merge(extra) { $1 }
  return body
}
