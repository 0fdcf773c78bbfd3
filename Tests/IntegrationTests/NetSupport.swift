import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// nginx + the real responder, the push fake, the APRS-IS fake and the real `aprs-listener` (logged in verified,
/// `[send] poll` 50 ms), for the nets-and-rooms tests (docs/protocol.md "Nets and rooms"). The member station is
/// registered and claimed through the API; its owner's phone registers with the key and `want:["rooms"]` (an
/// Android device the push fake answers). Both the responder and the listener keep 1000 entries a ring
/// (`[server] ringSize`): a net's two hours of fan-out are more than the default ring of 50.
final class NetRig {
  /// The member station (a call APRS-IS passes as a source: the join goes out from it).
  let station: String
  let stack: TestStack
  let push: PushProviderFake
  let aprsis: FakeAPRSIS
  let database: SQLiteFile
  private(set) var listener: ListenerProcess
  /// The key of the station's claim.
  let stationKey: String
  private let configDirectory: String
  static let pushToken = "nets-fcm:APA91bNet_member-0123456789"

  init(station: String = "KJ7STI-1") throws {
    self.station = station
    var started: [() -> Void] = []
    do {
      let directory = try makeTemporaryDirectory("net-cfg")
      started.append { try? FileManager.default.removeItem(atPath: directory) }
      try "[server]\nringSize = 1000\n".write(
        toFile: directory + "/responder.ini", atomically: true, encoding: .utf8)
      let stack = try TestStack(.real(arguments: ["--config", directory + "/responder.ini"]))
      started.append { stack.stop() }
      let push = try PushProviderFake()
      started.append { push.stop() }
      let aprsis = try FakeAPRSIS()
      started.append { aprsis.stop() }
      let identity = Self.identity(station)
      let registered = try stack.post(
        "/v1/register",
        json: #"{\#(identity),"platform":"android","pushToken":"","wantHistory":false,"since":0}"#)
      guard registered.status == 200 else { throw TestFailure("register: \(registered.text)") }
      let claim = try stack.post("/v1/claim", json: "{\(identity)}")
      let key = try #require(claim.jsonObject?.string("stationKey"), "claim: \(claim.text)")
      let phone = try stack.post(
        "/v1/register",
        json:
          #"{\#(identity),"platform":"android","pushToken":"\#(Self.pushToken)","ackMessages":true,"wantHistory":false,"since":0,"want":["rooms"]}"#,
        headers: ["Authorization: Bearer \(key)"])
      guard phone.status == 200 else { throw TestFailure("register the phone: \(phone.text)") }
      let listener = try ListenerProcess(database: stack.databasePath, config: Self.config(aprsis, push))
      started.append { listener.stop() }
      let database = SQLiteFile(path: stack.databasePath)
      try #require(try aprsis.wait("login", count: 1), "no login:\n\(listener.log)")
      try #require(
        try database.waitUntil { try $0.meta("connected") == "1" && $0.meta("receiveOnly") == "0" },
        "the listener did not publish its verified login:\n\(listener.log)")
      (self.stack, self.push, self.aprsis, self.listener, self.database) = (
        stack, push, aprsis, listener, database
      )
      stationKey = key
      configDirectory = directory
    } catch {
      for stop in started.reversed() { stop() }
      throw error
    }
  }

  func stop() {
    listener.stop()
    aprsis.stop()
    push.stop()
    stack.stop()
    try? FileManager.default.removeItem(atPath: configDirectory)
  }

  /// `"callsign":…,"ssid":…,"auth":…` of `address`.
  static func identity(_ address: String) -> String {
    let parts = address.split(separator: "-")
    let call = String(parts[0])
    let ssid = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
    return #""callsign":"\#(call)","ssid":\#(ssid),"auth":"\#(aprsPasscode(call))""#
  }

  /// The listener's INI: the APRS-IS fake (verified login TESTING), the push fake, no coalescing, a ring of 1000,
  /// sends looked at every 50 ms.
  static func config(_ aprsis: FakeAPRSIS, _ push: PushProviderFake) -> String {
    ListenerProcess.config(
      fake: aprsis, login: SettingsEndToEndTests.login, passcode: SettingsEndToEndTests.passcode)
        + """
        ringSize = 1000

        [send]
        schedule = 0, 31
        ackWait = 60s
        poll = 50ms

        [messaging]
        coalesceWindow = 0

        [messaging.android]
        serviceAccountFile = \(push.directory)/service-account.json
        endpoint = https://127.0.0.1:\(push.port)
        caFile = \(push.directory)/ca.pem

        """
  }

  /// `POST /v1/settings` for the station with `fields` (JSON members; "" only reads them) and its key; the whole
  /// answer.
  func settings(_ fields: String) throws -> HTTPResponse {
    try stack.post(
      "/v1/settings", json: "{\(Self.identity(station))\(fields.isEmpty ? "" : ",")\(fields)}",
      headers: ["Authorization: Bearer \(stationKey)"])
  }

  /// `POST /v1/send` for the station with `fields` (JSON members) and its key.
  func send(_ fields: String) throws -> HTTPResponse {
    try stack.post(
      "/v1/send", json: "{\(Self.identity(station)),\(fields)}",
      headers: ["Authorization: Bearer \(stationKey)"])
  }

  /// Every entry a sync with the key shows from 0, page after page (`want`: the JSON array's members; nil for
  /// the shipping app's sync without `want`). At most 50 pages.
  func sync(want: [String]? = nil) throws -> [JSONObject] {
    let wants = want.map { #","want":[\#($0.map { "\"\($0)\"" }.joined(separator: ","))]"# } ?? ""
    var entries: [JSONObject] = []
    var since = 0
    for _ in 0..<50 {
      let response = try stack.post(
        "/v1/sync", json: #"{\#(Self.identity(station)),"since":\#(since)\#(wants)}"#,
        headers: ["Authorization: Bearer \(stationKey)"])
      guard response.status == 200, let object = response.jsonObject else {
        throw TestFailure("sync answered \(response.status): \(response.text)")
      }
      let page = object.objects("messages")
      guard !page.isEmpty, let next = object.int("serverTime"), next > since else { return entries + page }
      entries += page
      since = next
    }
    throw TestFailure("sync: more than 50 pages")
  }

  /// The lines the listener transmitted on the fake with the fake's time of each (Unix seconds: the wall clock,
  /// the fake's clock is never advanced here).
  func transmitted() throws -> [(line: String, at: Double)] {
    try aprsis.transmitted().compactMap { record in
      guard let line = record.string("line"), case .number(let at)? = record["at"], let seconds = at.double
      else { return nil }
      return (line, seconds)
    }
  }

  /// The station's messages to `service` on the fake whose text starts with `text` (`K HOTG`), in order.
  func commands(to service: String, _ text: String) throws -> [(line: String, at: Double)] {
    let head = "\(station)>"
    let body = "::\(service.padding(toLength: 9, withPad: " ", startingAt: 0)):\(text)"
    return try transmitted().filter { $0.line.hasPrefix(head) && $0.line.contains(body) }
  }

  /// Waits (at most `timeout` s) until the station has sent `count` messages to `service` starting with `text`;
  /// the last of them, nil on timeout.
  func waitForCommand(
    to service: String, _ text: String, count: Int = 1, timeout: Double = 5
  ) throws -> (line: String, at: Double)? {
    var found: [(line: String, at: Double)] = []
    _ = try waitUntil(timeout: timeout, interval: 0.02) {
      found = try commands(to: service, text)
      return found.count >= count
    }
    return found.count >= count ? found[count - 1] : nil
  }

  /// The message number of a transmitted line (what follows its last `{`), nil when it has none.
  static func msgno(of line: String) -> String? {
    guard let brace = line.lastIndex(of: "{") else { return nil }
    return String(line[line.index(after: brace)...])
  }

  /// A line addressed to the station from `source` (`path` after the destination), `text` as the message's.
  func line(from source: String, path: String = "APWW11,TCPIP*", _ text: String) -> String {
    "\(source)>\(path)::\(station.padding(toLength: 9, withPad: " ", startingAt: 0)):\(text)"
  }

  /// The push fake's FCM requests: each one's data map (strings) with the fake's time of the request (ms).
  func pushes() throws -> [(data: JSONObject, at: Int64)] {
    try push.endToEndRequests("fcm").compactMap { request in
      guard let data = endToEndObject(request, "body", "message", "data"),
        case .number(let at)? = request["at"]
      else { return nil }
      return (data, at.int64 ?? 0)
    }
  }
}
