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

  static func bench(
    path: String, port: Int, metricsPort: Int, pid: Int, count: Int, wakes: Int, ready: String
  ) throws -> Int32 {
    // Its commits wake the held long polls, as the listener's do.
    var options = StoreOptions()
    options.commitNotice = .wakingLongPolls(of: path)
    let database = try Database(path: path, options: options)
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
    let polls = HeldLongPolls(
      port: port, stations: (0..<count).map(station),
      since: try database.messageActivity(after: .max).newestTimestamp)
    guard let opened = try polls.hold(metricsPort: metricsPort) else { return 1 }
    let (rss, peak) = memory(pid)
    print(
      "held \(count) long polls at once through nginx (opened in \(fixed(opened, decimals: 1)) s):"
        + " responder resident memory \(rss / 1024) MB (peak \(peak / 1024) MB; goal: at most 64 MB)")
    fflush(nil)

    guard let latencies = try polls.timeWakes(wakes, database: database) else { return 1 }
    print(
      "wake latency, listener commit to answer at the client (\(latencies.count) wakes among \(count) held):"
        + " \(HeldLongPolls.percentiles(latencies)) (goal: p99 within 100 ms)")
    fflush(nil)

    // Hold on while the caller loads the server.
    let file = fopen(ready, "w")
    if let file { fclose(file) }
    while true { try polls.keepHeld(timeoutMs: 1000) }
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
}
