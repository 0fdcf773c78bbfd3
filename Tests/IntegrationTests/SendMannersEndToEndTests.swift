import Foundation
import JSON
import TestSupport
import Testing

/// Sending within APRS-IS manners end to end: `/v1/send` through nginx and the real responder, with the real
/// `aprs-listener` on the APRS-IS fake. Many stations with their computed passcodes send from one client address
/// and then from others: the per-address and the global limits answer 429 with `Retry-After` (a network's share
/// of everyone's holds, and a minute's worth past everyone's budget waits for the next minute), counted in
/// `/metrics`; the listener writes no more lines a minute than its transmit budget, the other copies wait (and
/// `/health` says so); a waiting send can be cancelled. The budget's minute is not waited out here (the
/// schedule after the wait is `SendSchedulerTests` and `OutboundSenderTests`, with an injected clock).
@Suite(.serialized) struct SendMannersEndToEndTests {
  /// Per address 2, everyone 6 (so a network 2: a third), the budget 3 lines a minute.
  static let limits = """
    [send]
    sendsPerAddressPerMinute = 2
    sendsPerMinuteGlobal = 6
    transmitBudgetPerMinute = 3
    schedule = 0, 31
    poll = 50ms

    """
  static let stations = (1...13).map { "W\($0)TST" }

  @Test func oneAddressAndEveryoneAreLimitedAndTheAirGetsNoMoreThanTheBudget() throws {
    let rig = try MannersRig()
    defer { rig.stop() }
    // Two stations from 127.0.0.1: accepted; the third from the same address: 429.
    for (index, station) in Self.stations.prefix(2).enumerated() {
      let reply = try rig.send(from: station, address: "127.0.0.1", clientId: "c\(index)")
      #expect(reply.status == 200, "\(station): \(reply.text)")
    }
    let fromAddress = try rig.send(from: Self.stations[2], address: "127.0.0.1")
    #expect(fromAddress.status == 429, "\(fromAddress.text)")
    #expect(fromAddress.errorMessage?.contains("from this address") == true, "\(fromAddress.text)")
    #expect(Int(fromAddress.header("retry-after") ?? "") ?? 0 >= 1)
    // Four more from two other networks (each at most its share, a third of everyone's) fill the global limit.
    for (station, address) in zip(Self.stations[2...5], ["127.0.1.2", "127.0.1.2", "127.0.2.3", "127.0.2.3"])
    {
      let reply = try rig.send(from: station, address: address)
      #expect(reply.status == 200, "\(station): \(reply.text)")
    }
    // Past everyone's budget, a minute's worth more is accepted to wait for the next minute; then 429.
    let later = ["127.0.3.4", "127.0.3.4", "127.0.4.5", "127.0.4.5", "127.0.5.6", "127.0.5.6"]
    for (station, address) in zip(Self.stations[6...11], later) {
      let reply = try rig.send(from: station, address: address)
      #expect(reply.status == 200, "\(station): \(reply.text)")
    }
    let global = try rig.send(from: Self.stations[12], address: "127.0.6.7")
    #expect(global.status == 429, "\(global.text)")
    #expect(global.errorMessage?.contains("through this server") == true, "\(global.text)")
    #expect(global.header("retry-after") != nil)
    #expect(try rig.database.int("SELECT count(*) FROM sends") == 12)
    #expect(try rig.database.int("SELECT count(*) FROM sends WHERE budget_delay_ms > 0") == 6)

    // Six first copies are due at once; the budget lets three out and the listener says the rest wait.
    #expect(try rig.aprsis.wait("transmitted", count: 3, timeout: 5), "\(rig.listener.log)")
    #expect(
      try rig.database.waitUntil { try $0.meta("sendBudgetFull") == "1" },
      "budget not full:\n\(rig.listener.log)")
    let health = try rig.stack.get("/health")
    #expect(health.status == 200, "\(health.text)")
    guard case .object(let send)? = health.jsonObject?["send"] else {
      Issue.record("no send in /health: \(health.text)")
      return
    }
    #expect(send["budgetFull"] == .bool(true), "\(health.text)")
    #expect(health.text.contains("transmit budget"), "\(health.text)")
    // Nothing more goes out while the minute lasts: the fake got at most the budget in any minute.
    #expect(try rig.aprsis.wait("transmitted", count: 4, timeout: 2) == false, "past the budget")
    let times = try rig.aprsis.transmitted().compactMap { $0.double("at") }
    #expect(times.count == 3)
    for (index, start) in times.enumerated() {
      #expect(times[index...].prefix { $0 - start < 60 }.count <= 3)
    }
    #expect(try rig.database.int("SELECT count(*) FROM sends WHERE transmissions = 0") == 9)

    let metrics = try rig.stack.metrics().text
    for line in [
      #"aprs_cloud_limit_hits_total{limit="sendsPerAddressPerMinute"} 1"#,
      #"aprs_cloud_limit_hits_total{limit="sendsPerMinuteGlobal"} 1"#,
      #"aprs_cloud_limit_setting{limit="sendsPerMinuteGlobal"} 6"#,
      #"aprs_cloud_sends_total{outcome="accepted"} 12"#, "aprs_cloud_send_transmissions_total 3",
      "aprs_cloud_send_copies_delayed_total 0", "aprs_cloud_listener_send_budget_full 1",
    ] {
      #expect(metrics.contains(line + "\n"), "\(line)")
    }
  }

  @Test func aCancelStopsASendThatWaitsForTheBudgetAndTheListenerNeverSendsIt() throws {
    let rig = try MannersRig()
    defer { rig.stop() }
    for (index, station) in Self.stations.prefix(4).enumerated() {
      let address = index < 2 ? "127.0.0.1" : "127.0.1.2"
      #expect(try rig.send(from: station, address: address, clientId: "c\(index)").status == 200)
    }
    #expect(try rig.aprsis.wait("transmitted", count: 3, timeout: 5), "\(rig.listener.log)")
    #expect(try rig.database.waitUntil { try $0.meta("sendBudgetFull") == "1" }, "\(rig.listener.log)")
    // The send still waiting (no copy yet), cancelled by its station.
    let waiting = try rig.database.run(
      "SELECT station || ' ' || client_id FROM sends WHERE transmissions = 0"
    ).trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").map(String.init)
    try #require(waiting.count == 2, "\(waiting)")
    let cursor = try #require(try rig.sync(waiting[0], since: 0).int("serverTime"))
    let cancelled = try rig.cancel(waiting[0], clientId: waiting[1])
    #expect(cancelled.status == 200, "\(cancelled.text)")
    guard case .object(let message)? = cancelled.jsonObject?["message"] else {
      Issue.record("\(cancelled.text)")
      return
    }
    #expect(message["state"] == .string("cancelled") && message["clientId"] == .string(waiting[1]))
    let entries = try rig.sync(waiting[0], since: cursor).objects("messages")
    #expect(entries.count == 1 && entries.first?.string("state") == "cancelled", "\(entries)")
    #expect(
      try rig.database.run("SELECT state, next_at IS NULL FROM sends WHERE transmissions = 0")
        == "cancelled|1\n")
    // Once the other waiting send is all that waits, the budget still holds it; the cancelled one never goes.
    #expect(try rig.aprsis.wait("transmitted", count: 4, timeout: 1.5) == false)
    #expect(try !rig.aprsis.transmitted().contains { $0.string("line")?.hasPrefix(waiting[0] + ">") == true })
    // Unknown: 404 with an error; again: answered as it is.
    let unknown = try rig.cancel(waiting[0], clientId: "nope")
    #expect(unknown.status == 404 && unknown.errorMessage != nil, "\(unknown.text)")
    let again = try rig.cancel(waiting[0], clientId: waiting[1])
    #expect(again.status == 200 && again.jsonObject?["message"] == cancelled.jsonObject?["message"])
    #expect(try rig.stack.metrics().text.contains(#"aprs_cloud_sends_total{outcome="cancelled"} 1"# + "\n"))
  }
}

/// nginx + the responder and a listener on the APRS-IS fake, both configured with ``SendMannersEndToEndTests``'s
/// limits, and its stations registered.
private final class MannersRig {
  let stack: TestStack
  let aprsis: FakeAPRSIS
  let database: SQLiteFile
  let listener: ListenerProcess
  private let directory: String
  /// Each station's key (sending needs a claimed station), by call.
  private var keys: [String: String] = [:]

  init() throws {
    directory = try makeTemporaryDirectory("send-manners")
    let aprsis = try FakeAPRSIS()
    let config =
      ListenerProcess.config(fake: aprsis, login: "TESTING", passcode: 31421) + "\n"
      + SendMannersEndToEndTests.limits
    let path = directory + "/aprs-cloud.ini"
    let stack: TestStack
    do {
      try config.write(toFile: path, atomically: true, encoding: .utf8)
      stack = try TestStack(.real(arguments: ["--config", path]))
    } catch {
      aprsis.stop()
      throw error
    }
    self.stack = stack
    self.aprsis = aprsis
    database = SQLiteFile(path: stack.databasePath)
    do {
      try database.register(SendMannersEndToEndTests.stations)
      listener = try ListenerProcess(database: stack.databasePath, config: config)
    } catch {
      aprsis.stop()
      stack.stop()
      throw error
    }
    do {
      for (index, station) in SendMannersEndToEndTests.stations.enumerated() {
        let claim = try post(
          "/v1/claim", ["callsign": station, "ssid": 0, "auth": String(aprsPasscode(station))],
          address: "127.0.9.\(index + 1)")
        keys[station] = try #require(claim.jsonObject?.string("stationKey"), "claim: \(claim.text)")
      }
      try #require(try aprsis.wait("login", count: 1), "no login:\n\(listener.log)")
      try #require(
        try database.waitUntil { try $0.meta("connected") == "1" && $0.meta("receiveOnly") == "0" },
        "the listener did not publish its login:\n\(listener.log)")
    } catch {
      stop()
      throw error
    }
  }

  /// `POST /v1/send` as `station` (its computed passcode) from the loopback `address` (curl's `--interface`).
  func send(from station: String, address: String, clientId: String? = nil) throws -> HTTPResponse {
    var body: [String: Any] = [
      "callsign": station, "ssid": 0, "auth": String(aprsPasscode(station)), "to": "KJ7ABC-7",
      "text": "Hello from \(station)",
    ]
    if let clientId { body["clientId"] = clientId }
    body["stationKey"] = keys[station]
    return try post("/v1/send", body, address: address)
  }

  func cancel(_ station: String, clientId: String) throws -> HTTPResponse {
    try post(
      "/v1/send",
      [
        "callsign": station, "ssid": 0, "auth": String(aprsPasscode(station)), "cancel": clientId,
        "stationKey": keys[station] ?? "",
      ],
      address: "127.0.0.1")
  }

  func sync(_ station: String, since: Int) throws -> JSONObject {
    let response = try post(
      "/v1/sync", ["callsign": station, "ssid": 0, "auth": String(aprsPasscode(station)), "since": since],
      address: "127.0.0.1")
    return try #require(response.jsonObject, "sync answered \(response.status) \(response.text)")
  }

  private func post(_ path: String, _ body: [String: Any], address: String) throws -> HTTPResponse {
    let data = try JSONSerialization.data(withJSONObject: body)
    return try stack.post(
      path, json: String(decoding: data, as: UTF8.self), arguments: ["--interface", address])
  }

  func stop() {
    listener.stop()
    aprsis.stop()
    stack.stop()
    try? FileManager.default.removeItem(atPath: directory)
  }
}

extension JSONObject {
  /// A number member as a `Double` (the fake's `at` times are Unix seconds with a fraction).
  fileprivate func double(_ key: String) -> Double? {
    if case .number(let number)? = self[key] { return number.double }
    return nil
  }
}
