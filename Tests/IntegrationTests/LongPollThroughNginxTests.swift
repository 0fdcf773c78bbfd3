import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Long polls (`/v1/sync` with `wait`) through real nginx and the real responder, woken by the real
/// listener fed by the APRS-IS fake: 2,000 held at once from one client process, messages wake
/// exactly their stations, a client that goes away frees its request, other requests flow
/// meanwhile, the rest time out at `wait` with `messages:[]`; SIGTERM answers every held request.
@Suite(.serialized) struct LongPollThroughNginxTests {
  static func syncBody(_ station: String, since: Int64 = 0, wait: Int) -> String {
    let parts = station.split(separator: "-")
    let ssid = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
    return
      #"{"callsign":"\#(parts[0])","ssid":\#(ssid),"auth":"\#(aprsPasscode(String(parts[0])))","since":\#(since),"wait":\#(wait)}"#
  }

  /// The responder's parked-requests gauge, from the private metrics listener.
  static func parked(_ stack: TestStack) -> Int? {
    guard let metrics = try? stack.metrics(), metrics.status == 200 else { return nil }
    for line in metrics.text.split(separator: "\n") where line.hasPrefix("aprs_cloud_http_requests_parked ") {
      return Int(line.split(separator: " ")[1])
    }
    return nil
  }

  @Test func twoThousandHeldRequestsAreWokenByTheirOwnMessagesOnly() throws {
    // nginx's read timeout for everything else is 1 s here: /v1/sync has its own (330 s). Every
    // request comes from 127.0.0.1: the per-address cap is raised to let 2,000 be held.
    let stack = try TestStack.real(config: "[server]\nmaxParkedPerAddress = 10000\n", readTimeout: 1)
    defer { stack.stop() }
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let database = SQLiteFile(path: stack.databasePath)
    let stations = listenerStations(2000, prefix: "LP")
    try database.register(stations)
    let listener = try ListenerProcess(
      database: stack.databasePath, config: ListenerProcess.config(fake: fake))
    defer { listener.stop() }
    #expect(
      try database.waitUntil(timeout: 30) {
        try $0.meta("state") == "online" && $0.meta("filterSize") == "2000"
      }, "\(listener.log)")

    // 2,000 long polls of 5 s, one per station, from this one process.
    let wait = 5
    let polls = HeldHTTPRequests(port: stack.port)
    var byStation: [String: Int] = [:]
    for station in stations {
      byStation[station] = try polls.send("/v1/sync", json: Self.syncBody(station, wait: wait))
    }
    let opened = HeldHTTPRequests.now()
    #expect(waitUntil(timeout: 20) { Self.parked(stack) == 2000 }, "parked: \(Self.parked(stack) ?? -1)")
    polls.collect(timeoutMs: 50) { false }
    #expect(polls.answers.isEmpty, "answered before any message: \(polls.answers.values.first?.text ?? "")")

    // Other requests are served meanwhile, at once.
    for _ in 0..<10 {
      let started = Date()
      let plain = try stack.post("/v1/sync", json: Self.syncBody("LP0", wait: 0))
      #expect(plain.status == 200 && Date().timeIntervalSince(started) < 2)
      #expect(try stack.get("/health").status != 502)
    }

    // Messages for 20 stations through APRS-IS: exactly those 20 are answered, with their message.
    let woken = Array(stations.shuffled().prefix(20))
    let injected = HeldHTTPRequests.now()
    _ = try fake.inject(woken.map { messageLine(from: "W1AW", to: $0, text: "wake \($0)", msgno: nil) })
    let wokenIndexes = Set(woken.map { byStation[$0]! })
    #expect(polls.collect(timeoutMs: 10_000) { wokenIndexes.allSatisfy { polls.answers[$0] != nil } })
    #expect(Set(polls.answers.keys) == wokenIndexes, "answered: \(polls.answers.count)")
    for station in woken {
      guard let answer = polls.answers[byStation[station]!] else { continue }
      #expect(answer.status == 200)
      guard case .object(let object)? = try? JSONParser.parse(answer.body),
        case .array(let messages)? = object["messages"], messages.count == 1,
        case .object(let message) = messages[0]
      else {
        Issue.record("\(station): \(answer.text)")
        continue
      }
      #expect(message["text"] == .string("wake \(station)"))
      let after = (answer.answeredAt - injected) / 1000
      #expect(after < 3_000, "\(station) answered after \(after) ms")
    }

    // 100 clients go away: their held requests are freed.
    let leaving = stations.filter { !woken.contains($0) }.prefix(100).map { byStation[$0]! }
    for index in leaving { polls.abandon(index) }
    #expect(waitUntil(timeout: 10) { Self.parked(stack) == 1880 }, "parked: \(Self.parked(stack) ?? -1)")

    // The rest run out at `wait`: 200 with no messages and the usual serverTime.
    #expect(polls.collect(timeoutMs: 20_000) { polls.waiting == 0 })
    let timedOut = polls.answers.filter { !wokenIndexes.contains($0.key) }
    #expect(timedOut.count == 1880)
    var problems: [String] = []
    for (_, answer) in timedOut {
      let waited = (answer.answeredAt - answer.sentAt) / 1000
      guard answer.status == 200, case .object(let object)? = try? JSONParser.parse(answer.body),
        object["messages"] == .array([]), object["serverTime"] != nil
      else {
        problems.append("\(answer.status) \(answer.text)")
        continue
      }
      if waited < Int64(wait) * 1000 - 200 || waited > Int64(wait) * 1000 + 5_000 {
        problems.append("answered after \(waited) ms")
      }
    }
    #expect(problems.isEmpty, "\(problems.prefix(5))")
    #expect(HeldHTTPRequests.now() - opened < 30_000_000)
    #expect(Self.parked(stack) == 0)
  }

  /// SIGTERM: every held request is answered (200, `messages:[]`) at once, and the responder exits.
  @Test func sigtermAnswersEveryHeldRequestBeforeExit() throws {
    let stack = try TestStack.real(config: "[server]\nmaxParkedPerAddress = 10000\n")
    defer { stack.stop() }
    let database = SQLiteFile(path: stack.databasePath)
    let stations = listenerStations(300, prefix: "ST")
    try database.register(stations)
    let polls = HeldHTTPRequests(port: stack.port)
    for station in stations { _ = try polls.send("/v1/sync", json: Self.syncBody(station, wait: 120)) }
    #expect(waitUntil(timeout: 20) { Self.parked(stack) == 300 }, "parked: \(Self.parked(stack) ?? -1)")

    let stopped = HeldHTTPRequests.now()
    stack.stopResponder()
    #expect(polls.collect(timeoutMs: 10_000) { polls.waiting == 0 })
    #expect(HeldHTTPRequests.now() - stopped < 10_000_000)
    let answers = Array(polls.answers.values)
    #expect(answers.count == 300)
    #expect(
      answers.allSatisfy {
        guard $0.status == 200, case .object(let object)? = try? JSONParser.parse($0.body) else {
          return false
        }
        return object["messages"] == .array([]) && object["serverTime"] != nil
      }, "\(answers.first { $0.status != 200 }?.text ?? "")")
    let log = (try? String(contentsOfFile: stack.directory + "/responder.log", encoding: .utf8)) ?? ""
    #expect(log.contains("aprs-cloud-fcgi stopped"))
  }
}
