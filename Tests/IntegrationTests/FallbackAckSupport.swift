import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// nginx + the real responder (its per-address limits on new stations and claims raised: every test client is
/// 127.0.0.1, and one test claims 50 stations), the APRS-IS fake and the real `aprs-listener` logged in verified
/// (``SettingsEndToEndTests/login``), for the `ackPolicy:"fallback"` tests. Stations are registered and claimed
/// through the API (``claim(_:ssid:ackMessages:)``) before ``startListener(ackInterval:)``; settings go through
/// `POST /v1/settings` with each station's key.
final class FallbackRig {
  let stack: TestStack
  let aprsis: FakeAPRSIS
  let database: SQLiteFile
  private let configDirectory: String
  private(set) var listener: ListenerProcess?
  /// Each claimed station's key, by address (`N0CALL-7`, a bare call as `CALL`).
  private(set) var keys: [String: String] = [:]

  init() throws {
    configDirectory = try makeTemporaryDirectory("fallback-cfg")
    try """
    [ratelimit]
    registrationsPerHour = 1000
    newStationsPerAddressPerHour = 1000
    newStationsPerNetworkPerHour = 1000
    newStationsPerWideNetworkPerHour = 1000
    claimsPerAddressPerHour = 1000
    claimsPerNetworkPerHour = 1000

    """.write(toFile: configDirectory + "/responder.ini", atomically: true, encoding: .utf8)
    let stack = try TestStack(.real(arguments: ["--config", configDirectory + "/responder.ini"]))
    do {
      aprsis = try FakeAPRSIS()
    } catch {
      stack.stop()
      throw error
    }
    self.stack = stack
    database = SQLiteFile(path: stack.databasePath)
  }

  func stop() {
    listener?.stop()
    aprsis.stop()
    stack.stop()
    try? FileManager.default.removeItem(atPath: configDirectory)
  }

  /// The listener's log (empty before it started).
  var log: String { listener?.log ?? "" }

  /// Registers `call`-`ssid` (an Android phone without a push token, `ackMessages` as given) and claims it; returns
  /// its address.
  @discardableResult
  func claim(_ call: String, ssid: Int, ackMessages: Bool = true) throws -> String {
    let identity = Self.identity(call, ssid: ssid)
    let registered = try stack.post(
      "/v1/register",
      json:
        #"{\#(identity),"platform":"android","pushToken":"","ackMessages":\#(ackMessages),"wantHistory":false,"since":0}"#
    )
    guard registered.status == 200 else { throw TestFailure("register \(call)-\(ssid): \(registered.text)") }
    let claim = try stack.post("/v1/claim", json: "{\(identity)}")
    guard let key = claim.jsonObject?.string("stationKey") else {
      throw TestFailure("claim \(call)-\(ssid): \(claim.text)")
    }
    let address = ssid == 0 ? call : "\(call)-\(ssid)"
    keys[address] = key
    return address
  }

  /// `"callsign":…,"ssid":…,"auth":…` for `call`-`ssid`.
  static func identity(_ call: String, ssid: Int) -> String {
    #""callsign":"\#(call)","ssid":\#(ssid),"auth":"\#(aprsPasscode(call))""#
  }

  /// `call` and `ssid` of an address.
  static func parts(_ address: String) -> (call: String, ssid: Int) {
    let split = address.split(separator: "-")
    return (String(split[0]), split.count > 1 ? Int(split[1]) ?? 0 : 0)
  }

  /// `POST /v1/settings` for `address` with `fields` (JSON members), with its key; the answer, which must be a 200.
  func settings(_ address: String, _ fields: String) throws -> JSONObject {
    let (call, ssid) = Self.parts(address)
    let response = try stack.post(
      "/v1/settings", json: "{\(Self.identity(call, ssid: ssid)),\(fields)}",
      headers: ["Authorization: Bearer \(keys[address] ?? "")"])
    guard response.status == 200, let object = response.jsonObject else {
      throw TestFailure("settings of \(address) answered \(response.status): \(response.text)")
    }
    return object
  }

  /// `POST /v1/sync` for `address` since 0 with its key (`want`: the JSON array's members, e.g. `"answeredBy"`);
  /// its messages.
  func sync(_ address: String, want: [String]? = nil) throws -> [JSONObject] {
    let (call, ssid) = Self.parts(address)
    let wants = want.map { #","want":[\#($0.map { "\"\($0)\"" }.joined(separator: ","))]"# } ?? ""
    let response = try stack.post(
      "/v1/sync", json: #"{\#(Self.identity(call, ssid: ssid)),"since":0\#(wants)}"#,
      headers: ["Authorization: Bearer \(keys[address] ?? "")"])
    guard response.status == 200, let object = response.jsonObject else {
      throw TestFailure("sync of \(address) answered \(response.status): \(response.text)")
    }
    return object.objects("messages")
  }

  /// Starts the listener on the fake (`ackInterval`: `[listener] ackInterval`, nil for the production 30 s) and
  /// waits until it logged in, verified.
  func startListener(ackInterval: String? = nil) throws {
    let config = ListenerProcess.config(
      fake: aprsis, login: SettingsEndToEndTests.login, passcode: SettingsEndToEndTests.passcode,
      extraListener: ackInterval.map { "ackInterval = \($0)\n" } ?? "")
    let started = try ListenerProcess(database: stack.databasePath, config: config)
    listener = started
    guard try aprsis.wait("login", count: 1), try aprsis.clients().last?.bool("verified") == true else {
      throw TestFailure("no verified login:\n\(started.log)")
    }
  }

  /// The listener's current `#filter` spec on the fake ("" when none).
  func filter() -> String { ((try? aprsis.currentFilter()) ?? nil) ?? "" }

  /// Waits (at most `timeout` s) until the current filter satisfies `condition`; false on timeout.
  func waitForFilter(timeout: Double = 10, _ condition: (String) -> Bool) -> Bool {
    waitUntil(timeout: timeout, interval: 0.05) { condition(filter()) }
  }

  /// `/health`'s `listener` object.
  func health() throws -> JSONObject {
    let response = try stack.get("/health")
    guard case .object(let listener)? = response.jsonObject?["listener"] else {
      throw TestFailure("/health answered \(response.status): \(response.text)")
    }
    return listener
  }

  /// `/health`'s `listener` object as text, for a failure's message.
  var healthSummary: String { (try? health()).map { "\($0)" } ?? "(no /health)" }

  /// The listener's counter `name` as `/health` shows it (-1 when missing).
  func counter(_ name: String) throws -> Int {
    guard case .object(let counters)? = try health()["counters"] else { return -1 }
    return counters.int(name) ?? -1
  }

  /// Waits (at most `timeout` s) until `/health`'s counter `name` is `value`.
  func waitForCounter(_ name: String, _ value: Int, timeout: Double = 5) -> Bool {
    waitUntil(timeout: timeout, interval: 0.1) { (try? counter(name)) == value }
  }

  /// The ACK lines the listener transmitted, with the fake's time of each (Unix seconds: the wall clock, the fake's
  /// clock is never advanced here).
  func acks() throws -> [(line: String, at: Double)] {
    try aprsis.transmitted().compactMap { record in
      guard let line = record.string("line"), line.contains(":ack"), case .number(let at)? = record["at"],
        let seconds = at.double
      else { return nil }
      return (line, seconds)
    }
  }

  /// ``acks()`` as text, for a failure's message.
  var ackSummary: String { (try? acks()).map { "\($0)" } ?? "(no record)" }
}

/// The radio's own answer as an igate gates it to APRS-IS: `station` answers `sender`'s message `msgno` with `word`
/// (`ack` or `rej`), heard through `igate` (its `qAR`).
func radioAnswer(
  _ station: String, to sender: String, _ word: String, _ msgno: String, igate: String = "OH2IGT"
)
  -> String
{
  let padded = sender.padding(toLength: 9, withPad: " ", startingAt: 0)
  return "\(station)>APK102,WIDE1-1,qAR,\(igate)::\(padded):\(word)\(msgno)"
}
