import Platform
import Store
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Long polls held through nginx for a list of registered stations, one `/v1/sync` with `wait:300` each: what
/// `longpoll` and `idle` hold, and the wake-ups they time (`LongPollBench`, `IdleBench`).
final class HeldLongPolls {
  /// The stations, `N0CALL-7` form; request `i` of the first round is `stations[i]`'s.
  let stations: [String]
  private let polls: HeldHTTPRequests
  private var indexOf: [Int: Int] = [:]  // request → station
  private var requestOf: [Int: Int] = [:]  // station → request
  private var sinceOf: [Int: Int64] = [:]  // station → its cursor, once it got a message
  private let since: Int64

  /// Nothing is sent yet: `hold` sends. `since` is every station's first cursor (the newest message timestamp).
  init(port: Int, stations: [String], since: Int64) {
    polls = HeldHTTPRequests(port: port)
    self.stations = stations
    self.since = since
  }

  /// The `/v1/sync` body that holds `stations[index]`'s long poll.
  func body(_ index: Int) -> String {
    let parts = stations[index].split(separator: "-")
    return #"{"callsign":"\#(parts[0])","ssid":\#(parts[1]),"auth":"\#(Self.passcode(String(parts[0])))","#
      + #""since":\#(sinceOf[index] ?? since),"wait":300}"#
  }

  /// Sends every station's long poll and waits (at most 120 s) until the responder's parked gauge at
  /// `metricsPort` shows them all; returns the seconds that took, nil (and says why) when they were not all held.
  func hold(metricsPort: Int) throws -> Double? {
    let opening = HeldHTTPRequests.now()
    for index in stations.indices { try open(index) }
    var parked = 0
    let heldBy = HeldHTTPRequests.now() + 120_000_000
    while HeldHTTPRequests.now() < heldBy {
      parked = Self.parkedGauge(metricsPort) ?? 0
      if parked >= stations.count { break }
      polls.collect(timeoutMs: 50) { false }
    }
    guard parked >= stations.count, polls.answers.isEmpty else {
      var statuses: [Int: Int] = [:]
      for answer in polls.answers.values { statuses[answer.status, default: 0] += 1 }
      let first = polls.answers.values.first.map { ": \($0.status) \($0.text.prefix(200))" } ?? ""
      printError(
        "only \(parked) of \(stations.count) long polls held; \(polls.answers.count) answered early"
          + " (by status \(statuses.sorted { $0.key < $1.key })\(first))")
      return nil
    }
    return Double(HeldHTTPRequests.now() - opening) / 1e6
  }

  /// Waits `milliseconds` without sending anything; returns how many long polls were answered meanwhile (each
  /// opened again after the wait).
  func idle(milliseconds: Int64) throws -> Int {
    let before = polls.answers.count
    let until = HeldHTTPRequests.now() + milliseconds * 1000
    while HeldHTTPRequests.now() < until {
      polls.collect(timeoutMs: max(1, (until - HeldHTTPRequests.now()) / 1000)) { false }
    }
    let answered = polls.answers.count - before
    try reopenAnswered()
    return answered
  }

  /// `count` times, one at a time at a random moment: stores a message for a random station through `database`
  /// (a commit, as the listener makes it; the connection must wake long polls, ``Store/CommitNotice``) and times
  /// commit → answer at the client, opening that station's long poll again. The latencies in µs, sorted; nil
  /// (and says which) when one was not answered within 5 s.
  func timeWakes(_ count: Int, database: Database) throws -> [Int64]? {
    var latencies: [Int64] = []
    var generator = SystemRandomNumberGenerator()
    for wake in 0..<count {
      var pause = timespec(tv_sec: 0, tv_nsec: Int.random(in: 1_000_000..<25_000_000, using: &generator))
      nanosleep(&pause, nil)
      let index = Int.random(in: stations.indices, using: &generator)
      guard let request = requestOf[index] else { continue }
      let message = IncomingMessage(
        station: stations[index], direction: .received, peer: "W1AW", text: "wake \(wake)", msgno: nil,
        dedupKey: "longpoll|\(wake)|\(HeldHTTPRequests.now())", dedupWindowMs: 1000)
      _ = try database.storeMessages([message], now: epochMilliseconds())
      let committed = HeldHTTPRequests.now()
      polls.collect(only: [request], timeoutMs: 5_000) { polls.answers[request] != nil }
      guard let answer = polls.answers[request], answer.status == 200 else {
        printError("wake \(wake) of \(stations[index]) not answered")
        return nil
      }
      latencies.append(answer.answeredAt - committed)
      indexOf[request] = nil
      sinceOf[index] = try database.messageActivity(after: .max).newestTimestamp
      try open(index)
    }
    return latencies.sorted()
  }

  /// Reads answers for up to `timeoutMs` and opens again the long polls that were answered.
  func keepHeld(timeoutMs: Int64) throws {
    let answered = polls.answers.count
    polls.collect(timeoutMs: timeoutMs) { polls.answers.count > answered }
    try reopenAnswered()
  }

  private func reopenAnswered() throws {
    for (request, _) in polls.answers where indexOf[request] != nil {
      try open(indexOf.removeValue(forKey: request)!)
    }
  }

  private func open(_ index: Int) throws {
    let request = try polls.send("/v1/sync", json: body(index))
    indexOf[request] = index
    requestOf[index] = request
  }

  /// p50, p99 and max of sorted µs latencies, as "p50 1.2 ms, p99 …, max …".
  static func percentiles(_ latencies: [Int64]) -> String {
    func percentile(_ p: Double) -> String {
      guard !latencies.isEmpty else { return "-" }
      let value = latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
      return fixed(Double(value) / 1000, decimals: 1) + " ms"
    }
    return "p50 \(percentile(0.5)), p99 \(percentile(0.99)), max \(percentile(1.0))"
  }

  /// `aprs_cloud_http_requests_parked` from the metrics listener.
  static func parkedGauge(_ port: Int) -> Int? {
    guard let fd = try? connectLoopbackTCP(port: port) else { return nil }
    defer { close(fd) }
    let request = Array("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var text: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if count <= 0 { break }
      text += buffer[..<count]
    }
    for line in String(decoding: text, as: UTF8.self).split(separator: "\n")
    where line.hasPrefix("aprs_cloud_http_requests_parked ") {
      return Int(line.split(separator: " ")[1])
    }
    return nil
  }

  /// The APRS-IS passcode of a base callsign.
  static func passcode(_ callsign: String) -> Int {
    let base = Array(callsign.uppercased().utf8)
    var hash = 0x73E2
    var index = 0
    while index < base.count {
      hash ^= Int(base[index]) << 8
      if index + 1 < base.count { hash ^= Int(base[index + 1]) }
      index += 2
    }
    return hash & 0x7FFF
  }
}
