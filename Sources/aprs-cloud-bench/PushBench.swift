// Drop-in for Sources/aprs-cloud-bench/ once that target depends on "Push" (see Tests/bench/run).
import Config
import Logging
import Platform
import Push
import Store

#if canImport(Glibc)
  import Glibc
#endif

/// `push CREDENTIALS_DIR PORT [COUNT] [SAMPLES]`: the push sender against the providers on PORT
/// (`Tests/bench/push` starts `Tests/bench/push_sink.c`, which answers at once so the numbers are
/// the sender's own, then `Tests/fakes/push_fake.mjs` for comparison), with the credentials in
/// CREDENTIALS_DIR (whose `service-account.json` names the token endpoint).
///
/// 1. Throughput: COUNT stations with one device each get one message each in one transaction; the
///    time from the notify until every outbox row is done (provider answered, row deleted) gives
///    pushes/s over one HTTP/2 connection: FCM (`127.0.0.1`), then APNs (`localhost`).
/// 2. Latency with a coalescing window of 0: SAMPLES single messages, 20 ms apart, each to a fresh
///    station; the time from `storeMessages` returning to the outbox row being done. Each message's
///    text carries its write time (epoch µs) so the script can also measure write → arrival at the
///    provider from the provider's records (the sink logs arrivals in µs).
/// 3. Resident memory of this process (the sender, its database connection, libcurl, OpenSSL).
enum PushBench: Benchmark {
  static let name = "push"
  static let usage =
    "push CREDENTIALS_DIR PORT [COUNT] [SAMPLES]   push sender throughput and latency vs a provider"

  static func run(_ arguments: [String]) -> Int32 {
    guard (2...4).contains(arguments.count), let port = Int(arguments[1]),
      let count = arguments.count > 2 ? Int(arguments[2]) : 5000,
      let samples = arguments.count > 3 ? Int(arguments[3]) : 200, count > 0, samples > 0
    else {
      printError("usage: aprs-cloud-bench \(usage)")
      return 2
    }
    let directory = arguments[0]
    do {
      return try measure(directory: directory, port: port, count: count, samples: samples)
    } catch {
      printError("push: \(error)")
      return 1
    }
  }

  static func now() -> Int64 { epochMilliseconds() }

  static func microseconds() -> Int64 { clockMicroseconds(CLOCK_REALTIME) }

  static func measure(directory: String, port: Int, count: Int, samples: Int) throws -> Int32 {
    let path = directory + "/push-bench.sqlite"
    unlink(path)
    let database = try Database(path: path)
    defer { database.close() }
    _ = try database.migrate()
    var push = PushConfig()
    push.coalesceWindowMs = 0
    push.android = PushConfig.Android(
      serviceAccountFile: directory + "/service-account.json", endpoint: "https://127.0.0.1:\(port)",
      caFile: directory + "/ca.pem")
    push.ios = PushConfig.IOS(
      keyFile: directory + "/AuthKey_TESTKEY123.p8", keyId: "TESTKEY123", teamId: "TEAM123456",
      bundleId: "org.example.htcommander", endpoint: "https://localhost:\(port)",
      caFile: directory + "/ca.pem")
    push.androidOff = nil
    push.iosOff = nil
    let service = PushService(
      options: PushServiceOptions(databasePath: path, push: push, logger: Logger(level: .error)))
    PushService.globalInit()
    try service.start()
    defer { service.stop() }

    func register(_ station: String, platform: DevicePlatform) throws {
      let token = platform == .ios ? hexToken(station) : "bench:" + station
      _ = try database.upsertStation(
        StationUpsert(
          address: station, base: station, ssid: 0, platform: platform, pushToken: token, ackMessages: false,
          isRegistration: true), now: now())
    }
    func store(_ stations: [String], text: (String) -> String) throws {
      let batch = stations.map { station in
        IncomingMessage(
          station: station, peer: "KJ7ABC-7", text: text(station), msgno: "1",
          dedupKey: "bench|\(station)|\(microseconds())", dedupWindowMs: 3_600_000)
      }
      _ = try database.storeMessages(batch, now: now())
      service.notify()
    }
    func waitForEmptyOutbox(timeoutMs: Int64 = 120_000) throws -> Bool {
      let deadline = now() + timeoutMs
      while now() < deadline {
        if try database.dueOutbox(now: .max, limit: 1).isEmpty { return true }
        usleep(500)
      }
      return false
    }

    // Warm-up: connections, TLS, the FCM access token and the APNs provider token.
    for platform in DevicePlatform.allCases {
      try register("WARM" + platform.rawValue.uppercased(), platform: platform)
    }
    try store(["WARMANDROID", "WARMIOS"]) { _ in "warm-up" }
    guard try waitForEmptyOutbox(timeoutMs: 20_000) else {
      printError("push: the warm-up push did not go out (is the fake running on port \(port)?)")
      return 1
    }

    for (label, platform, prefix) in [("FCM", DevicePlatform.android, "F"), ("APNs", .ios, "A")] {
      let stations = (0..<count).map { "\(prefix)\($0)" }
      for station in stations { try register(station, platform: platform) }
      let clock = ContinuousClock()
      let start = clock.now
      let cpuBefore = clockMicroseconds(CLOCK_PROCESS_CPUTIME_ID) - clockMicroseconds(CLOCK_THREAD_CPUTIME_ID)
      try store(stations) { _ in "Throughput test message, a typical APRS length text." }
      guard try waitForEmptyOutbox() else {
        printError("push: \(label) throughput run did not finish")
        return 1
      }
      let elapsed = seconds(start.duration(to: clock.now))
      let cpu =
        Double(
          clockMicroseconds(CLOCK_PROCESS_CPUTIME_ID) - clockMicroseconds(CLOCK_THREAD_CPUTIME_ID) - cpuBefore
        )
        / Double(count)
      print(
        "push \(label) throughput: \(count) pushes in \(fixed(elapsed, decimals: 3)) s = "
          + "\(Int((Double(count) / elapsed).rounded())) pushes/s; push thread CPU \(fixed(cpu, decimals: 1)) µs per push"
      )
    }

    var latencies: [Double] = []
    for index in 0..<samples {
      let station = "L\(index)"
      try register(station, platform: .android)
      let written = microseconds()
      try store([station]) { _ in "lat \(written)" }
      let stored = microseconds()
      guard try waitForEmptyOutbox(timeoutMs: 10_000) else {
        printError("push: latency sample \(index) did not go out")
        return 1
      }
      latencies.append(Double(microseconds() - stored) / 1000)
      usleep(20_000)
    }
    latencies.sort()
    let p50 = latencies[latencies.count / 2]
    let p99 = latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))]
    print(
      "push latency, window 0, outbox write -> provider answered and row done: p50 \(fixed(p50, decimals: 2)) ms, "
        + "p99 \(fixed(p99, decimals: 2)) ms (\(samples) samples)")
    print("push sender process memory: \(status("VmRSS")) resident, \(status("VmHWM")) peak")
    return 0
  }

  /// A 64-digit hex APNs token made from a station name.
  static func hexToken(_ station: String) -> String {
    var hash: UInt64 = 1_469_598_103_934_665_603
    for byte in station.utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
    let hex = String(hash, radix: 16)
    return String(repeating: "0", count: 64 - hex.count) + hex
  }

  /// A line of /proc/self/status, e.g. `VmRSS` → `12345 kB`.
  static func status(_ key: String) -> String {
    guard let bytes = readFile("/proc/self/status") else { return "?" }
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix(key + ":")
    {
      return String(line.dropFirst(key.count + 1).drop { $0 == " " || $0 == "\t" })
    }
    return "?"
  }
}
