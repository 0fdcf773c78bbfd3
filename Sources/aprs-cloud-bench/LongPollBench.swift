import Platform
import Store
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// `longpoll DB PORT METRICS_PORT RESPONDER_PID COUNT WAKES READY_FILE`: long polls behind nginx
/// (`Tests/bench/run` starts nginx and the responder on DB).
///
/// Registers COUNT stations, holds one `/v1/sync` with `wait:300` per station open through nginx at
/// 127.0.0.1:PORT until the responder's parked gauge (METRICS_PORT) shows them all, and prints the
/// responder's resident memory then. Then WAKES times, one at a time at a random moment: stores a
/// message for a random station (a commit, as the listener makes it) and times commit → answer on
/// the client, re-opening that station's long poll; prints p50/p99/max. Then writes READY_FILE and
/// keeps the long polls open (re-opening any that are answered) until it is killed, so the caller
/// can load the server while they wait.
enum LongPollBench: Benchmark {
  static let name = "longpoll"
  static let usage =
    "longpoll DB PORT METRICS_PORT RESPONDER_PID COUNT WAKES READY_FILE   hold COUNT long polls, time WAKES wake-ups"

  static func run(_ arguments: [String]) -> Int32 {
    guard arguments.count == 7, let port = Int(arguments[1]), let metricsPort = Int(arguments[2]),
      let pid = Int(arguments[3]), let count = Int(arguments[4]), count > 0, let wakes = Int(arguments[5])
    else {
      printError("usage: aprs-cloud-bench \(usage)")
      return 2
    }
    do {
      return try bench(
        path: arguments[0], port: port, metricsPort: metricsPort, pid: pid, count: count, wakes: wakes,
        ready: arguments[6])
    } catch {
      printError("longpoll: \(error)")
      return 1
    }
  }

  static func station(_ index: Int) -> String {
    "LP" + String(index + 10_000).dropFirst() + "-\(index % 15 + 1)"
  }

  static func body(_ index: Int, since: Int64) -> String {
    let parts = station(index).split(separator: "-")
    return #"{"callsign":"\#(parts[0])","ssid":\#(parts[1]),"auth":"\#(passcode(String(parts[0])))","#
      + #""since":\#(since),"wait":300}"#
  }

  static func bench(
    path: String, port: Int, metricsPort: Int, pid: Int, count: Int, wakes: Int, ready: String
  ) throws -> Int32 {
    let database = try Database(path: path)
    defer { database.close() }
    _ = try database.migrate()
    let now: Int64 = 1_800_000_000_000
    try database.writeBatch { () throws(StoreError) in
      for index in 0..<count {
        let address = station(index)
        _ = try database.upsertStation(
          StationUpsert(
            address: address, base: String(address.prefix(6)), ssid: index % 15 + 1, platform: nil,
            pushToken: nil, ackMessages: false, isRegistration: true), now: now)
      }
    }
    let since = try database.messageActivity(after: .max).newestTimestamp

    // Hold them all.
    let polls = HeldHTTPRequests(port: port)
    var indexOf: [Int: Int] = [:]  // request → station
    var requestOf: [Int: Int] = [:]  // station → request
    var sinceOf: [Int: Int64] = [:]  // station → its cursor, once it got a message
    let opening = HeldHTTPRequests.now()
    for index in 0..<count {
      let request = try polls.send("/v1/sync", json: body(index, since: since))
      indexOf[request] = index
      requestOf[index] = request
    }
    var parked = 0
    let heldBy = HeldHTTPRequests.now() + 120_000_000
    while HeldHTTPRequests.now() < heldBy {
      parked = parkedGauge(metricsPort) ?? 0
      if parked >= count { break }
      polls.collect(timeoutMs: 50) { false }
    }
    let opened = Double(HeldHTTPRequests.now() - opening) / 1e6
    guard parked >= count, polls.answers.isEmpty else {
      printError("longpoll: only \(parked) of \(count) held; \(polls.answers.count) answered early")
      return 1
    }
    let (rss, peak) = memory(pid)
    print(
      "held \(count) long polls at once through nginx (opened in \(fixed(opened, decimals: 1)) s):"
        + " responder resident memory \(rss / 1024) MB (peak \(peak / 1024) MB; goal: at most 64 MB)")
    fflush(nil)

    // Wake-ups: commit → answer.
    var latencies: [Int64] = []
    var generator = SystemRandomNumberGenerator()
    for wake in 0..<wakes {
      var pause = timespec(tv_sec: 0, tv_nsec: Int.random(in: 1_000_000..<25_000_000, using: &generator))
      nanosleep(&pause, nil)
      let index = Int.random(in: 0..<count, using: &generator)
      guard let request = requestOf[index] else { continue }
      let message = IncomingMessage(
        station: station(index), direction: .received, peer: "W1AW", text: "wake \(wake)", msgno: nil,
        dedupKey: "longpoll|\(wake)", dedupWindowMs: 1000)
      _ = try database.storeMessages([message], now: epochMilliseconds())
      let committed = HeldHTTPRequests.now()
      polls.collect(only: [request], timeoutMs: 5_000) { polls.answers[request] != nil }
      guard let answer = polls.answers[request], answer.status == 200 else {
        printError("longpoll: wake \(wake) of \(station(index)) not answered")
        return 1
      }
      latencies.append(answer.answeredAt - committed)
      indexOf[request] = nil
      sinceOf[index] = try database.messageActivity(after: .max).newestTimestamp
      let again = try polls.send("/v1/sync", json: body(index, since: sinceOf[index] ?? since))
      indexOf[again] = index
      requestOf[index] = again
    }
    latencies.sort()
    func percentile(_ p: Double) -> String {
      guard !latencies.isEmpty else { return "-" }
      let value = latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
      return fixed(Double(value) / 1000, decimals: 1) + " ms"
    }
    print(
      "wake latency, listener commit to answer at the client (\(latencies.count) wakes among \(count) held):"
        + " p50 \(percentile(0.5)), p99 \(percentile(0.99)), max \(percentile(1.0)) (goal: p99 within 100 ms)"
    )
    fflush(nil)

    // Hold on while the caller loads the server.
    let file = fopen(ready, "w")
    if let file { fclose(file) }
    while true {
      let answered = polls.answers.count
      polls.collect(timeoutMs: 1000) { polls.answers.count > answered }
      for (request, _) in polls.answers where indexOf[request] != nil {
        let index = indexOf.removeValue(forKey: request)!
        let again = try polls.send("/v1/sync", json: body(index, since: sinceOf[index] ?? since))
        indexOf[again] = index
        requestOf[index] = again
      }
    }
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

  /// VmRSS and VmHWM of `pid`, in kB.
  static func memory(_ pid: Int) -> (Int, Int) {
    guard let status = readFile("/proc/\(pid)/status") else { return (0, 0) }
    var rss = 0
    var peak = 0
    for line in String(decoding: status, as: UTF8.self).split(separator: "\n") {
      let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
      if fields.first == "VmRSS:", fields.count > 1 { rss = Int(fields[1]) ?? 0 }
      if fields.first == "VmHWM:", fields.count > 1 { peak = Int(fields[1]) ?? 0 }
    }
    return (rss, peak)
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
