import Platform
import Store
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// `idle DB PORT METRICS_PORT COUNT SECONDS WAKES NAME=PID[,PID…]…`: how often each process wakes while COUNT long
/// polls are held and nothing else happens (`Tests/bench/idle` starts nginx, the responder and the listener on DB).
///
/// Holds one `/v1/sync` with `wait:300` through nginx at 127.0.0.1:PORT for each of the stations `BN0000-1` …
/// (registered in DB beforehand, as `make_listener_corpus.py` writes them) until the parked gauge (METRICS_PORT)
/// shows them all, lets 5 s pass, then sums every thread's context switches (`voluntary_ctxt_switches` +
/// `nonvoluntary_ctxt_switches` of `/proc/PID/task/*/status`) of each named process (its PIDs summed, e.g. nginx's
/// master and workers) before and after SECONDS with no request at all, and prints them per minute with the threads
/// that woke. With COUNT held and WAKES above 0 it then times WAKES wake-ups as `longpoll` does (a message stored
/// through its own connection, which wakes long polls as the listener's does, until the answer at the client).
enum IdleBench: Benchmark {
  static let name = "idle"
  static let usage =
    "idle DB PORT METRICS_PORT COUNT SECONDS WAKES NAME=PID[,PID…]…   wake-ups per minute with COUNT long polls held"

  /// The budget the issue sets for each process, wake-ups a minute.
  static let budgetPerMinute = 60.0

  static func run(_ arguments: [String]) -> Int32 {
    guard arguments.count >= 7, let port = Int(arguments[1]), let metricsPort = Int(arguments[2]),
      let count = Int(arguments[3]), count >= 0, let seconds = Int(arguments[4]), seconds > 0,
      let wakes = Int(arguments[5]), let processes = parseProcesses(Array(arguments[6...]))
    else {
      printError("usage: aprs-cloud-bench \(usage)")
      return 2
    }
    do {
      return try bench(
        path: arguments[0], port: port, metricsPort: metricsPort, count: count, seconds: seconds,
        wakes: wakes,
        processes: processes)
    } catch {
      printError("idle: \(error)")
      return 1
    }
  }

  /// `NAME=PID[,PID…]` arguments, in order; nil when one is not of that form.
  static func parseProcesses(_ arguments: [String]) -> [(name: String, pids: [Int])]? {
    var processes: [(name: String, pids: [Int])] = []
    for argument in arguments {
      let parts = argument.split(separator: "=", maxSplits: 1)
      guard parts.count == 2 else { return nil }
      let pids = parts[1].split(separator: ",").compactMap { Int($0) }
      guard !pids.isEmpty else { return nil }
      processes.append((String(parts[0]), pids))
    }
    return processes
  }

  /// The station of long poll `index`, as `make_listener_corpus.py` registers it.
  static func station(_ index: Int) -> String {
    "BN" + String(index + 10_000).dropFirst() + "-\(index % 15 + 1)"
  }

  static func bench(
    path: String, port: Int, metricsPort: Int, count: Int, seconds: Int, wakes: Int,
    processes: [(name: String, pids: [Int])]
  ) throws -> Int32 {
    var options = StoreOptions()
    options.commitNotice = .wakingLongPolls(of: path)
    let database = try Database(path: path, options: options)
    defer { database.close() }
    let polls = HeldLongPolls(
      port: port, stations: (0..<count).map(station),
      since: try database.messageActivity(after: .max).newestTimestamp)
    if count > 0 {
      guard let opened = try polls.hold(metricsPort: metricsPort) else { return 1 }
      print("held \(count) long polls through nginx (opened in \(fixed(opened, decimals: 1)) s)")
    }
    fflush(nil)
    var answered = try polls.idle(milliseconds: 5_000)
    let before = processes.map { threadSwitches($0.pids) }
    let start = HeldHTTPRequests.now()
    answered += try polls.idle(milliseconds: Int64(seconds) * 1000)
    let window = Double(HeldHTTPRequests.now() - start) / 1e6
    let after = processes.map { threadSwitches($0.pids) }
    print(
      "idle for \(fixed(window, decimals: 1)) s with \(count) long polls held (\(answered) answered meanwhile),"
        + " no traffic; wake-ups (context switches of every thread), scaled to a minute:")
    var over: [String] = []
    for (position, process) in processes.enumerated() {
      var woke: [(String, Int)] = []
      for (thread, switches) in after[position] {
        let delta = switches.count - (before[position][thread]?.count ?? 0)
        if delta > 0 { woke.append((switches.name, delta)) }
      }
      let total = woke.reduce(0) { $0 + $1.1 }
      let perMinute = Double(total) * 60 / window
      if process.name != "nginx" && perMinute > budgetPerMinute { over.append(process.name) }
      let threads = woke.sorted { $0.1 > $1.1 }.prefix(8).map { "\($0.0) \($0.1)" }.joined(separator: ", ")
      print(
        "  \(process.name): \(total) in \(fixed(window, decimals: 1)) s = \(fixed(perMinute, decimals: 1))/min"
          + (threads.isEmpty ? "" : " (\(threads))"))
    }
    print(
      "  goal: at most \(Int(budgetPerMinute)) a minute for the responder and the listener"
        + (over.isEmpty ? ": met" : "; over it: " + over.joined(separator: ", ")))
    fflush(nil)
    guard count > 0, wakes > 0 else { return 0 }
    guard let latencies = try polls.timeWakes(wakes, database: database) else { return 1 }
    print(
      "wake latency with \(count) held, commit to answer at the client (\(latencies.count) wakes):"
        + " \(HeldLongPolls.percentiles(latencies)) (goal: p99 within 50 ms)")
    fflush(nil)
    return 0
  }

  /// Every thread of `pids`, by "PID/TID": its name and context switches so far.
  static func threadSwitches(_ pids: [Int]) -> [String: (name: String, count: Int)] {
    var result: [String: (name: String, count: Int)] = [:]
    for pid in pids {
      guard let directory = opendir("/proc/\(pid)/task") else { continue }
      defer { closedir(directory) }
      while let entry = readdir(directory) {
        let tid = withUnsafeBytes(of: entry.pointee.d_name) {
          String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard Int(tid) != nil, let status = readFile("/proc/\(pid)/task/\(tid)/status") else { continue }
        var name = "?"
        var count = 0
        for line in String(decoding: status, as: UTF8.self).split(separator: "\n") {
          let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
          guard fields.count > 1 else { continue }
          if fields[0] == "Name:" { name = String(fields[1]) }
          if fields[0] == "voluntary_ctxt_switches:" || fields[0] == "nonvoluntary_ctxt_switches:" {
            count += Int(fields[1]) ?? 0
          }
        }
        result["\(pid)/\(tid)"] = (name, count)
      }
    }
    return result
  }
}
